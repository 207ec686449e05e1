import type { RemoveMemberParams as RemoveMemberParamsContract } from '@cleveragents/contract';
import { IsString, Matches, MaxLength } from 'class-validator';
import { IsNamespaceSlug } from '../../common/namespace-slug.js';
import { MAX_SUBJECT_LENGTH, SUBJECT_PATTERN, SUBJECT_RULE } from '../namespace-members.service.js';

/** `_cleveragents/namespace/members/remove`. */
export class RemoveMemberParams implements RemoveMemberParamsContract {
  @IsNamespaceSlug()
  namespace: string;

  @IsString()
  @MaxLength(MAX_SUBJECT_LENGTH)
  @Matches(SUBJECT_PATTERN, { message: SUBJECT_RULE })
  subject: string;
}
