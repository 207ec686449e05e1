import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase, databaseTargets, type TestDatabase } from '../support/database.js';
import { describeNeeding, runningPostgres } from '../support/requirements.js';
import {
  parseJsonOrUndefined,
  rawCall,
  readSse,
  startServer,
  startServerWithBootstrapKey,
  type TestServer,
} from '../support/server.js';
import { OpenStreams } from '../../packages/server/src/a2a/open-streams.js';
import { wireMessageV1 } from '../factories/messages.js';
import { ifAssigned } from '../support/assigned.js';
import { sseCall, type SseEvent } from '../support/sse.js';
import { eventually, holdsThroughout, until } from '../support/wait.js';

const target = databaseTargets()[0];

describe(`SSE streams on ${target.kind}`, () => {
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    db = await target.create();
    server = await startServer(db, { CLEVERAGENTS_SSE_HEARTBEAT_MS: '1000' });
  });

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  const open = (signal?: AbortSignal) =>
    fetch(server.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'hb',
        method: 'SendStreamingMessage',
        params: { message: wireMessageV1('test-resubscribe-message-id') },
      }),
      signal,
    });

  it('an idle stream carries keep-alive comments until its last event', async () => {
    const text = await (await open()).text();
    const heartbeats = text.split('\n').filter((line) => line === ': keep-alive').length;
    expect(heartbeats).toBeGreaterThanOrEqual(2); // the task holds for about 4 s, beats every 1 s
    const events = text
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    expect(events.at(-1).result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('every one of several concurrent idle streams gets its keep-alive comments (one shared timer)', async () => {
    // Streams opened one after another land in different heartbeat groups of the shared timer.
    const texts = await Promise.all(Array.from({ length: 5 }, async () => (await open()).text()));
    expect(texts.map((text) => text.split('\n').filter((line) => line === ': keep-alive').length >= 2)).toEqual(
      texts.map(() => true),
    );
  });

  it('a client that disconnects does not cancel the task; the open-streams gauge goes back down', async () => {
    const controller = new AbortController();
    const res = await open(controller.signal);
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const taskId = JSON.parse(
      first
        .split('\n')
        .find((l) => l.startsWith('data: '))!
        .slice(6),
    ).result.task.id;
    const gauge = async () => {
      const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
      return Number(/^cleveragents_open_streams (\d+)/m.exec(metrics)?.[1]);
    };
    expect(await gauge()).toBe(1);
    controller.abort();
    const state = await eventually(
      async () => {
        const task = await rawCall(server.endpoint, {
          jsonrpc: '2.0',
          id: 1,
          method: 'GetTask',
          params: { id: taskId },
        });
        const now: string = task.json.result.status.state;
        return now === 'TASK_STATE_COMPLETED' || now === 'TASK_STATE_CANCELED' ? now : undefined;
      },
      'the task to end',
      30_000,
    );
    expect(state).toBe('TASK_STATE_COMPLETED');
    // The server learns of the disconnect when the socket closes, not when the task ends.
    await until(async () => (await gauge()) === 0, 'the open-streams gauge to go back to 0', 10_000);
  });

  it("a stream's historyLength trims its own copy of the task, not what a subscriber of the task is sent", async () => {
    const first = await rawCall(server.endpoint, {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: wireMessageV1('tck-input-required') },
    });
    const taskId = (first.json as { result: { task: { id: string } } }).result.task.id;
    // A subscriber waits on the task; the answer comes in a stream asking for no history.
    const subscribed: SseEvent[] = [];
    const subscriber = (async () => {
      for await (const event of sseCall(server.endpoint, {
        jsonrpc: '2.0',
        id: 2,
        method: 'SubscribeToTask',
        params: { id: taskId },
      })) {
        subscribed.push(event);
      }
    })();
    await until(() => subscribed.length > 0, 'the subscription to start');
    const answered: SseEvent[] = [];
    for await (const event of sseCall(server.endpoint, {
      jsonrpc: '2.0',
      id: 3,
      method: 'SendStreamingMessage',
      params: {
        message: wireMessageV1('tck-complete-task', 'go on', { taskId }),
        configuration: { historyLength: 0 },
      },
    })) {
      answered.push(event);
    }
    await subscriber;
    const historyOf = (events: SseEvent[]) =>
      events
        .map((e) => e.message.result?.task as { history?: unknown[] } | undefined)
        .filter((task) => task !== undefined)
        .map((task) => task.history?.length ?? 0);
    expect(historyOf(answered)).toEqual([0]);
    // The snapshot, then the task the answer's call started with: its whole history (ask, reply, answer).
    expect(historyOf(subscribed)).toEqual([2, 3]);
  });
});

describe(`concurrent streams per principal on ${target.kind}`, () => {
  let db: TestDatabase;
  let server: TestServer;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    db = await target.create();
    ({ server, bootstrapKey: alice } = await startServerWithBootstrapKey(db, {
      CLEVERAGENTS_AUTH_SCHEMES: 'apiKey',
      CLEVERAGENTS_MAX_STREAMS_PER_PRINCIPAL: '2',
    }));
    const minted = await rawCall(
      server.endpoint,
      { jsonrpc: '2.0', id: 1, method: '_cleveragents/auth/apikey/create', params: { name: 'bob', role: 'member' } },
      { 'x-api-key': alice },
    );
    bob = minted.json.result.key;
  });

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  let n = 0;
  /** A stream on a task the conformance actor holds working for about 4 s. */
  const open = (key: string, signal?: AbortSignal) =>
    fetch(server.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++n,
        method: 'SendStreamingMessage',
        params: { message: wireMessageV1(`test-resubscribe-message-id-cap-${n}`) },
      }),
      signal,
    });

  /** Opens a stream and reads its first event, so the server holds it open. */
  const held = async (key: string) => {
    const controller = new AbortController();
    const res = await open(key, controller.signal);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    await reader.read();
    return { controller, rest: () => new Response(streamOf(reader)).text() };
  };

  const expectRefused = async (key: string) => {
    const res = await open(key);
    const body = parseJsonOrUndefined(await res.text());
    expect({ status: res.status, code: body?.error?.code, reason: body?.error?.data?.[0]?.reason }).toEqual({
      status: 429,
      code: -32000,
      reason: 'STREAM_LIMIT_EXCEEDED',
    });
    expect(body.error.data[0].metadata).toMatchObject({ limit: '2' });
  };

  /** Retries an open until the server has let go of a slot (it learns of a disconnect asynchronously). */
  const admitted = (key: string) =>
    eventually(
      async () => {
        const res = await open(key);
        if (res.status === 200) return res;
        await res.text();
        return undefined;
      },
      'the server to let go of a slot',
      30_000,
    );

  it('refuses a third stream of one principal with -32000 STREAM_LIMIT_EXCEEDED; others are unaffected', async () => {
    const first = await held(alice);
    const second = await held(alice);
    await expectRefused(alice);
    const other = await held(bob);
    await Promise.all([first.rest(), second.rest(), other.rest()]);
  });

  it('frees a slot when the client disconnects, when the task ends and when the server drains', async () => {
    const first = await held(alice);
    const second = await held(alice);
    await expectRefused(alice);

    first.controller.abort();
    const afterDisconnect = await admitted(alice);
    await Promise.all([readSse(afterDisconnect), second.rest()]); // both tasks reach COMPLETED

    const third = await held(alice);
    const fourth = await held(alice);
    await expectRefused(alice);
    expect(server.app.get(OpenStreams).closeAll()).toBe(2);
    const lasts = await Promise.all([third.rest(), fourth.rest()]);
    for (const text of lasts) expect(text).toContain('SERVER_SHUTTING_DOWN');
    await Promise.all([readSse(await admitted(alice)), readSse(await admitted(alice))]);
  });
});

describeNeeding(runningPostgres(), 'a stream on PostgreSQL sends each event once its state is committed', () => {
  let db: TestDatabase;
  let server: TestServer;
  let locker: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db);
    locker = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await locker.connect();
  });

  afterAll(async () => {
    await ifAssigned(locker)?.end();
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('holds the events while their commit waits for a lock, and sends them once it is done', async () => {
    // The counters every task write updates in its transaction: the stream's commit waits for this lock.
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE task_counts IN EXCLUSIVE MODE');
    let answered = false;
    const response = fetch(server.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'held',
        method: 'SendStreamingMessage',
        params: { message: wireMessageV1('tck-stream-001-held') },
      }),
    }).then((res) => {
      answered = true;
      return res;
    });
    try {
      // The server's write is waiting for the lock, and nothing of the stream has been sent.
      const waiting = await eventually(
        async () => {
          // Inside the locker's transaction, pg_stat_activity keeps the snapshot its first read took.
          await locker.query('SELECT pg_stat_clear_snapshot()');
          const rows = await locker.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO tasks%'`,
          );
          return rows.rows[0].n > 0 ? rows.rows[0].n : undefined;
        },
        "the stream's first write to wait for the lock",
        30_000,
      );
      expect(waiting).toBe(1);
      // Had the server answered before storing the task, the response would have started by the time the
      // write waits: 300 ms lets it cross loopback. Once the lock goes, the answer comes (read below).
      await holdsThroughout(() => !answered, 'no answer while the write waits', 300);
    } finally {
      await locker.query('COMMIT');
    }
    const events = await readSse(await response);
    expect(events.map((e) => Object.keys(e.result)[0])).toEqual([
      'task',
      'statusUpdate',
      'artifactUpdate',
      'statusUpdate',
    ]);
    expect(events.at(-1).result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    const stored = await locker.query<{ state: string }>('SELECT state FROM tasks WHERE id = $1', [
      events[0].result.task.id,
    ]);
    expect(stored.rows).toEqual([{ state: 'TASK_STATE_COMPLETED' }]);
  });
});

function streamOf(reader: ReadableStreamDefaultReader<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream({
    async pull(controller) {
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
  });
}
