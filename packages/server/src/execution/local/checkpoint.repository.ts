import type { DataSource } from 'typeorm';
import { retryWhileUnavailable } from '../../database/database-retry.js';

/** A `local_checkpoints` row: one checkpoint of a thread, serialised with its serde type beside it. */
export interface CheckpointRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  checkpoint_type: string;
  checkpoint: Uint8Array;
  metadata_type: string;
  metadata: Uint8Array;
}

/** A `local_checkpoint_writes` row, as read back for a checkpoint. */
export interface WriteRow {
  task_id: string;
  idx: number;
  task_path: string;
  channel: string;
  value_type: string;
  value: Uint8Array;
}

/** The checkpoint a batch of pending writes belongs to, and the graph task that wrote them. */
export interface WritesOwner {
  threadId: string;
  checkpointNs: string;
  checkpointId: string;
  taskId: string;
  taskPath: string;
}

/** One pending write, serialised: `idx` is its position (negative for the special channels). */
export interface SerializedWrite {
  idx: number;
  channel: string;
  valueType: string;
  value: Uint8Array;
}

/** What `page` selects: each given field narrows, `beforeId` keeps older checkpoints only. */
export interface CheckpointFilter {
  threadId?: string;
  checkpointNs?: string;
  checkpointId?: string;
  beforeId?: string;
}

/** Where the previous page stopped: (checkpoint_id, thread_id, checkpoint_ns) of its last row. */
export type CheckpointCursor = [checkpointId: string, threadId: string, checkpointNs: string];

const CHECKPOINT_COLUMNS = `thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
  checkpoint_type, checkpoint, metadata_type, metadata`;

/** node-postgres sends a Buffer as bytea; the serde hands out plain Uint8Arrays. */
function bytes(data: Uint8Array): Buffer {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * The tables of the `local` backend's LangGraph checkpoints (`local_checkpoints`,
 * `local_checkpoint_writes`): the only place their SQL lives. Works on PostgreSQL and on the embedded
 * PGlite: every method is one statement, or one transaction that issues its statements through its
 * own EntityManager, so nothing waits on the single embedded connection it holds.
 */
export class CheckpointRepository {
  constructor(
    private readonly dataSource: DataSource,
    /** How long a statement waits out an unreachable database (CLEVERAGENTS_DATABASE_RETRY_SECONDS). */
    private readonly retryMs = 0,
  ) {}

  /** One statement (each is idempotent: reads, and upserts of what the graph computed). */
  private query<T>(sql: string, params: unknown[]): Promise<T> {
    return retryWhileUnavailable('checkpoint a local run', this.retryMs, () => this.dataSource.query<T>(sql, params));
  }

  /** The checkpoint `checkpointId` of the thread's namespace, or its latest when no id is given. */
  async checkpoint(threadId: string, checkpointNs: string, checkpointId?: string): Promise<CheckpointRow | undefined> {
    const rows: CheckpointRow[] = checkpointId
      ? await this.query(
          `SELECT ${CHECKPOINT_COLUMNS} FROM local_checkpoints
           WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3`,
          [threadId, checkpointNs, checkpointId],
        )
      : await this.query(
          `SELECT ${CHECKPOINT_COLUMNS} FROM local_checkpoints
           WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY checkpoint_id DESC LIMIT 1`,
          [threadId, checkpointNs],
        );
    return rows[0];
  }

  /**
   * Up to `limit` checkpoints matching `filter`, newest first, after `cursor` (the last row of the page
   * before); (checkpoint_id, thread_id, checkpoint_ns) is unique, so the pages have no gaps.
   */
  async page(filter: CheckpointFilter, cursor: CheckpointCursor | undefined, limit: number): Promise<CheckpointRow[]> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    const param = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (filter.threadId !== undefined) conditions.push(`thread_id = ${param(filter.threadId)}`);
    if (filter.checkpointNs !== undefined) conditions.push(`checkpoint_ns = ${param(filter.checkpointNs)}`);
    if (filter.checkpointId) conditions.push(`checkpoint_id = ${param(filter.checkpointId)}`);
    if (filter.beforeId) conditions.push(`checkpoint_id < ${param(filter.beforeId)}`);
    if (cursor) {
      const [id, thread, ns] = cursor;
      conditions.push(`(checkpoint_id, thread_id, checkpoint_ns) < (${param(id)}, ${param(thread)}, ${param(ns)})`);
    }
    const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    return this.query(
      `SELECT ${CHECKPOINT_COLUMNS} FROM local_checkpoints ${where}
       ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC LIMIT ${Math.trunc(limit)}`,
      params,
    );
  }

  /** Stores a checkpoint; one stored again under the same key replaces the first. */
  async putCheckpoint(row: CheckpointRow): Promise<void> {
    await this.query(
      `INSERT INTO local_checkpoints (${CHECKPOINT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
         parent_checkpoint_id = EXCLUDED.parent_checkpoint_id,
         checkpoint_type = EXCLUDED.checkpoint_type, checkpoint = EXCLUDED.checkpoint,
         metadata_type = EXCLUDED.metadata_type, metadata = EXCLUDED.metadata`,
      [
        row.thread_id,
        row.checkpoint_ns,
        row.checkpoint_id,
        row.parent_checkpoint_id,
        row.checkpoint_type,
        bytes(row.checkpoint),
        row.metadata_type,
        bytes(row.metadata),
      ],
    );
  }

  /**
   * Stores a task's pending writes against a checkpoint, one statement for the batch (one write per
   * idx: an INSERT … ON CONFLICT cannot touch a row twice). A regular write is computed once (a retried
   * task must not replace it); special ones (error, interrupt, resume: negative idx) record the latest.
   */
  async putWrites(owner: WritesOwner, writes: readonly SerializedWrite[]): Promise<void> {
    if (writes.length === 0) return;
    const params: unknown[] = [owner.threadId, owner.checkpointNs, owner.checkpointId, owner.taskId, owner.taskPath];
    const values = writes.map((write) => {
      params.push(write.idx, write.channel, write.valueType, bytes(write.value));
      const n = params.length;
      return `($1, $2, $3, $4, $${n - 3}, $5, $${n - 2}, $${n - 1}, $${n})`;
    });
    await this.query(
      `INSERT INTO local_checkpoint_writes
         (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, value_type, value)
       VALUES ${values.join(', ')}
       ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
         task_path = EXCLUDED.task_path, channel = EXCLUDED.channel,
         value_type = EXCLUDED.value_type, value = EXCLUDED.value
       WHERE local_checkpoint_writes.idx < 0`,
      params,
    );
  }

  /** The writes stored against one checkpoint, in no particular order. */
  writes(threadId: string, checkpointNs: string, checkpointId: string): Promise<WriteRow[]> {
    return this.query(
      `SELECT task_id, idx, task_path, channel, value_type, value FROM local_checkpoint_writes
       WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3`,
      [threadId, checkpointNs, checkpointId],
    );
  }

  /** Every checkpoint and write of a thread, in one transaction. */
  async deleteThread(threadId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query('DELETE FROM local_checkpoint_writes WHERE thread_id = $1', [threadId]);
      await manager.query('DELETE FROM local_checkpoints WHERE thread_id = $1', [threadId]);
    });
  }
}
