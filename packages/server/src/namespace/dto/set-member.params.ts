import type { SetMemberParams as SetMemberParamsContract } from '@cleveragents/contract';
import { IsIn, IsInt, IsOptional, IsString, Matches, MaxLength, Min } from 'class-validator';
import { ROLES, type Role } from '../../common/principal.js';
import { IsNamespaceSlug } from '../../common/namespace-slug.js';
import { MAX_SUBJECT_LENGTH, SUBJECT_PATTERN, SUBJECT_RULE } from '../namespace-members.service.js';

/** `_cleveragents/namespace/members/set`: grants or changes a subject's role. */
export class SetMemberParams implements SetMemberParamsContract {
  @IsNamespaceSlug()
  namespace: string;

  @IsString()
  @MaxLength(MAX_SUBJECT_LENGTH)
  @Matches(SUBJECT_PATTERN, { message: SUBJECT_RULE })
  subject: string;

  @IsIn(ROLES, { message: `role must be one of ${ROLES.join(', ')}` })
  role: Role;

  /** The member's revision as last read; 0 to add only a subject that is not a member yet. */
  @IsOptional()
  @IsInt()
  @Min(0)
  expectedRevision?: number;
}
