/** `_cleveragents/audit/*`: who changed what in a namespace. */
import type { Page, PageParams } from './common.js';

/** `audit/list`: one namespace's audit records, newest first. */
export interface ListAuditParams extends PageParams {
  namespace: string;
  /** Only this action, e.g. `apikey.create`. */
  action?: string;
  /** Only what this subject did, e.g. `oidc:alice`. */
  actor?: string;
  /** Only records at or after this instant (ISO 8601). */
  since?: string;
  /** Only records before this instant (ISO 8601); after `since` when both are given. */
  until?: string;
}

/** One audit record. */
export interface AuditRecord {
  id: string;
  at: string;
  namespace: string;
  /** The acting subject. */
  actor: string;
  /** `namespace.create`, `member.set`, `apikey.revoke`, `plan.approve`… */
  action: string;
  target: string;
  /** What changed; never a secret. */
  details: Record<string, unknown>;
  requestId: string | null;
}

export type AuditPage = Page<AuditRecord>;
