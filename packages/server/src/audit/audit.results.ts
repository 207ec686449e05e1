import type { AuditRecord } from '@cleveragents/contract';
import { anyObject, instant, nullable, object, page, string, type Schema } from '../rpc/schemas/json-schema.js';

/** The published shape of `_cleveragents/audit/*` results. */
export const auditRecordSchema: Schema<AuditRecord> = object({
  id: string(),
  at: instant(),
  namespace: string(),
  actor: string(),
  action: string(),
  target: string(),
  details: anyObject(),
  requestId: nullable(string()),
});

export const auditPageSchema = page(auditRecordSchema);
