import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  compareWritesSortKeys,
  getCheckpointId,
  WRITES_IDX_MAP,
  writesSortKey,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import type { DataSource } from 'typeorm';
import { retryWhileUnavailable } from '../../database/database-retry.js';

interface CheckpointRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  checkpoint_type: string;
  checkpoint: Uint8Array;
  metadata_type: string;
  metadata: Uint8Array;
}

interface WriteRow {
  task_id: string;
  idx: number;
  task_path: string;
  channel: string;
  value_type: string;
  value: Uint8Array;
}

const CHECKPOINT_COLUMNS = `thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
  checkpoint_type, checkpoint, metadata_type, metadata`;

/** Rows read per query by `list`, which pages through them keyset-wise. */
const LIST_PAGE_SIZE = 100;

/** node-postgres sends a Buffer as bytea; the serde hands out plain Uint8Arrays. */
function bytes(data: Uint8Array): Buffer {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

function requireString(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new Error(`The checkpointer needs configurable.${what} (a non-empty string)`);
  }
  return value;
}

/**
 * LangGraph's checkpointer on the server's own database (tables `local_checkpoints` and
 * `local_checkpoint_writes`), so that a `local` run survives a restart. Works on PostgreSQL and on
 * the embedded PGlite: every call is one statement, or one transaction that issues its statements
 * through its own EntityManager, so nothing waits on the single embedded connection it holds.
 */
export class TypeOrmCheckpointSaver extends BaseCheckpointSaver {
  constructor(
    private readonly dataSource: DataSource,
    serde?: SerializerProtocol,
    /** How long a statement waits out an unreachable database (CLEVERAGENTS_DATABASE_RETRY_SECONDS). */
    private readonly retryMs = 0,
  ) {
    super(serde);
  }

  /** One statement (each is idempotent: reads, and upserts of what the graph computed). */
  private query<T>(sql: string, params: unknown[]): Promise<T> {
    return retryWhileUnavailable('checkpoint a local run', this.retryMs, () => this.dataSource.query<T>(sql, params));
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id as unknown;
    if (typeof threadId !== 'string') return undefined;
    const checkpointNs = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const checkpointId = getCheckpointId(config);
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
    const row = rows[0];
    return row === undefined ? undefined : this.toTuple(row);
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { before, filter } = options;
    let remaining = options.limit ?? Number.POSITIVE_INFINITY;
    if (remaining <= 0) return;
    const conditions: string[] = [];
    const params: unknown[] = [];
    const param = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    const threadId = config.configurable?.thread_id as unknown;
    if (typeof threadId === 'string') conditions.push(`thread_id = ${param(threadId)}`);
    const checkpointNs = config.configurable?.checkpoint_ns as unknown;
    if (typeof checkpointNs === 'string') conditions.push(`checkpoint_ns = ${param(checkpointNs)}`);
    const checkpointId = getCheckpointId(config);
    if (checkpointId) conditions.push(`checkpoint_id = ${param(checkpointId)}`);
    const beforeId = before ? getCheckpointId(before) : '';
    if (beforeId) conditions.push(`checkpoint_id < ${param(beforeId)}`);

    // Newest first; (checkpoint_id, thread_id, checkpoint_ns) is unique, so it pages without gaps.
    let after: [string, string, string] | undefined;
    for (;;) {
      const pageParams = [...params];
      const pageConditions = [...conditions];
      if (after) {
        pageParams.push(...after);
        const n = pageParams.length;
        pageConditions.push(`(checkpoint_id, thread_id, checkpoint_ns) < ($${n - 2}, $${n - 1}, $${n})`);
      }
      const where = pageConditions.length > 0 ? `WHERE ${pageConditions.join(' AND ')}` : '';
      const pageSize = filter ? LIST_PAGE_SIZE : Math.min(LIST_PAGE_SIZE, remaining);
      const rows: CheckpointRow[] = await this.query(
        `SELECT ${CHECKPOINT_COLUMNS} FROM local_checkpoints ${where}
         ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC LIMIT ${pageSize}`,
        pageParams,
      );
      for (const row of rows) {
        const metadata = (await this.serde.loadsTyped(row.metadata_type, row.metadata)) as CheckpointMetadata;
        if (filter && !matches(metadata, filter)) continue;
        yield await this.toTuple(row, metadata);
        remaining -= 1;
        if (remaining <= 0) return;
      }
      if (rows.length < pageSize) return;
      const last = rows[rows.length - 1];
      after = [last.checkpoint_id, last.thread_id, last.checkpoint_ns];
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    _newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = requireString(config.configurable?.thread_id, 'thread_id');
    const checkpointNs = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const parentId = (config.configurable?.checkpoint_id as string | undefined) ?? null;
    const [[checkpointType, checkpointBytes], [metadataType, metadataBytes]] = await Promise.all([
      this.serde.dumpsTyped(checkpoint),
      this.serde.dumpsTyped(metadata),
    ]);
    await this.query(
      `INSERT INTO local_checkpoints (${CHECKPOINT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
         parent_checkpoint_id = EXCLUDED.parent_checkpoint_id,
         checkpoint_type = EXCLUDED.checkpoint_type, checkpoint = EXCLUDED.checkpoint,
         metadata_type = EXCLUDED.metadata_type, metadata = EXCLUDED.metadata`,
      [
        threadId,
        checkpointNs,
        checkpoint.id,
        parentId,
        checkpointType,
        bytes(checkpointBytes),
        metadataType,
        bytes(metadataBytes),
      ],
    );
    return { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const threadId = requireString(config.configurable?.thread_id, 'thread_id');
    const checkpointId = requireString(config.configurable?.checkpoint_id, 'checkpoint_id');
    const checkpointNs = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    if (writes.length === 0) return;
    // One row per idx: a batch may hold a special channel more than once (a node that resumes two
    // interrupts sends `__resume__` twice), and one INSERT … ON CONFLICT cannot touch a row twice. The
    // latest write of a special channel is the one kept, as the in-memory saver does.
    const byIdx = new Map<number, PendingWrite>();
    writes.forEach((write, i) => byIdx.set(WRITES_IDX_MAP[write[0]] ?? i, write));
    const rows = [...byIdx];
    const serialized = await Promise.all(rows.map(([, [, value]]) => this.serde.dumpsTyped(value)));
    const params: unknown[] = [threadId, checkpointNs, checkpointId, taskId, taskPath ?? ''];
    const values = rows.map(([idx, [channel]], i) => {
      const [valueType, valueBytes] = serialized[i];
      params.push(idx, channel, valueType, bytes(valueBytes));
      const n = params.length;
      return `($1, $2, $3, $4, $${n - 3}, $5, $${n - 2}, $${n - 1}, $${n})`;
    });
    // A regular write is computed once (a retried task must not replace it); special ones
    // (error, interrupt, resume: negative idx) record the latest.
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

  async deleteThread(threadId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query('DELETE FROM local_checkpoint_writes WHERE thread_id = $1', [threadId]);
      await manager.query('DELETE FROM local_checkpoints WHERE thread_id = $1', [threadId]);
    });
  }

  private async toTuple(row: CheckpointRow, knownMetadata?: CheckpointMetadata): Promise<CheckpointTuple> {
    const [checkpoint, metadata, pendingWrites] = await Promise.all([
      this.serde.loadsTyped(row.checkpoint_type, row.checkpoint) as Promise<Checkpoint>,
      knownMetadata ?? (this.serde.loadsTyped(row.metadata_type, row.metadata) as Promise<CheckpointMetadata>),
      this.pendingWrites(row.thread_id, row.checkpoint_ns, row.checkpoint_id),
    ]);
    const tuple: CheckpointTuple = {
      config: {
        configurable: { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: row.checkpoint_id },
      },
      checkpoint,
      metadata,
      pendingWrites,
    };
    if (row.parent_checkpoint_id !== null) {
      tuple.parentConfig = {
        configurable: {
          thread_id: row.thread_id,
          checkpoint_ns: row.checkpoint_ns,
          checkpoint_id: row.parent_checkpoint_id,
        },
      };
    }
    return tuple;
  }

  /** The writes stored against one checkpoint, in LangGraph's writesSortKey order. */
  private async pendingWrites(
    threadId: string,
    checkpointNs: string,
    checkpointId: string,
  ): Promise<CheckpointPendingWrite[]> {
    const rows: WriteRow[] = await this.query(
      `SELECT task_id, idx, task_path, channel, value_type, value FROM local_checkpoint_writes
       WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id = $3`,
      [threadId, checkpointNs, checkpointId],
    );
    rows.sort((a, b) =>
      compareWritesSortKeys(writesSortKey(a.task_path, a.task_id, a.idx), writesSortKey(b.task_path, b.task_id, b.idx)),
    );
    return Promise.all(
      rows.map(async (row): Promise<CheckpointPendingWrite> => [
        row.task_id,
        row.channel,
        await this.serde.loadsTyped(row.value_type, row.value),
      ]),
    );
  }
}

function matches(metadata: CheckpointMetadata, filter: Record<string, unknown>): boolean {
  const record = metadata as Record<string, unknown>;
  return Object.entries(filter).every(([key, value]) => record[key] === value);
}
