/** `_cleveragents/sync/*`: a client's offline copy of a namespace's registry. */
import { z } from 'zod';
import { NamespaceParam } from './common.js';
import {
  EntrySpec,
  isRegistryKind,
  LabelMap,
  RegistryEntry,
  RegistryKind,
  RegistryName,
  WholeNumber,
  withSpecOfKind,
} from './registry.js';

export const CHANGE_OPS = ['upsert', 'delete'] as const;
export const ChangeOp = z.enum(CHANGE_OPS, { error: 'op must be upsert or delete' });
export type ChangeOp = z.infer<typeof ChangeOp>;

export const DEFAULT_PULL_LIMIT = 100;
export const MAX_PULL_LIMIT = 1000;
export const MAX_PUSH_CHANGES = 500;

/** A change-log position: 0 before the first change. */
const Seq = z.int().min(0);

/** `sync/pull`: the changes after `cursor` (0, or the last pull's cursor). */
export const PullParams = z.strictObject({
  ...NamespaceParam.shape,
  cursor: WholeNumber.min(0).nullish(),
  /** 1–1000, 100 when absent. */
  limit: WholeNumber.min(1).max(MAX_PULL_LIMIT).nullish(),
});
export type PullParams = z.infer<typeof PullParams>;

/** One change of a pull; `entity` is the entry after it (absent for a delete: a tombstone). */
export const SyncChange = z.object({
  seq: Seq,
  kind: RegistryKind,
  name: z.string(),
  op: ChangeOp,
  revision: z.int().min(0),
  entity: RegistryEntry.optional(),
});
export type SyncChange = z.infer<typeof SyncChange>;

export const PullResult = z.object({
  changes: z.array(SyncChange),
  /** The seq of the last change handed out (the cursor given when none): pass it to the next pull. */
  cursor: Seq,
  hasMore: z.boolean(),
});
export type PullResult = z.infer<typeof PullResult>;

const NOT_FOR_DELETE = 'is not taken by a delete';

/**
 * One change made offline: the entry's full new state (`upsert`, its spec checked as its kind's) or its
 * removal, and the revision it was made from: 0 or absent for a create, at least 1 for a delete.
 */
export const PushChange = withSpecOfKind(
  z
    .strictObject({
      kind: RegistryKind,
      name: RegistryName,
      op: ChangeOp,
      /** 0 or absent: the entry did not exist where the change was made. */
      baseRevision: WholeNumber.min(0).optional(),
      spec: EntrySpec.optional(),
      labels: LabelMap.nullish(),
    })
    .superRefine(
      (change, ctx) => {
        if (change.op !== 'delete') return;
        const base: unknown = change.baseRevision;
        if (!Number.isInteger(base) || (base as number) < 1) {
          ctx.addIssue({
            code: 'custom',
            path: ['baseRevision'],
            message: 'baseRevision must be the revision the delete was made from (an integer, 1 or more)',
          });
        }
        if (change.spec !== undefined && isRegistryKind(change.kind)) {
          ctx.addIssue({ code: 'custom', path: ['spec'], message: `spec ${NOT_FOR_DELETE}` });
        }
        if (change.labels != null) {
          ctx.addIssue({ code: 'custom', path: ['labels'], message: `labels ${NOT_FOR_DELETE}` });
        }
      },
      { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
    ),
  // A delete's spec is checked too when one is given, so that it can be refused.
  (change) => change.op !== 'delete' || change.spec !== undefined,
);
export type PushChange = z.infer<typeof PushChange>;

/** `sync/push`: changes applied in order; `atomic` applies all of them or none. */
export const PushParams = z.strictObject({
  ...NamespaceParam.shape,
  changes: z.array(PushChange).min(1).max(MAX_PUSH_CHANGES),
  atomic: z.boolean().nullish(),
});
export type PushParams = z.infer<typeof PushParams>;

export const AppliedChange = z.object({
  index: z.int().min(0),
  kind: RegistryKind,
  name: z.string(),
  op: ChangeOp,
  revision: Seq,
  seq: Seq,
});
export type AppliedChange = z.infer<typeof AppliedChange>;

/** A change not applied because the entry moved on: the server's revision (0: none) and entity, if live. */
export const SyncConflict = z.object({
  index: z.int().min(0),
  kind: RegistryKind,
  name: z.string(),
  op: ChangeOp,
  baseRevision: z.int().min(0),
  currentRevision: z.int().min(0),
  reason: z.enum(['ALREADY_EXISTS', 'STALE_REVISION', 'NOT_FOUND']),
  entity: RegistryEntry.optional(),
});
export type SyncConflict = z.infer<typeof SyncConflict>;

export const PushResult = z.object({ applied: z.array(AppliedChange), conflicts: z.array(SyncConflict) });
export type PushResult = z.infer<typeof PushResult>;

/** `sync/status`. */
export const SyncStatusParams = NamespaceParam;
export type SyncStatusParams = z.infer<typeof SyncStatusParams>;

const EntryCount = z.int().min(0);

export const SyncStatus = z.object({
  namespace: z.string(),
  /** The seq of the newest change (0 for none): a client whose cursor is this has everything. */
  latestSeq: Seq,
  /** Live entries per kind, and in all. */
  counts: z.object({
    actor: EntryCount,
    tool: EntryCount,
    skill: EntryCount,
    profile: EntryCount,
    total: EntryCount,
  }),
});
export type SyncStatus = z.infer<typeof SyncStatus>;
