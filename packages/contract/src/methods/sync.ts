/** `_cleveragents/sync/*`: a client's offline copy of a namespace's registry. */
import type { NamespaceParam } from './common.js';
import type { RegistryEntry, RegistryKind, RegistrySpec } from './registry.js';

export type ChangeOp = 'upsert' | 'delete';

/** `sync/pull`: the changes after `cursor` (0, or the last pull's cursor). */
export interface PullParams extends NamespaceParam {
  cursor?: number;
  /** 1–1000, 100 when absent. */
  limit?: number;
}

/** One change of a pull; `entity` is the entry after it (absent for a delete: a tombstone). */
export interface SyncChange {
  seq: number;
  kind: RegistryKind;
  name: string;
  op: ChangeOp;
  revision: number;
  entity?: RegistryEntry;
}

export interface PullResult {
  changes: SyncChange[];
  /** The seq of the last change handed out (the cursor given when none): pass it to the next pull. */
  cursor: number;
  hasMore: boolean;
}

/** One change made offline: the entry's full new state (`upsert`) or its removal, and the revision it was made from. */
export interface PushChange {
  kind: RegistryKind;
  name: string;
  op: ChangeOp;
  /** 0 or absent: the entry did not exist where the change was made. */
  baseRevision?: number;
  spec?: RegistrySpec;
  labels?: Record<string, string>;
}

/** `sync/push`: changes applied in order; `atomic` applies all of them or none. */
export interface PushParams extends NamespaceParam {
  changes: PushChange[];
  atomic?: boolean;
}

export interface AppliedChange {
  index: number;
  kind: RegistryKind;
  name: string;
  op: ChangeOp;
  revision: number;
  seq: number;
}

/** A change not applied because the entry moved on: the server's revision (0: none) and entity, if live. */
export interface SyncConflict {
  index: number;
  kind: RegistryKind;
  name: string;
  op: ChangeOp;
  baseRevision: number;
  currentRevision: number;
  reason: 'ALREADY_EXISTS' | 'STALE_REVISION' | 'NOT_FOUND';
  entity?: RegistryEntry;
}

export interface PushResult {
  applied: AppliedChange[];
  conflicts: SyncConflict[];
}

/** `sync/status`. */
export type SyncStatusParams = NamespaceParam;

export interface SyncStatus {
  namespace: string;
  /** The seq of the newest change (0 for none): a client whose cursor is this has everything. */
  latestSeq: number;
  /** Live entries per kind, and in all. */
  counts: Record<RegistryKind | 'total', number>;
}
