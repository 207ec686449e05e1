import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { localBackendEnv, startProcess, stopAll, type ServerProcess } from '../support/server-process.js';
import { sseCall, type SseEvent } from '../support/sse.js';
import { describeNeeding, runningPostgres } from '../support/requirements.js';
import { ifAssigned } from '../support/assigned.js';
import { until } from '../support/wait.js';

/*
 * Resumable streams (docs/execution.md, "The event log"): a client reads half of a task's stream, goes away,
 * and picks the task up again with SubscribeToTask `lastSequence`: on the same replica, and on another one
 * after the first was killed (SIGKILL) or stopped (SIGTERM) and the second took the turn over. It ends with
 * every event once, in order, numbered 1..n with no gap, exactly what the task's log holds, and with the
 * stored answer.
 */

const LEASE_SECONDS = 2;
const WORDS = Array.from({ length: 160 }, (_, i) => `w${i} `);
const SEQUENCE_KEY = 'cleveragents/sequence';
/** How long a client keeps trying to pick its task up again (a take-over is within two lease periods). */
const RESUME_WINDOW_MS = 60_000;

interface Seen {
  seq: number;
  result: Record<string, unknown>;
}

describeNeeding(runningPostgres(), 'resumable streams across disconnects, kills and replicas (PostgreSQL)', () => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let env: Record<string, string>;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start({ tokens: WORDS, delayMs: 30 });
    db = await createTestDatabase();
    env = localBackendEnv(db, model.baseUrl(), LEASE_SECONDS);
  }, 60_000);

  afterAll(async () => {
    await stopAll(servers);
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
  });

  async function replica(): Promise<ServerProcess> {
    const server = await startProcess(env);
    servers.push(server);
    return server;
  }

  async function query<T extends pg.QueryResultRow>(sql: string, values: unknown[]): Promise<T[]> {
    const c = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await c.connect();
    try {
      return (await c.query<T>(sql, values)).rows;
    } finally {
      await c.end();
    }
  }

  /** Starts a streaming message on `server` and reads its events until one numbered `upTo`; then goes away. */
  async function readHalf(server: ServerProcess, upTo: number): Promise<{ taskId: string; seen: Seen[] }> {
    const seen: Seen[] = [];
    let taskId = '';
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendStreamingMessage',
      params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'tell me' }] } },
    };
    for await (const event of sseCall(`${server.baseUrl}/a2a`, body)) {
      const result = event.message.result!;
      taskId ||= (result.task as { id?: string } | undefined)?.id ?? '';
      seen.push(numbered(event));
      if (event.id! >= upTo) break;
    }
    return { taskId, seen };
  }

  /**
   * Picks `taskId` up on `server` after `seen`, again and again (after a retryable error, or a stream that
   * ended early) until the task rests; what came is appended to `seen`.
   */
  async function resume(server: ServerProcess, taskId: string, seen: Seen[]): Promise<string[]> {
    const errors: string[] = [];
    const deadline = Date.now() + RESUME_WINDOW_MS;
    for (;;) {
      const lastSequence = seen.at(-1)!.seq;
      const body = { jsonrpc: '2.0', id: 2, method: 'SubscribeToTask', params: { id: taskId, lastSequence } };
      let ended = false;
      for await (const event of sseCall(`${server.baseUrl}/a2a`, body)) {
        if (event.message.error) {
          errors.push(reasonOf(event.message.error));
          break;
        }
        const next = numbered(event);
        seen.push(next);
        if (endsStream(next.result)) ended = true;
      }
      if (ended) return errors;
      const stored = await query<{ state: string }>('SELECT state FROM tasks WHERE id = $1', [taskId]);
      if (
        ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED'].includes(stored[0]?.state) &&
        seen.at(-1)!.seq === (await lastOf(taskId))
      ) {
        return errors;
      }
      // Again once the log has moved on past what was seen: the turn went on, here or where it was taken over.
      const after = seen.at(-1)!.seq;
      await until(
        async () => (await lastOf(taskId)) > after,
        `task ${taskId} to move on past event ${after} (${errors.join(', ')})`,
        Math.max(1, deadline - Date.now()),
        50,
      );
    }
  }

  async function lastOf(taskId: string): Promise<number> {
    const rows = await query<{ last: string }>('SELECT last_sequence AS last FROM tasks WHERE id = $1', [taskId]);
    return Number(rows[0].last);
  }

  /** Every event once, numbered 1..n, each what the log stores, the task complete with the answer they assemble. */
  async function expectWholeLog(taskId: string, seen: Seen[]): Promise<void> {
    const last = await lastOf(taskId);
    expect(seen.map((s) => s.seq)).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    const stored = await query<{ seq: string; event: Record<string, unknown> }>(
      'SELECT seq, event FROM task_events WHERE task_id = $1 ORDER BY seq',
      [taskId],
    );
    expect(stored.map((row) => Number(row.seq))).toEqual(seen.map((s) => s.seq));
    expect(seen.map((s) => withoutSequence(s.result))).toEqual(stored.map((row) => withoutSequence(row.event)));
    const task = (await query<{ task: Record<string, unknown> }>('SELECT task FROM tasks WHERE id = $1', [taskId]))[0]
      .task as { status: { state: string }; artifacts: { name: string; parts: { text?: string }[] }[] };
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const answer = task.artifacts
      .find((a) => a.name === 'answer')!
      .parts.map((p) => p.text ?? '')
      .join('');
    expect(answer).toBe(WORDS.join(''));
    expect(assembled(seen)).toBe(answer);
  }

  describe('one replica', () => {
    it('a client that went away mid-stream picks the task up after its last event, each event once', async () => {
      const a = await replica();
      const { taskId, seen } = await readHalf(a, 20);
      expect(seen.at(-1)!.seq).toBe(20);
      const errors = await resume(a, taskId, seen);
      expect(errors).toEqual([]);
      await expectWholeLog(taskId, seen);
      // Everything seen: picking it up again sends nothing more, and ends.
      const again: SseEvent[] = [];
      const body = {
        jsonrpc: '2.0',
        id: 3,
        method: 'SubscribeToTask',
        params: { id: taskId, lastSequence: seen.at(-1)!.seq },
      };
      for await (const event of sseCall(`${a.baseUrl}/a2a`, body)) again.push(event);
      expect(again).toEqual([]);
      // The header does what the param does.
      const byHeader: Seen[] = [];
      for await (const event of sseCall(
        `${a.baseUrl}/a2a`,
        { jsonrpc: '2.0', id: 4, method: 'SubscribeToTask', params: { id: taskId } },
        { 'last-event-id': String(seen.at(-3)!.seq) },
      )) {
        byHeader.push(numbered(event));
      }
      expect(byHeader.map((s) => s.seq)).toEqual(seen.slice(-2).map((s) => s.seq));
    }, 120_000);
  });

  describe.each([
    ['SIGKILL', 'killed'],
    ['SIGTERM', 'stopped'],
  ] as const)('%s', (signal, how) => {
    it(`a replica ${how} mid-answer: the client picks the task up on another one, which took it over`, async () => {
      const a = await replica();
      const b = await replica();
      const { taskId, seen } = await readHalf(a, 15);
      a.process.kill(signal);
      await a.exited;
      await resume(b, taskId, seen);
      await expectWholeLog(taskId, seen);
      // The turn went on from where it was: the answer was asked for once more at most.
      const runs = await query<{ state: string }>('SELECT state FROM task_runs WHERE task_id = $1', [taskId]);
      expect(runs).toEqual([{ state: 'resting' }]);
      b.process.kill('SIGTERM');
      await b.exited;
    }, 180_000);
  });
});

function numbered(event: SseEvent): Seen {
  const result = event.message.result!;
  const inner = Object.values(result)[0] as { metadata?: Record<string, unknown> };
  const seq = inner.metadata?.[SEQUENCE_KEY];
  // The SSE id and the event's own number are the same.
  expect(seq).toBe(event.id);
  return { seq: seq as number, result };
}

function endsStream(result: Record<string, unknown>): boolean {
  const status = (result.statusUpdate as { status?: { state?: string } } | undefined)?.status?.state;
  return (
    status !== undefined &&
    ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_INPUT_REQUIRED'].includes(status)
  );
}

function reasonOf(error: { code: number; data?: unknown[] }): string {
  const info = error.data?.find((d) => (d as { reason?: string }).reason) as { reason?: string } | undefined;
  return `${error.code} ${info?.reason ?? ''}`;
}

/** An event's JSON without the number a stream adds to its metadata (an empty metadata dropped). */
function withoutSequence(result: Record<string, unknown>): Record<string, unknown> {
  const [kind, value] = Object.entries(structuredClone(result))[0] as [string, Record<string, unknown>];
  const metadata = { ...(value.metadata as Record<string, unknown> | undefined) };
  delete metadata[SEQUENCE_KEY];
  if (Object.keys(metadata).length === 0) delete value.metadata;
  else value.metadata = metadata;
  return { [kind]: value };
}

/** The answer artifact as a client assembles it from the events it saw (append, or replace). */
function assembled(seen: Seen[]): string {
  let answer = '';
  for (const { result } of seen) {
    const update = result.artifactUpdate as
      { append?: boolean; artifact?: { name?: string; parts?: { text?: string }[] } } | undefined;
    if (update?.artifact?.name !== 'answer') continue;
    const chunk = update.artifact.parts?.map((p) => p.text ?? '').join('') ?? '';
    answer = update.append ? answer + chunk : chunk;
  }
  return answer;
}
