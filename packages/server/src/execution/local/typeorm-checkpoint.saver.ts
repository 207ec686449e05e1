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
import type {
  CheckpointRepository,
  CheckpointCursor,
  CheckpointRow,
  SerializedWrite,
} from './checkpoint.repository.js';

/** Rows read per query by `list`, which pages through them keyset-wise. */
const LIST_PAGE_SIZE = 100;

function requireString(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new Error(`The checkpointer needs configurable.${what} (a non-empty string)`);
  }
  return value;
}

/**
 * LangGraph's checkpointer on the server's own database (tables `local_checkpoints` and
 * `local_checkpoint_writes`, through CheckpointRepository), so that a `local` run survives a restart.
 * It serialises with the serde and speaks LangGraph's configs; the repository holds the SQL.
 */
export class TypeOrmCheckpointSaver extends BaseCheckpointSaver {
  constructor(
    private readonly checkpoints: CheckpointRepository,
    serde?: SerializerProtocol,
  ) {
    super(serde);
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id as unknown;
    if (typeof threadId !== 'string') return undefined;
    const checkpointNs = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const row = await this.checkpoints.checkpoint(threadId, checkpointNs, getCheckpointId(config) || undefined);
    return row === undefined ? undefined : this.toTuple(row);
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { before, filter } = options;
    let remaining = options.limit ?? Number.POSITIVE_INFINITY;
    if (remaining <= 0) return;
    const threadId = config.configurable?.thread_id as unknown;
    const checkpointNs = config.configurable?.checkpoint_ns as unknown;
    const which = {
      threadId: typeof threadId === 'string' ? threadId : undefined,
      checkpointNs: typeof checkpointNs === 'string' ? checkpointNs : undefined,
      checkpointId: getCheckpointId(config) || undefined,
      beforeId: (before ? getCheckpointId(before) : '') || undefined,
    };

    // Newest first, a page at a time.
    let after: CheckpointCursor | undefined;
    for (;;) {
      const pageSize = filter ? LIST_PAGE_SIZE : Math.min(LIST_PAGE_SIZE, remaining);
      const rows = await this.checkpoints.page(which, after, pageSize);
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
    await this.checkpoints.putCheckpoint({
      thread_id: threadId,
      checkpoint_ns: checkpointNs,
      checkpoint_id: checkpoint.id,
      parent_checkpoint_id: parentId,
      checkpoint_type: checkpointType,
      checkpoint: checkpointBytes,
      metadata_type: metadataType,
      metadata: metadataBytes,
    });
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
    const dumped = await Promise.all(rows.map(([, [, value]]) => this.serde.dumpsTyped(value)));
    const serialized: SerializedWrite[] = rows.map(([idx, [channel]], i) => {
      const [valueType, value] = dumped[i];
      return { idx, channel, valueType, value };
    });
    await this.checkpoints.putWrites(
      { threadId, checkpointNs, checkpointId, taskId, taskPath: taskPath ?? '' },
      serialized,
    );
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.checkpoints.deleteThread(threadId);
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
    const rows = await this.checkpoints.writes(threadId, checkpointNs, checkpointId);
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
