import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Acting } from '../common/actor.js';
import type {
  AppliedChange,
  PullResult,
  PushResult,
  SyncChange,
  SyncConflict,
  SyncStatus,
} from '@cleveragents/contract';
import { isNamespaceSlug } from '../common/namespace-slug.js';
import { REGISTRY_KINDS, type RegistryKind } from '../registry/registry.kinds.js';
import { ModelEndpointGuard } from '../execution/model-endpoint.guard.js';
import { requireActorWriter } from '../registry/actor-writer.rule.js';
import { plain, RegistryService, requireWriter } from '../registry/registry.service.js';
import { isLive, toEntry, type ChangeOp, type StoredEntry } from '../registry/registry-entry.js';
import { namespaceNotFound } from '../registry/registry.errors.js';
import { cursorAhead } from './sync.errors.js';
import { RegistryRepository } from '../registry/registry.repository.js';

/** What `sync/pull`, `sync/push` and `sync/status` answer: the contract's. */
export type { AppliedChange, PullResult, PushResult, SyncChange, SyncConflict, SyncStatus };

/** A change as the service takes it (from `sync/push`). */
export interface PushedChange {
  kind: RegistryKind;
  name: string;
  op: ChangeOp;
  /** 0 or absent: the entry did not exist where the change was made. */
  baseRevision?: number;
  spec?: object;
  labels?: Record<string, string>;
}

type Outcome = { applied: AppliedChange } | { conflict: SyncConflict };

/** Rolls an atomic push back when a change conflicts. */
class AtomicPushConflict extends Error {
  constructor(readonly conflict: SyncConflict) {
    super('atomic push conflict');
  }
}

/**
 * Offline-first sync of the registry (docs/protocol.md §6.3). `pull` reads the per-namespace change log in seq
 * order: a seq is taken under the namespace's sequence-row lock and committed before the next one is
 * taken, so a reader never sees seq n + 1 without n, and paging by seq never skips or repeats. `push`
 * applies changes under the same lock as registry writes; a change whose base revision is not the
 * server's current one is a conflict, never an overwrite.
 */
@Injectable()
export class SyncService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly registry: RegistryService,
    private readonly entries: RegistryRepository,
    private readonly modelEndpoints: ModelEndpointGuard,
  ) {}

  async pull(namespace: string, cursor: number, limit: number): Promise<PullResult> {
    const latest = await this.latestSeq(namespace);
    if (cursor > latest) {
      throw cursorAhead(cursor, latest);
    }
    const rows = await this.entries.changesAfter(namespace, cursor, limit + 1);
    const hasMore = rows.length > limit;
    const changes = rows.slice(0, limit).map((row) => ({
      seq: Number(row.seq),
      kind: row.kind,
      name: row.name,
      op: row.op,
      revision: row.revision,
      ...(row.entity ? { entity: row.entity } : {}),
    }));
    return { changes, cursor: changes.at(-1)?.seq ?? cursor, hasMore };
  }

  async status(namespace: string): Promise<SyncStatus> {
    const latestSeq = await this.latestSeq(namespace);
    const rows = await this.entries.liveCounts(namespace);
    const counts = Object.fromEntries([...REGISTRY_KINDS, 'total'].map((kind) => [kind, 0])) as SyncStatus['counts'];
    for (const row of rows) {
      counts[row.kind] = row.count;
      counts.total += row.count;
    }
    return { namespace, latestSeq, counts };
  }

  /**
   * Applies `changes` in order. Not atomic: each in a transaction of its own, every conflict reported.
   * Atomic: all in one transaction; the first conflict rolls everything back and is reported alone,
   * with the server's committed state.
   */
  async push(namespace: string, changes: PushedChange[], atomic: boolean, by: Acting): Promise<PushResult> {
    requireWriter(
      by,
      namespace,
      changes.map((change) => change.kind),
    );
    // Refused before anything is applied; apply() checks the actor rule again under the lock.
    for (const change of changes) {
      if (change.kind !== 'actor') continue;
      // The role before the endpoint: a member must not learn which hosts the operator admits.
      const stored = await this.entries.find(this.dataSource.manager, namespace, 'actor', change.name);
      requireActorWriter(by, namespace, change.name, liveSpec(stored), afterOf(change));
      if (change.op === 'upsert') await this.modelEndpoints.assertAdmitted(change.spec ?? {});
    }
    if (!atomic) {
      const result: PushResult = { applied: [], conflicts: [] };
      for (const [index, change] of changes.entries()) {
        const outcome = await this.dataSource.transaction(async (manager) => {
          await this.registry.lock(manager, namespace, by);
          return this.apply(manager, namespace, index, change, by);
        });
        if ('applied' in outcome) result.applied.push(outcome.applied);
        else result.conflicts.push(outcome.conflict);
      }
      return result;
    }
    try {
      const applied = await this.dataSource.transaction(async (manager) => {
        await this.registry.lock(manager, namespace, by);
        const done: AppliedChange[] = [];
        for (const [index, change] of changes.entries()) {
          const outcome = await this.apply(manager, namespace, index, change, by);
          if ('conflict' in outcome) throw new AtomicPushConflict(outcome.conflict);
          done.push(outcome.applied);
        }
        return done;
      });
      return { applied, conflicts: [] };
    } catch (error) {
      if (!(error instanceof AtomicPushConflict)) throw error;
      // What the server holds now, not what the rolled-back changes before it had made.
      const committed = await this.dataSource.transaction((manager) =>
        this.entries.find(manager, namespace, error.conflict.kind, error.conflict.name),
      );
      return { applied: [], conflicts: [{ ...error.conflict, ...currentOf(committed) }] };
    }
  }

  private async apply(
    manager: EntityManager,
    namespace: string,
    index: number,
    change: PushedChange,
    by: Acting,
  ): Promise<Outcome> {
    const current = await this.entries.find(manager, namespace, change.kind, change.name);
    const base = change.baseRevision ?? 0;
    const conflict = (reason: SyncConflict['reason']): Outcome => ({
      conflict: {
        index,
        kind: change.kind,
        name: change.name,
        op: change.op,
        baseRevision: base,
        reason,
        ...currentOf(current),
      },
    });
    const live = isLive(current);
    if (change.op === 'upsert' && base === 0 && live) return conflict('ALREADY_EXISTS');
    if ((change.op === 'delete' || base > 0) && !live) return conflict('NOT_FOUND');
    if (base > 0 && current!.revision !== base) return conflict('STALE_REVISION');

    if (change.kind === 'actor') {
      requireActorWriter(by, namespace, change.name, liveSpec(current), afterOf(change));
    }
    let row: StoredEntry;
    let action: 'create' | 'update' | 'delete';
    if (change.op === 'delete') {
      row = await this.entries.tombstone(manager, current!, by.actor.subject);
      action = 'delete';
    } else {
      const labels = change.labels ?? (live ? current.labels : {});
      const spec = this.registry.sealedSpec(
        namespace,
        change.kind,
        change.name,
        plain(change.spec ?? {}),
        liveSpec(current),
      );
      const content = { kind: change.kind, name: change.name, spec, labels };
      row = await this.entries.write(manager, namespace, current, content, by.actor.subject);
      action = live ? 'update' : 'create';
    }
    const seq = await this.registry.recordWrite(manager, row, action, by, 'sync');
    return {
      applied: { index, kind: row.kind, name: row.name, op: change.op, revision: row.revision, seq },
    };
  }

  /** The latest seq of an existing namespace (0 before any change); -32001 for one that does not exist. */
  private async latestSeq(namespace: string): Promise<number> {
    const latest = isNamespaceSlug(namespace) ? await this.entries.latestSeq(namespace) : undefined;
    if (latest === undefined) throw namespaceNotFound(namespace);
    return latest;
  }
}

function liveSpec(row: StoredEntry | undefined): Record<string, unknown> | undefined {
  return isLive(row) ? row.spec : undefined;
}

/** The spec a change leaves: none for a delete. */
function afterOf(change: PushedChange): Record<string, unknown> | undefined {
  if (change.op === 'delete') return undefined;
  return plain(change.spec ?? {});
}

/** The server's side of a conflict: its revision (a tombstone's counts; 0 for a name never used) and the live entity. */
function currentOf(row: StoredEntry | undefined): Pick<SyncConflict, 'currentRevision' | 'entity'> {
  return { currentRevision: row?.revision ?? 0, ...(isLive(row) ? { entity: toEntry(row) } : {}) };
}
