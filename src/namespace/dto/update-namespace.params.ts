import { IsInt, IsOptional, IsString, Matches, MaxLength, Min } from 'class-validator';
import { IsNamespaceSlug } from '../namespace-slug.js';
import { MAX_DESCRIPTION_LENGTH, MAX_DISPLAY_NAME_LENGTH } from '../namespace.service.js';

/** `_cleveragents/namespace/update`: displayName and/or description; the slug never changes. */
export class UpdateNamespaceParams {
  @IsNamespaceSlug()
  namespace: string;

  @IsOptional()
  @IsString()
  @MaxLength(MAX_DISPLAY_NAME_LENGTH)
  @Matches(/\S/, { message: 'displayName must not be blank' })
  displayName?: string;

  @IsOptional()
  @IsString()
  @MaxLength(MAX_DESCRIPTION_LENGTH)
  description?: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  expectedRevision?: number;
}
