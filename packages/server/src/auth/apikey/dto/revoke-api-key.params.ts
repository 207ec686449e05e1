import type { RevokeApiKeyParams as RevokeApiKeyParamsContract } from '@cleveragents/contract';
import { IsOptional, Matches } from 'class-validator';
import { IsNamespaceSlug } from '../../../common/namespace-slug.js';

/** `_cleveragents/auth/apikey/revoke`. */
export class RevokeApiKeyParams implements RevokeApiKeyParamsContract {
  /** Absent: the caller's default namespace. */
  @IsOptional()
  @IsNamespaceSlug()
  namespace?: string;

  /** The key's id (a ULID, as list shows it). */
  @Matches(/^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$/, { message: 'id must be an API key id (a ULID)' })
  id: string;
}
