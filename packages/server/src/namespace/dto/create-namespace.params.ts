import type { CreateNamespaceParams as CreateNamespaceParamsContract } from '@cleveragents/contract';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { IsNamespaceSlug } from '../../common/namespace-slug.js';
import { MAX_DESCRIPTION_LENGTH, MAX_DISPLAY_NAME_LENGTH } from '../namespace.service.js';

/** `_cleveragents/namespace/create`: the parent (`acme` for `acme/platform`) must exist. */
export class CreateNamespaceParams implements CreateNamespaceParamsContract {
  @IsNamespaceSlug()
  namespace: string;

  /** Defaults to the last level of the slug. */
  @IsOptional()
  @IsString()
  @MaxLength(MAX_DISPLAY_NAME_LENGTH)
  @Matches(/\S/, { message: 'displayName must not be blank' })
  displayName?: string;

  @IsOptional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION_LENGTH)
  description?: string;
}
