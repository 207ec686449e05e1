import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import pg from 'pg';
import { AppConfig } from '../../packages/server/src/config/app.config.js';
import { TEST_DEFAULTS, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { PostgresCluster, postgresBinaries } from '../support/postgres-cluster.js';
import { startServer, type TestServer } from '../support/server.js';
import { partText, stateOf } from '../support/streams.js';
import { sendRequest } from '../factories/messages.js';
import { describeNeeding, postgresServerBinaries } from '../support/requirements.js';
import { ifAssigned } from '../support/assigned.js';
import { sseCall } from '../support/sse.js';
import { until } from '../support/wait.js';

/*
 * PostgreSQL goes away for a moment (a failover, a minor-version upgrade, a network hiccup) while turns
 * run on the local backend: their events wait and are stored once it is back, and every task ends as it
 * would have without the outage — also when the outage outlasts CLEVERAGENTS_DATABASE_RETRY_SECONDS, which
 * bounds what a client's call waits, not what a running turn does (CLEVERAGENTS_TURN_OUTAGE_SECONDS). Past
 * that, the turns let go and are taken over once the database is back: no task ends with an untrue reason.
 */

const WORDS = Array.from({ length: 25 }, (_, i) => `w${i} `);
const ANSWER = WORDS.join('');
const LEASE_SECONDS = 2;
/** CLEVERAGENTS_DATABASE_RETRY_SECONDS of the first rig: shorter than its outages. */
const RETRY_SECONDS = 3;
const BIN = postgresBinaries();

interface Outcome {
  taskId: string;
  /** The last state the client saw (a stream's last event, a blocking call's task). */
  state: TaskState | undefined;
  error?: string;
}

/**
 * Resolves once every chat request from the `from`th on (`count` of them) has streamed `tokens` tokens of
 * its answer: the turns are under way, each a few words in.
 */
async function turnsUnderWay(model: OpenAiCompatibleEndpoint, from: number, count: number, tokens = 3): Promise<void> {
  await until(() => model.requests.length >= from + count, 'every turn to ask the model', 30_000);
  await until(
    () => model.requests.slice(from, from + count).every((r) => r.tokensSent >= tokens),
    `every answer to be ${tokens} words in`,
    30_000,
  );
}

/** A throwaway cluster, a model endpoint and a server on them running the local backend with `env`. */
async function outageRig(
  env: Record<string, string>,
): Promise<{ cluster: PostgresCluster; model: OpenAiCompatibleEndpoint; server: TestServer; log: string[] }> {
  const cluster = await PostgresCluster.start(BIN!);
  const model = await OpenAiCompatibleEndpoint.start({ tokens: WORDS, delayMs: 100 });
  const databaseEnv = { DATABASE_URL: cluster.url };
  const db: TestDatabase = {
    kind: 'postgres',
    env: databaseEnv,
    config: (extra = {}) => AppConfig.fromEnv({ ...TEST_DEFAULTS, ...databaseEnv, ...extra }),
    cleanup: () => Promise.resolve(),
  };
  const log: string[] = [];
  const logSink = { write: (line: string) => log.push(line) > 0 };
  const server = await startServer(
    db,
    {
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'onprem-model',
      CLEVERAGENTS_TASK_LEASE_SECONDS: String(LEASE_SECONDS),
      ...env,
    },
    { logSink },
  );
  return { cluster, model, server, log };
}

/** The times (ms) at which a turn's commit found the database away and began waiting for it, as logged. */
function eventWritesWaiting(log: string[]): number[] {
  return log
    .filter((line) => line.includes('"msg":"database unreachable: retrying"') && line.includes("store a task's events"))
    .map((line) => Date.parse((JSON.parse(line) as { time: string }).time));
}

describeNeeding(postgresServerBinaries(), 'PostgreSQL going away while turns run (local backend)', () => {
  let cluster: PostgresCluster;
  let model: OpenAiCompatibleEndpoint;
  let server: TestServer;
  let log: string[];
  let client: Client;

  beforeAll(async () => {
    // A retry budget shorter than the outages below: a turn's events wait past it.
    ({ cluster, model, server, log } = await outageRig({ CLEVERAGENTS_DATABASE_RETRY_SECONDS: String(RETRY_SECONDS) }));
    client = await new ClientFactory().createFromUrl(server.baseUrl);
  }, 60_000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(model)?.close();
    await ifAssigned(cluster)?.destroy();
  });

  async function storedRuns(): Promise<{ task_id: string; state: string; lease_owner: string | null }[]> {
    const c = new pg.Client({ connectionString: cluster.url });
    await c.connect();
    try {
      return (await c.query('SELECT task_id, state, lease_owner FROM task_runs')).rows;
    } finally {
      await c.end();
    }
  }

  /**
   * Starts `streams` streaming and `blocking` blocking SendMessage calls; once every turn is under way
   * (each asked the model and streamed part of its answer), runs `fault`; resolves with what each
   * client saw.
   */
  async function turnsThrough(fault: () => Promise<void>, streams = 4, blocking = 4): Promise<Outcome[]> {
    const requestsBefore = model.requests.length;
    const streaming = Array.from({ length: streams }, async (_, i): Promise<Outcome> => {
      const events: StreamResponse[] = [];
      let taskId = '';
      try {
        for await (const event of client.sendMessageStream(sendRequest('s', { text: `stream ${i}` }))) {
          events.push(event);
          if (event.payload?.$case === 'task') taskId = event.payload.value.id;
        }
        return { taskId, state: stateOf(events.at(-1)) };
      } catch (error) {
        return { taskId, state: stateOf(events.filter((e) => stateOf(e) !== undefined).at(-1)), error: String(error) };
      }
    });
    const waiting = Array.from({ length: blocking }, async (_, i): Promise<Outcome> => {
      try {
        const task = (await client.sendMessage(sendRequest('b', { text: `blocking ${i}` }))) as Task;
        return { taskId: task.id, state: task.status?.state };
      } catch (error) {
        return { taskId: '', state: undefined, error: String(error) };
      }
    });
    await turnsUnderWay(model, requestsBefore, streams + blocking);
    await fault();
    return Promise.all([...streaming, ...waiting]);
  }

  async function expectAllCompleted(outcomes: Outcome[], requestsBefore: number): Promise<void> {
    expect(outcomes.map((o) => o.error ?? 'ok')).toEqual(outcomes.map(() => 'ok'));
    expect(outcomes.map((o) => o.state)).toEqual(outcomes.map(() => TaskState.TASK_STATE_COMPLETED));
    for (const outcome of outcomes) {
      const task = await client.getTask({ id: outcome.taskId, tenant: '' });
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const answer = task.artifacts.find((a) => a.name === 'answer');
      expect(answer?.parts.map((p) => partText(p as never)).join('')).toBe(ANSWER);
    }
    // One model call per turn: no turn was run again.
    expect(model.requests.length - requestsBefore).toBe(outcomes.length);
  }

  it('a sub-second restart (pg_ctl restart -m fast) fails no turn', async () => {
    const before = model.requests.length;
    const outcomes = await turnsThrough(() => cluster.restart());
    await expectAllCompleted(outcomes, before);
  }, 60_000);

  it('an outage longer than the retry budget: every turn completes, and every run comes to rest', async () => {
    const before = model.requests.length;
    const outcomes = await turnsThrough(async () => {
      const waitingBefore = eventWritesWaiting(log).length;
      await cluster.stop();
      try {
        // A turn's events find the database away and wait for it...
        await until(() => eventWritesWaiting(log).length > waitingBefore, "a turn's events to wait", 30_000);
        const since = eventWritesWaiting(log)[waitingBefore];
        // ...longer than a write bounded by the retry budget would: past the budget, and past the last try
        // such a write makes (its backoff is 1 s at most), with a second to spare.
        const outlasted = since + RETRY_SECONDS * 1000 + 2000;
        await until(() => Date.now() >= outlasted, 'the outage to outlast the retry budget', 30_000);
      } finally {
        await cluster.resume();
      }
    });
    await expectAllCompleted(outcomes, before);
    // Nothing holds a lease once its turn is done: the runs rest (a run left leased would stay so).
    await until(
      async () => (await storedRuns()).every((r) => r.state === 'resting'),
      'every run to rest',
      LEASE_SECONDS * 1000 + 30_000,
    );
  }, 90_000);
});

describeNeeding(postgresServerBinaries(), 'PostgreSQL away longer than a turn waits (local backend)', () => {
  const TURN_OUTAGE_SECONDS = 3;
  let cluster: PostgresCluster;
  let model: OpenAiCompatibleEndpoint;
  let server: TestServer;

  beforeAll(async () => {
    ({ cluster, model, server } = await outageRig({
      CLEVERAGENTS_DATABASE_RETRY_SECONDS: '2',
      CLEVERAGENTS_TURN_OUTAGE_SECONDS: String(TURN_OUTAGE_SECONDS),
    }));
  }, 60_000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(model)?.close();
    await ifAssigned(cluster)?.destroy();
  });

  async function stored(taskIds: string[]): Promise<{ id: string; state: string; task: Task }[]> {
    const c = new pg.Client({ connectionString: cluster.url });
    await c.connect();
    try {
      const rows = await c.query('SELECT id, state, task FROM tasks WHERE id = ANY($1)', [taskIds]);
      return rows.rows as { id: string; state: string; task: Task }[];
    } finally {
      await c.end();
    }
  }

  it('the turns let go, are taken over once it is back, and complete; their clients resume each stream', async () => {
    const before = model.requests.length;
    const ready = async () => (await fetch(`${server.baseUrl}/readyz`).catch(() => undefined))?.status === 200;
    // Three streams, each read to its end: after a break, picked up after the last event seen, once the
    // server is ready again. Each stream's errors are the breaks it saw.
    const breaks = Array.from({ length: 3 }, (): string[] => []);
    const followed = breaks.map(async (errors, i) => {
      const seen: number[] = [];
      let taskId = '';
      let body: unknown = {
        jsonrpc: '2.0',
        id: i,
        method: 'SendStreamingMessage',
        params: { message: { messageId: `outage-${i}`, role: 'ROLE_USER', parts: [{ text: `stream ${i}` }] } },
      };
      const deadline = Date.now() + 90_000;
      for (;;) {
        let ended = false;
        for await (const event of sseCall(server.endpoint, body)) {
          if (event.message.error) {
            errors.push(JSON.stringify(event.message.error.data?.[0]));
            break;
          }
          const result = event.message.result!;
          taskId ||= (result.task as { id?: string } | undefined)?.id ?? '';
          seen.push(event.id!);
          const state = (result.statusUpdate as { status?: { state?: string } } | undefined)?.status?.state;
          if (state === 'TASK_STATE_COMPLETED' || state === 'TASK_STATE_FAILED') ended = true;
        }
        if (ended) return { taskId, seen, errors };
        if (!taskId || Date.now() > deadline) throw new Error(`stream ${i} did not end: ${errors.join('; ')}`);
        await until(ready, 'the server to be ready again', Math.max(1, deadline - Date.now()));
        body = { jsonrpc: '2.0', id: i, method: 'SubscribeToTask', params: { id: taskId, lastSequence: seen.at(-1) } };
      }
    });
    await turnsUnderWay(model, before, 3);
    await cluster.stop();
    try {
      // Away longer than the turns wait (TURN_OUTAGE_SECONDS): each lets go, which ends its stream with a
      // retryable error (a stream shows only what is stored, so nothing else ends it meanwhile).
      await until(() => breaks.every((errors) => errors.length > 0), 'every turn to let go', 60_000);
    } finally {
      await cluster.resume();
    }
    const outcomes = await Promise.all(followed);
    // Each stream broke during the outage with a retryable error, and was picked up where it broke.
    for (const outcome of outcomes) {
      expect(outcome.errors.length).toBeGreaterThan(0);
      for (const error of outcome.errors) expect(error).toMatch(/"retryable":"true"/);
      expect(outcome.seen).toEqual(Array.from({ length: outcome.seen.length }, (_, k) => k + 1));
    }
    const tasks = await stored(outcomes.map((o) => o.taskId));
    expect(tasks.map((t) => t.state)).toEqual(tasks.map(() => 'TASK_STATE_COMPLETED'));
    for (const { task } of tasks) {
      const answer = (task.artifacts as unknown as { name: string; parts: { text?: string }[] }[]).find(
        (a) => a.name === 'answer',
      );
      expect(answer?.parts.map((p) => p.text ?? '').join('')).toBe(ANSWER);
    }
  }, 150_000);
});
