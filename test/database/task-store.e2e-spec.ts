import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Role, Task, TaskState, type ListTasksRequest } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { InMemoryTaskStore, ServerCallContext } from '@a2a-js/sdk/server';
import type { DataSource } from 'typeorm';
import { Principal } from '../../packages/server/src/common/principal.js';
import type { AppConfig } from '../../packages/server/src/config/app.config.js';
import { openDatabase } from '../../packages/server/src/database/database.startup.js';
import { resolveStoreScope } from '../../packages/server/src/database/store-scope.js';
import { TypeOrmTaskStore } from '../../packages/server/src/database/typeorm-task.store.js';
import { taskListQuery, taskPageQuery } from '../../packages/server/src/database/task-list.query.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { ENTITIES } from '../../packages/server/src/entities.js';
import { ifAssigned } from '../support/assigned.js';

const silent = { log: () => undefined, error: () => undefined, warn: () => undefined };

function contextFor(user: string | undefined, tenant?: string, requestedVersion?: string): ServerCallContext {
  return new ServerCallContext({
    user:
      user === undefined
        ? undefined
        : new Principal({ subject: user, scheme: 'none', defaultNamespace: 'default', grants: new Map() }),
    tenant,
    requestedVersion,
  });
}

function aTask(id: string, overrides: Partial<Task> & { state?: TaskState; timestamp?: string | null } = {}): Task {
  const { state = TaskState.TASK_STATE_WORKING, timestamp = '2030-01-01T00:00:00.000Z', ...rest } = overrides;
  return {
    id,
    contextId: 'ctx-1',
    status: {
      state,
      timestamp: timestamp === null ? undefined : timestamp,
      message: {
        messageId: `m-${id}`,
        contextId: 'ctx-1',
        taskId: id,
        role: Role.ROLE_AGENT,
        parts: [
          { content: { $case: 'text', value: 'working on it' }, metadata: undefined, filename: '', mediaType: '' },
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
    },
    artifacts: [
      {
        artifactId: `a-${id}`,
        name: 'result',
        description: '',
        parts: [
          {
            content: { $case: 'data', value: { answer: 42, nested: { ok: true } } },
            metadata: undefined,
            filename: '',
            mediaType: 'application/json',
          },
        ],
        metadata: undefined,
        extensions: [],
      },
    ],
    history: [],
    metadata: { origin: 'test' },
    ...rest,
  };
}

const listAll: ListTasksRequest = {
  tenant: '',
  contextId: '',
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageToken: '',
  statusTimestampAfter: undefined,
};

describe.each(databaseTargets())('TypeOrmTaskStore on $kind', (target) => {
  let database: TestDatabase;
  let config: AppConfig;
  let dataSource: DataSource;
  let store: TypeOrmTaskStore;

  beforeAll(async () => {
    database = await target.create();
    config = database.config({ CLEVERAGENTS_MIGRATE_ON_START: 'true' });
    dataSource = await openDatabase(config, silent, { entities: ENTITIES });
    store = new TypeOrmTaskStore(dataSource, config);
  });
  afterAll(async () => {
    await ifAssigned(dataSource)?.destroy();
    await database.cleanup();
  });
  beforeEach(async () => {
    await dataSource.query('DELETE FROM tasks');
  });

  it('round-trips a task with its enums, parts, artifacts and metadata', async () => {
    const task = aTask('t-round-trip', { state: TaskState.TASK_STATE_INPUT_REQUIRED });
    await store.save(task, contextFor('alice'));
    const loaded = await store.load('t-round-trip', contextFor('alice'));
    expect(loaded).toEqual(task);
    expect(loaded?.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  it('keeps binary parts as bytes', async () => {
    const task = aTask('t-bytes', {
      history: [
        {
          messageId: 'm-raw',
          contextId: 'ctx-1',
          taskId: 't-bytes',
          role: Role.ROLE_USER,
          parts: [
            {
              content: { $case: 'raw', value: Buffer.from([0, 1, 2, 255]) },
              metadata: undefined,
              filename: 'x.bin',
              mediaType: 'application/octet-stream',
            },
          ],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
      ],
    });
    await store.save(task, contextFor('alice'));
    const loaded = await store.load('t-bytes', contextFor('alice'));
    const part = loaded?.history[0].parts[0].content;
    expect(part?.$case).toBe('raw');
    expect(Buffer.from(part?.value as Uint8Array)).toEqual(Buffer.from([0, 1, 2, 255]));
  });

  it('updates a task saved again, in place', async () => {
    await store.save(aTask('t-upsert'), contextFor('alice'));
    const done = aTask('t-upsert', { state: TaskState.TASK_STATE_COMPLETED, timestamp: '2030-01-02T00:00:00.000Z' });
    await store.save(done, contextFor('alice'));
    expect(await store.load('t-upsert', contextFor('alice'))).toEqual(done);
    const rows: { state: string }[] = await dataSource.query('SELECT state FROM tasks WHERE id = $1', ['t-upsert']);
    expect(rows).toEqual([{ state: 'TASK_STATE_COMPLETED' }]);
  });

  it('answers undefined for an unknown task', async () => {
    expect(await store.load('no-such-task', contextFor('alice'))).toBeUndefined();
  });

  it('never shows or overwrites a task of another owner or namespace', async () => {
    const alices = aTask('shared-id', { metadata: { owner: 'alice' } });
    await store.save(alices, contextFor('alice'));

    expect(await store.load('shared-id', contextFor('bob'))).toBeUndefined();
    expect(await store.load('shared-id', contextFor('alice', 'other-namespace'))).toBeUndefined();
    expect(await store.load('shared-id', contextFor(undefined))).toBeUndefined();

    // The same id saved by bob, and by alice in another namespace, are other tasks.
    await store.save(aTask('shared-id', { metadata: { owner: 'bob' } }), contextFor('bob'));
    await store.save(
      aTask('shared-id', { metadata: { owner: 'alice-elsewhere' } }),
      contextFor('alice', 'other-namespace'),
    );
    expect(await store.load('shared-id', contextFor('alice'))).toEqual(alices);
    expect((await store.load('shared-id', contextFor('bob')))?.metadata).toEqual({ owner: 'bob' });
    expect((await store.load('shared-id', contextFor('alice', 'other-namespace')))?.metadata).toEqual({
      owner: 'alice-elsewhere',
    });

    const bobsList = await store.list({ ...listAll }, contextFor('bob'));
    expect(bobsList.tasks.map((t) => t.metadata)).toEqual([{ owner: 'bob' }]);
    expect(bobsList.totalSize).toBe(1);
  });

  it('scopes a call without tenant to the default namespace and one without user to "anonymous"', async () => {
    await store.save(aTask('t-default'), contextFor('alice'));
    expect(await store.load('t-default', contextFor('alice', config.defaultNamespace))).toBeDefined();
    expect(resolveStoreScope(contextFor(undefined), config.defaultNamespace)).toEqual({
      namespace: config.defaultNamespace,
      owner: 'anonymous',
    });
    await store.save(aTask('t-anon'), contextFor(undefined));
    expect(await store.load('t-anon', contextFor(undefined))).toBeDefined();
    expect(await store.load('t-anon', contextFor('alice'))).toBeUndefined();
  });

  it('filters by context, state and status time, and counts with the same filters', async () => {
    const ctx = contextFor('alice');
    await store.save(
      aTask('a', { contextId: 'c1', state: TaskState.TASK_STATE_WORKING, timestamp: '2030-01-01T00:00:01.000Z' }),
      ctx,
    );
    await store.save(
      aTask('b', { contextId: 'c1', state: TaskState.TASK_STATE_COMPLETED, timestamp: '2030-01-01T00:00:02.000Z' }),
      ctx,
    );
    await store.save(
      aTask('c', { contextId: 'c2', state: TaskState.TASK_STATE_COMPLETED, timestamp: '2030-01-01T00:00:03.000Z' }),
      ctx,
    );
    await store.save(aTask('d', { contextId: 'c2', state: TaskState.TASK_STATE_FAILED, timestamp: null }), ctx);

    const ids = async (params: Partial<ListTasksRequest>) => {
      const page = await store.list({ ...listAll, ...params }, ctx);
      return { ids: page.tasks.map((t) => t.id), total: page.totalSize };
    };
    // Newest first; a task with no timestamp comes last.
    expect(await ids({})).toEqual({ ids: ['c', 'b', 'a', 'd'], total: 4 });
    expect(await ids({ contextId: 'c1' })).toEqual({ ids: ['b', 'a'], total: 2 });
    expect(await ids({ status: TaskState.TASK_STATE_COMPLETED })).toEqual({ ids: ['c', 'b'], total: 2 });
    expect(await ids({ contextId: 'c2', status: TaskState.TASK_STATE_COMPLETED })).toEqual({ ids: ['c'], total: 1 });
    expect(await ids({ statusTimestampAfter: '2030-01-01T00:00:01.000Z' })).toEqual({ ids: ['c', 'b'], total: 2 });
    expect(await ids({ statusTimestampAfter: '2030-01-01T00:00:01.000Z', pageSize: 1 })).toEqual({
      ids: ['c'],
      total: 2,
    });
    expect(await ids({ contextId: 'nope' })).toEqual({ ids: [], total: 0 });
  });

  it('gives a page as JSON text that is the page as tasks, written as the SDK writes them', async () => {
    const ctx = contextFor('alice');
    await store.save(aTask('with', { contextId: 'c1', timestamp: '2030-01-01T00:00:01.000Z' }), ctx);
    await store.save(
      aTask('without', {
        contextId: 'c1',
        timestamp: '2030-01-01T00:00:02.000Z',
        artifacts: [],
        metadata: { note: 'é ü \u2028 "quoted" \\ back', big: 12345678901234, small: 0.5, list: [1, null, true] },
      }),
      ctx,
    );
    await store.save(aTask('no-time', { contextId: 'c2', timestamp: null, history: [] }), ctx);
    // What the SDK's JSON-RPC handler writes for each task: Task.toJSON, and with artifacts asked for,
    // an empty list where a task has none.
    const asWritten = (task: Task, includeArtifacts: boolean | undefined) => {
      const json = Task.toJSON(task) as Record<string, unknown>;
      return includeArtifacts ? { ...json, artifacts: json.artifacts ?? [] } : json;
    };
    const first = await store.list({ ...listAll, pageSize: 2 }, ctx);
    expect(first.nextPageToken).not.toBe('');
    const cases: Partial<ListTasksRequest>[] = [
      {},
      { includeArtifacts: true },
      { pageSize: 2 },
      { pageSize: 2, pageToken: first.nextPageToken, includeArtifacts: true },
      { contextId: 'c1', includeArtifacts: false },
      { contextId: 'none' },
    ];
    for (const params of cases) {
      const request = { ...listAll, ...params };
      const [text, objects] = await Promise.all([store.listText(request, ctx), store.list(request, ctx)]);
      expect(text.tasks.every((t) => typeof t === 'string')).toBe(true);
      expect({ ...text, tasks: text.tasks.map((t) => JSON.parse(t) as unknown) }).toEqual({
        ...objects,
        tasks: objects.tasks.map((t) => asWritten(t, params.includeArtifacts)),
      });
    }
    const all = await store.listText({ ...listAll, includeArtifacts: true }, ctx);
    expect(all.tasks.map((t) => (JSON.parse(t) as { id: string }).id)).toEqual(['without', 'with', 'no-time']);
    expect((JSON.parse(all.tasks[0]) as { artifacts: unknown }).artifacts).toEqual([]);
    expect(
      (JSON.parse((await store.listText({ ...listAll }, ctx)).tasks[1]) as { artifacts?: unknown }).artifacts,
    ).toBeUndefined();
  });

  it('keeps totalSize exact through concurrent inserts, state changes, deletes and a truncate', async () => {
    const states = [
      TaskState.TASK_STATE_SUBMITTED,
      TaskState.TASK_STATE_WORKING,
      TaskState.TASK_STATE_INPUT_REQUIRED,
      TaskState.TASK_STATE_COMPLETED,
    ];
    const owners = ['alice', 'bob'];
    // 200 tasks, each saved through 4 states by concurrent writers, in two scopes.
    await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const ctx = contextFor(owners[i % 2]);
        for (const state of states.slice(0, 1 + (i % 4))) await store.save(aTask(`n-${i}`, { state }), ctx);
      }),
    );
    await dataSource.query(`DELETE FROM tasks WHERE owner = 'bob' AND id LIKE 'n-1%'`);
    await dataSource.query(
      `UPDATE tasks SET state = 'TASK_STATE_CANCELED' WHERE owner = 'alice' AND state = 'TASK_STATE_SUBMITTED'`,
    );
    const expected: { owner: string; state: string; n: string }[] = await dataSource.query(
      'SELECT owner, state, count(*) AS n FROM tasks GROUP BY owner, state',
    );
    for (const owner of owners) {
      const ctx = contextFor(owner);
      const all = expected.filter((row) => row.owner === owner).reduce((sum, row) => sum + Number(row.n), 0);
      expect((await store.list({ ...listAll, pageSize: 1 }, ctx)).totalSize).toBe(all);
      for (const state of [...states, TaskState.TASK_STATE_CANCELED]) {
        const name = TaskState[state];
        const n = Number(expected.find((row) => row.owner === owner && row.state === name)?.n ?? 0);
        expect({
          owner,
          name,
          total: (await store.list({ ...listAll, status: state, pageSize: 1 }, ctx)).totalSize,
        }).toEqual({ owner, name, total: n });
      }
    }
    await dataSource.query('TRUNCATE tasks');
    expect((await store.list({ ...listAll }, contextFor('alice'))).totalSize).toBe(0);
    await store.save(aTask('after-truncate'), contextFor('alice'));
    expect((await store.list({ ...listAll }, contextFor('alice'))).totalSize).toBe(1);
  });

  it('answers concurrent loads and saves, batched into shared queries, each with its own task', async () => {
    const ids = Array.from({ length: 120 }, (_, i) => `batch-${i}`);
    const owners = ['alice', 'bob', 'carol'];
    // Saves of 120 tasks in three scopes at once, then each saved again with another state.
    await Promise.all(ids.map((id, i) => store.save(aTask(id, { contextId: `c-${i}` }), contextFor(owners[i % 3]))));
    await Promise.all(
      ids.map((id, i) =>
        store.save(
          aTask(id, { contextId: `c-${i}`, state: TaskState.TASK_STATE_COMPLETED }),
          contextFor(owners[i % 3]),
        ),
      ),
    );
    // Loads at once: each in its own scope, in another scope (absent), and unknown ids.
    const own = await Promise.all(ids.map((id, i) => store.load(id, contextFor(owners[i % 3]))));
    const foreign = await Promise.all(ids.map((id, i) => store.load(id, contextFor(owners[(i + 1) % 3]))));
    const unknown = await Promise.all(ids.map((id, i) => store.load(`${id}-x`, contextFor(owners[i % 3]))));
    expect(own.map((t) => [t?.id, t?.contextId, t?.status?.state])).toEqual(
      ids.map((id, i) => [id, `c-${i}`, TaskState.TASK_STATE_COMPLETED]),
    );
    expect(foreign.every((t) => t === undefined)).toBe(true);
    expect(unknown.every((t) => t === undefined)).toBe(true);
    const rows: { n: string }[] = await dataSource.query(`SELECT count(*) AS n FROM tasks WHERE id LIKE 'batch-%'`);
    expect(Number(rows[0].n)).toBe(120);
  });

  it('writes one task saved twice in the same batch in order, the last state winning', async () => {
    const ctx = contextFor('alice');
    await Promise.all([
      store.save(aTask('twice', { state: TaskState.TASK_STATE_WORKING }), ctx),
      store.save(aTask('other'), ctx),
      store.save(aTask('twice', { state: TaskState.TASK_STATE_COMPLETED }), ctx),
    ]);
    expect((await store.load('twice', ctx))?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await store.list({ ...listAll }, ctx)).totalSize).toBe(2);
  });

  it('leaves artifacts out unless includeArtifacts is set', async () => {
    await store.save(aTask('with-artifacts'), contextFor('alice'));
    const without = await store.list({ ...listAll }, contextFor('alice'));
    expect(without.tasks[0].artifacts).toEqual([]);
    expect(without.tasks[0].history).toEqual([]);
    expect(without.tasks[0].status?.message?.parts).toHaveLength(1);
    const withThem = await store.list({ ...listAll, includeArtifacts: true }, contextFor('alice'));
    expect(withThem.tasks[0]).toEqual(aTask('with-artifacts'));
  });

  it('pages 120 tasks with one timestamp by keyset, without skipping or repeating', async () => {
    const ctx = contextFor('alice');
    const ids = Array.from({ length: 120 }, (_, i) => `task-${String(i).padStart(4, '0')}`);
    for (const id of ids) await store.save(aTask(id, { timestamp: '2030-06-01T12:00:00.000Z' }), ctx);

    const seen: string[] = [];
    let pageToken = '';
    let pages = 0;
    do {
      const page = await store.list({ ...listAll, pageSize: 7, pageToken }, ctx);
      expect(page.totalSize).toBe(120);
      expect(page.pageSize).toBe(7);
      expect(page.tasks.length).toBeLessThanOrEqual(7);
      seen.push(...page.tasks.map((t) => t.id));
      pageToken = page.nextPageToken;
      pages++;
    } while (pageToken && pages < 100);
    expect(pages).toBe(Math.ceil(120 / 7));
    expect(seen).toEqual([...ids].reverse());
  });

  it('keeps its place when tasks are added or updated between pages', async () => {
    const ctx = contextFor('alice');
    for (let i = 0; i < 10; i++) {
      await store.save(aTask(`k-${i}`, { timestamp: `2030-01-01T00:00:${String(10 + i).padStart(2, '0')}.000Z` }), ctx);
    }
    const first = await store.list({ ...listAll, pageSize: 4 }, ctx);
    expect(first.tasks.map((t) => t.id)).toEqual(['k-9', 'k-8', 'k-7', 'k-6']);
    // Newer tasks appear before the cursor, so they do not shift the next page.
    await store.save(aTask('k-new', { timestamp: '2031-01-01T00:00:00.000Z' }), ctx);
    const second = await store.list({ ...listAll, pageSize: 4, pageToken: first.nextPageToken }, ctx);
    expect(second.tasks.map((t) => t.id)).toEqual(['k-5', 'k-4', 'k-3', 'k-2']);
    expect(second.totalSize).toBe(11);
  });

  it('orders sub-millisecond timestamps exactly across pages', async () => {
    const ctx = contextFor('alice');
    await store.save(aTask('u1', { timestamp: '2030-01-01T00:00:00.000001Z' }), ctx);
    await store.save(aTask('u2', { timestamp: '2030-01-01T00:00:00.000002Z' }), ctx);
    await store.save(aTask('u3', { timestamp: '2030-01-01T00:00:00.000003Z' }), ctx);
    const seen: string[] = [];
    let pageToken = '';
    do {
      const page = await store.list({ ...listAll, pageSize: 1, pageToken }, ctx);
      seen.push(...page.tasks.map((t) => t.id));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(seen).toEqual(['u3', 'u2', 'u1']);
  });

  it('answers the exact totalSize with every page, an empty page past the last task included', async () => {
    const ctx = contextFor('alice');
    for (let i = 0; i < 5; i++) {
      await store.save(
        aTask(`t${i}`, { state: TaskState.TASK_STATE_COMPLETED, timestamp: `2030-06-01T12:00:0${i}.000Z` }),
        ctx,
      );
    }
    await store.save(aTask('other', { state: TaskState.TASK_STATE_WORKING }), ctx);
    await store.save(aTask('bobs'), contextFor('bob'));
    const completed = { ...listAll, status: TaskState.TASK_STATE_COMPLETED };
    const first = await store.list({ ...completed, pageSize: 2 }, ctx);
    expect({ ids: first.tasks.map((t) => t.id), total: first.totalSize }).toEqual({ ids: ['t4', 't3'], total: 5 });
    // After the oldest task: no row to carry the total, which is counted on its own.
    const pastEnd = Buffer.from('2030-06-01T12:00:00.000000Z|t0').toString('base64');
    const empty = await store.list({ ...completed, pageToken: pastEnd }, ctx);
    expect({ ids: empty.tasks.map((t) => t.id), total: empty.totalSize, next: empty.nextPageToken }).toEqual({
      ids: [],
      total: 5,
      next: '',
    });
    const byContext = await store.list({ ...listAll, contextId: aTask('t0').contextId, pageSize: 1 }, ctx);
    expect(byContext.totalSize).toBe(6);
    expect((await store.list({ ...listAll, pageSize: 1 }, contextFor('carol'))).totalSize).toBe(0);
  });

  it('pages past tasks that have no timestamp', async () => {
    const ctx = contextFor('alice');
    await store.save(aTask('n1', { timestamp: null }), ctx);
    await store.save(aTask('n2', { timestamp: null }), ctx);
    await store.save(aTask('t1'), ctx);
    const first = await store.list({ ...listAll, pageSize: 2 }, ctx);
    const second = await store.list({ ...listAll, pageSize: 2, pageToken: first.nextPageToken }, ctx);
    expect([...first.tasks, ...second.tasks].map((t) => t.id)).toEqual(['t1', 'n2', 'n1']);
    expect(second.nextPageToken).toBe('');
  });

  it('lists in the same order and with the same totals as the SDK in-memory store', async () => {
    const reference = new InMemoryTaskStore((context) => resolveStoreScope(context, config.defaultNamespace).owner);
    const ctx = contextFor('alice');
    const states = [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED];
    for (let i = 0; i < 30; i++) {
      const task = aTask(`p-${String(i).padStart(2, '0')}`, {
        contextId: `ctx-${i % 3}`,
        state: states[i % 3],
        timestamp: `2030-01-01T00:00:${String(i % 7).padStart(2, '0')}.000Z`,
      });
      await store.save(task, ctx);
      await reference.save(task, ctx);
    }
    for (const filter of [
      {},
      { contextId: 'ctx-1' },
      { status: TaskState.TASK_STATE_FAILED },
      { statusTimestampAfter: '2030-01-01T00:00:03.000Z' },
    ]) {
      const ours = await store.list({ ...listAll, ...filter, pageSize: 100 }, ctx);
      const theirs = await reference.list({ ...listAll, ...filter, pageSize: 100 }, ctx);
      expect(ours.tasks.map((t) => t.id)).toEqual(theirs.tasks.map((t) => t.id));
      expect(ours.totalSize).toBe(theirs.totalSize);
    }
  });

  it('refuses a malformed page token and a page size out of range', async () => {
    const ctx = contextFor('alice');
    await expect(store.list({ ...listAll, pageToken: 'not-a-token' }, ctx)).rejects.toBeInstanceOf(
      RequestMalformedError,
    );
    await expect(
      store.list({ ...listAll, pageToken: Buffer.from('yesterday|x').toString('base64') }, ctx),
    ).rejects.toBeInstanceOf(RequestMalformedError);
    await expect(store.list({ ...listAll, pageSize: 0 }, ctx)).rejects.toBeInstanceOf(RequestMalformedError);
    await expect(store.list({ ...listAll, pageSize: 101 }, ctx)).rejects.toBeInstanceOf(RequestMalformedError);
  });

  it('reads a page from a scope index, in index order, without sorting', async () => {
    // 4,000 tasks of alice over 200 contexts, 1% of them failed; other owners around them.
    await dataSource.query(
      `INSERT INTO tasks (namespace, owner, id, context_id, state, status_timestamp, task)
       SELECT 'default', o.owner, 'bulk-' || g, 'ctx-' || (g % 200),
              CASE WHEN g % 100 = 0 THEN 'TASK_STATE_FAILED' ELSE 'TASK_STATE_COMPLETED' END,
              timestamptz '2030-01-01' + g * interval '1 second', '{}'::jsonb
       FROM generate_series(1, 4000) AS g, (VALUES ('alice'), ('bob'), ('carol')) AS o(owner)`,
    );
    await dataSource.query('ANALYZE tasks');
    const scope = { namespace: 'default', owner: 'alice' };
    const cursor = Buffer.from('2030-01-01T00:30:00.000000Z|bulk-1800').toString('base64');
    const cases: { params: Partial<ListTasksRequest>; index: RegExp }[] = [
      { params: {}, index: /IDX_tasks_scope_recent/ },
      { params: { pageToken: cursor }, index: /IDX_tasks_scope_recent/ },
      { params: { contextId: 'ctx-7' }, index: /IDX_tasks_scope_context_recent/ },
      { params: { contextId: 'ctx-7', pageToken: cursor }, index: /IDX_tasks_scope_context_recent/ },
      { params: { status: TaskState.TASK_STATE_FAILED, pageToken: cursor }, index: /IDX_tasks_scope_state_recent/ },
      { params: { statusTimestampAfter: '2030-01-01T00:10:00Z' }, index: /IDX_tasks_scope_recent/ },
    ];
    for (const { params, index } of cases) {
      const query = taskPageQuery(scope, { ...listAll, ...params }, 51);
      const plan: { 'QUERY PLAN': string }[] = await dataSource.query(`EXPLAIN ${query.sql}`, query.values);
      const text = plan.map((row) => row['QUERY PLAN']).join('\n');
      expect({ params, plan: text }).toEqual({ params, plan: expect.stringMatching(index) });
      expect(text).toMatch(/Index Scan Backward/);
      expect(text).not.toMatch(/Sort|Seq Scan/);
      // The page with its total, as list() sends it: the same index scan, the count run once beside it.
      const withTotal = taskListQuery(scope, { ...listAll, ...params }, 51);
      const listPlan: { 'QUERY PLAN': string }[] = await dataSource.query(`EXPLAIN ${withTotal.sql}`, withTotal.values);
      const listText = listPlan.map((row) => row['QUERY PLAN']).join('\n');
      expect({ params, plan: listText }).toEqual({
        params,
        plan: expect.stringMatching(new RegExp(`Index Scan Backward using "${index.source}"`)),
      });
      expect(listText).toMatch(/InitPlan/);
      expect(listText).not.toMatch(/Sort/);
    }
  });
});

describe.each(databaseTargets())('task persistence on $kind', (target) => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await target.create();
  });
  afterAll(async () => {
    await database.cleanup();
  });

  it('keeps tasks across a close and reopen of the same database', async () => {
    const config = database.config({ CLEVERAGENTS_MIGRATE_ON_START: 'true' });
    const first = await openDatabase(config, silent, { entities: ENTITIES });
    await new TypeOrmTaskStore(first, config).save(aTask('durable'), contextFor('alice'));
    await first.destroy();

    const second = await openDatabase(config, silent, { entities: ENTITIES });
    try {
      expect(await new TypeOrmTaskStore(second, config).load('durable', contextFor('alice'))).toEqual(aTask('durable'));
    } finally {
      await second.destroy();
    }
  });
});
