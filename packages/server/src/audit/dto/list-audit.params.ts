import type { ListAuditParams as ListAuditParamsContract } from '@cleveragents/contract';
import { IsISO8601, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageParams } from '../../common/paging.js';
import { IsNamespaceSlug } from '../../common/namespace-slug.js';

/** `_cleveragents/audit/list`: one namespace's audit records, newest first. */
export class ListAuditParams extends PageParams implements ListAuditParamsContract {
  @IsNamespaceSlug()
  namespace: string;

  /** Only this action, e.g. `apikey.create`. */
  @IsOptional()
  @IsString()
  @Matches(/^[a-z][a-zA-Z]*\.[a-z][a-zA-Z]*$/, { message: 'action must look like "namespace.create"' })
  action?: string;

  /** Only what this subject did, e.g. `oidc:alice`. */
  @IsOptional()
  @IsString()
  @MaxLength(300)
  actor?: string;

  /** Only records at or after this instant. */
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'since must be an ISO 8601 instant such as 2026-12-01T00:00:00Z' })
  since?: string;

  /** Only records before this instant. */
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'until must be an ISO 8601 instant such as 2026-12-02T00:00:00Z' })
  until?: string;
}
