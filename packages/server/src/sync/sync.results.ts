import { REGISTRY_KINDS } from '@cleveragents/contract';
import type { PullResult, PushResult, SyncStatus } from '@cleveragents/contract';
import { registryEntrySchema } from '../registry/registry.results.js';
import { array, boolean, integer, object, oneOf, optional, string, type Schema } from '../rpc/schemas/json-schema.js';

/** The published shape of `_cleveragents/sync/*` results. */
const kind = () => oneOf(REGISTRY_KINDS);
const op = () => oneOf(['upsert', 'delete'] as const);
const seq = () => integer({ minimum: 0 });

export const pullResultSchema: Schema<PullResult> = object({
  changes: array(
    object({
      seq: seq(),
      kind: kind(),
      name: string(),
      op: op(),
      revision: integer({ minimum: 0 }),
      entity: optional(registryEntrySchema),
    }),
  ),
  cursor: seq(),
  hasMore: boolean(),
});

export const pushResultSchema: Schema<PushResult> = object({
  applied: array(
    object({ index: integer({ minimum: 0 }), kind: kind(), name: string(), op: op(), revision: seq(), seq: seq() }),
  ),
  conflicts: array(
    object({
      index: integer({ minimum: 0 }),
      kind: kind(),
      name: string(),
      op: op(),
      baseRevision: integer({ minimum: 0 }),
      currentRevision: integer({ minimum: 0 }),
      reason: oneOf(['ALREADY_EXISTS', 'STALE_REVISION', 'NOT_FOUND'] as const),
      entity: optional(registryEntrySchema),
    }),
  ),
});

const entryCount = () => integer({ minimum: 0 });

export const syncStatusSchema: Schema<SyncStatus> = object({
  namespace: string(),
  latestSeq: seq(),
  counts: object({
    actor: entryCount(),
    tool: entryCount(),
    skill: entryCount(),
    profile: entryCount(),
    total: entryCount(),
  }),
});
