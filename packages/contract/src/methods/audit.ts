/** `_cleveragents/audit/*`: who changed what in a namespace. */
import { z } from 'zod';
import { ISO_8601_INSTANT, Instant, iso8601Instant, NamespaceSlug, PageParams, page, type Page } from './common.js';

/** An audited action: `namespace.create`, `member.set`, `apikey.revoke`, `plan.approve`… */
export const AUDIT_ACTION_PATTERN = /^[a-z][a-zA-Z]*\.[a-z][a-zA-Z]*$/;
export const MAX_AUDIT_ACTOR_LENGTH = 300;
export const MAX_AUDIT_TARGET_LENGTH = 300;

/** `audit/list`: one namespace's audit records, newest first; `null` for an optional param is as if absent. */
export const ListAuditParams = PageParams.extend({
  namespace: NamespaceSlug,
  /** Only this action, e.g. `apikey.create`. */
  action: z
    .string()
    .regex(AUDIT_ACTION_PATTERN, { error: 'action must look like "namespace.create"' })
    .nullable()
    .optional(),
  /** Only what this subject did, e.g. `oidc:alice`. */
  actor: z.string().max(MAX_AUDIT_ACTOR_LENGTH).nullable().optional(),
  /** Only records about this target: a namespace slug, a member subject, a key id, an approval id. */
  target: z.string().max(MAX_AUDIT_TARGET_LENGTH).nullable().optional(),
  /** Only records at or after this instant (ISO 8601; a bare date is midnight UTC). */
  since: iso8601Instant('since must be an ISO 8601 instant such as 2026-12-01T00:00:00Z')
    .nullable()
    .optional()
    .meta({ description: ISO_8601_INSTANT }),
  /** Only records before this instant (ISO 8601); after `since` when both are given. */
  until: iso8601Instant('until must be an ISO 8601 instant such as 2026-12-02T00:00:00Z')
    .nullable()
    .optional()
    .meta({ description: ISO_8601_INSTANT }),
});
export type ListAuditParams = z.infer<typeof ListAuditParams>;

/** One audit record. */
export const AuditRecord = z.object({
  id: z.string(),
  at: Instant,
  namespace: z.string(),
  /** The acting subject. */
  actor: z.string(),
  /** `namespace.create`, `member.set`, `apikey.revoke`, `plan.approve`… */
  action: z.string(),
  target: z.string(),
  /** What changed; never a secret. */
  details: z.record(z.string(), z.unknown()),
  requestId: z.string().nullable(),
});
export type AuditRecord = z.infer<typeof AuditRecord>;

export const AuditPage = page(AuditRecord);
export type AuditPage = Page<AuditRecord>;
