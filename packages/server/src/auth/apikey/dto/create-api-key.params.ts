import type { CreateApiKeyParams as CreateApiKeyParamsContract } from '@cleveragents/contract';
import { IsIn, IsISO8601, IsOptional, IsString, Matches } from 'class-validator';
import { ROLES, type Role } from '../../../common/principal.js';
import { IsNamespaceSlug } from '../../../common/namespace-slug.js';
import { API_KEY_NAME_PATTERN, API_KEY_NAME_RULE } from '../api-key.service.js';

/** `_cleveragents/auth/apikey/create`. */
export class CreateApiKeyParams implements CreateApiKeyParamsContract {
  /** Absent: the caller's default namespace. */
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;

  @IsString()
  @Matches(API_KEY_NAME_PATTERN, { message: API_KEY_NAME_RULE })
  name: string;

  /** No stronger than the caller's own role in the namespace. */
  @IsIn(ROLES, { message: `role must be one of ${ROLES.join(', ')}` })
  role: Role;

  /** An ISO 8601 instant in the future; absent for a key that does not expire. */
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'expiresAt must be an ISO 8601 instant such as 2030-01-31T00:00:00Z' })
  expiresAt?: string;
}
