import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HumanMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  emptyCheckpoint,
  ERROR,
  uuid6,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
} from '@langchain/langgraph-checkpoint';
import type { DataSource } from 'typeorm';
import { openDatabase } from '../../packages/server/src/database/database.startup.js';
import { CheckpointRepository } from '../../packages/server/src/execution/local/checkpoint.repository.js';
import { TypeOrmCheckpointSaver } from '../../packages/server/src/execution/local/typeorm-checkpoint.saver.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { ENTITIES } from '../../packages/server/src/entities.js';
import { ifAssigned } from '../support/assigned.js';

const silent = { log: () => undefined, error: () => undefined, warn: () => undefined };

function aCheckpoint(values: Record<string, unknown> = {}): Checkpoint {
  // uuid6 ids grow with time (and a clock sequence), so later checkpoints sort after earlier ones.
  return { ...emptyCheckpoint(), id: uuid6(-1), channel_values: values, channel_versions: { messages: 1 } };
}

function meta(step: number, source: CheckpointMetadata['source'] = 'loop'): CheckpointMetadata {
  return { source, step, parents: {} };
}

async function all(iterator: AsyncGenerator<CheckpointTuple>): Promise<CheckpointTuple[]> {
  const tuples: CheckpointTuple[] = [];
  for await (const tuple of iterator) tuples.push(tuple);
  return tuples;
}

const ids = (tuples: CheckpointTuple[]) => tuples.map((t) => t.checkpoint.id);

describe.each(databaseTargets())('TypeOrmCheckpointSaver on $kind', (target) => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let saver: TypeOrmCheckpointSaver;

  beforeAll(async () => {
    database = await target.create();
    dataSource = await openDatabase(database.config({ CLEVERAGENTS_MIGRATE_ON_START: 'true' }), silent, {
      entities: ENTITIES,
    });
    saver = new TypeOrmCheckpointSaver(new CheckpointRepository(dataSource));
  });
  afterAll(async () => {
    await ifAssigned(dataSource)?.destroy();
    await ifAssigned(database)?.cleanup();
  });

  /** Puts a chain of checkpoints on `thread` (each the child of the previous), returning their configs. */
  async function chain(thread: string, count: number): Promise<{ config: RunnableConfig; checkpoint: Checkpoint }[]> {
    const out: { config: RunnableConfig; checkpoint: Checkpoint }[] = [];
    let parent: RunnableConfig = { configurable: { thread_id: thread, checkpoint_ns: '' } };
    for (let step = 0; step < count; step += 1) {
      const checkpoint = aCheckpoint({ step });
      parent = await saver.put(parent, checkpoint, meta(step, step === 0 ? 'input' : 'loop'), {});
      out.push({ config: parent, checkpoint });
    }
    return out;
  }

  it('round-trips a checkpoint with messages and metadata, latest by default or by id', async () => {
    const question = new HumanMessage({ id: 'm-1', content: 'What is a checkpoint?' });
    const first = aCheckpoint({ messages: [question] });
    const firstConfig = await saver.put({ configurable: { thread_id: 't-round' } }, first, meta(-1, 'input'), {});
    expect(firstConfig).toEqual({ configurable: { thread_id: 't-round', checkpoint_ns: '', checkpoint_id: first.id } });
    const second = aCheckpoint({ messages: [question], note: 'second' });
    await saver.put(firstConfig, second, { ...meta(0), writes: { agent: 1 } } as CheckpointMetadata, {});

    const latest = await saver.getTuple({ configurable: { thread_id: 't-round' } });
    expect(latest?.checkpoint.id).toBe(second.id);
    expect(latest?.checkpoint.channel_values.note).toBe('second');
    expect(latest?.metadata).toEqual({ source: 'loop', step: 0, parents: {}, writes: { agent: 1 } });
    expect(latest?.parentConfig).toEqual(firstConfig);
    expect(latest?.pendingWrites).toEqual([]);

    const byId = await saver.getTuple(firstConfig);
    const messages = byId?.checkpoint.channel_values.messages as HumanMessage[];
    expect(messages[0]).toBeInstanceOf(HumanMessage);
    expect(messages[0].id).toBe('m-1');
    expect(messages[0].content).toBe('What is a checkpoint?');
    expect(byId?.parentConfig).toBeUndefined();
    expect(await saver.getTuple({ configurable: { thread_id: 't-none' } })).toBeUndefined();
  });

  it('lists newest first, with limit, before and a metadata filter, one thread at a time', async () => {
    const put = await chain('t-list', 4);
    await chain('t-other', 2);
    const newestFirst = put.map((p) => p.checkpoint.id).reverse();

    expect(ids(await all(saver.list({ configurable: { thread_id: 't-list' } })))).toEqual(newestFirst);
    expect(ids(await all(saver.list({ configurable: { thread_id: 't-list' } }, { limit: 2 })))).toEqual(
      newestFirst.slice(0, 2),
    );
    expect(ids(await all(saver.list({ configurable: { thread_id: 't-list' } }, { before: put[2].config })))).toEqual(
      newestFirst.slice(2),
    );
    expect(
      ids(await all(saver.list({ configurable: { thread_id: 't-list' } }, { filter: { source: 'input' } }))),
    ).toEqual([put[0].checkpoint.id]);
    expect(
      ids(await all(saver.list({ configurable: { thread_id: 't-list' } }, { filter: { step: 2 }, limit: 5 }))),
    ).toEqual([put[2].checkpoint.id]);
    const everywhere = await all(saver.list({}));
    expect(new Set(everywhere.map((t) => t.config.configurable?.thread_id))).toEqual(
      new Set(['t-round', 't-list', 't-other']),
    );
  });

  it('pages through a long thread without losing or repeating a checkpoint', async () => {
    const put = await chain('t-long', 230);
    const listed = await all(saver.list({ configurable: { thread_id: 't-long' } }));
    expect(ids(listed)).toEqual(put.map((p) => p.checkpoint.id).reverse());
    const filtered = await all(saver.list({ configurable: { thread_id: 't-long' } }, { filter: { step: 3 } }));
    expect(ids(filtered)).toEqual([put[3].checkpoint.id]);
  });

  it('returns pending writes in task-path order, keeps regular writes and replaces special ones', async () => {
    const [{ config }] = await chain('t-writes', 1);
    await saver.putWrites(
      config,
      [
        ['messages', 'from b'],
        ['note', 'b2'],
      ],
      'task-b',
      '~__pregel_pull, b',
    );
    await saver.putWrites(config, [['messages', 'from a']], 'task-a', '~__pregel_pull, a');
    await saver.putWrites(config, [['messages', 'from b, retried']], 'task-b', '~__pregel_pull, b');
    await saver.putWrites(config, [[ERROR, { message: 'first failure' }]], 'task-c', '~__pregel_pull, c');
    await saver.putWrites(config, [[ERROR, { message: 'second failure' }]], 'task-c', '~__pregel_pull, c');

    const tuple = await saver.getTuple(config);
    expect(tuple?.pendingWrites).toEqual([
      ['task-a', 'messages', 'from a'],
      ['task-b', 'messages', 'from b'],
      ['task-b', 'note', 'b2'],
      ['task-c', ERROR, { message: 'second failure' }],
    ]);
  });

  it('deletes one thread with its writes and leaves the others', async () => {
    const { config } = (await chain('t-delete', 2))[1];
    await saver.putWrites(config, [['messages', 'x']], 'task-x');
    await chain('t-keep', 1);

    await saver.deleteThread('t-delete');

    expect(await saver.getTuple({ configurable: { thread_id: 't-delete' } })).toBeUndefined();
    const writes: { n: number }[] = await dataSource.query(
      "SELECT count(*)::int AS n FROM local_checkpoint_writes WHERE thread_id = 't-delete'",
    );
    expect(writes[0].n).toBe(0);
    expect(await saver.getTuple({ configurable: { thread_id: 't-keep' } })).toBeDefined();
  });
});
