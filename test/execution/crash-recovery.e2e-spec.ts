import { Logger } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { openDatabase } from '../../packages/server/src/database/database.startup.js';
import { threadIdFor } from '../../packages/server/src/execution/local/local.backend.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { rawCall } from '../support/server.js';
import { localBackendEnv, startProcess, type ServerProcess } from '../support/server-process.js';
import { until } from '../support/wait.js';
import { sendRequest } from '../factories/messages.js';
import { ENTITIES } from '../../packages/server/src/entities.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * docs/protocol.md §5, §9: the server process is killed (SIGKILL, no shutdown of any kind) while a local-backend
 * task streams its answer; at the next start the task resumes from its checkpoint and completes, and
 * nothing else in the database changed. The server runs as a real process (node dist/main.js).
 */

const SLOW = Array.from({ length: 150 }, (_, i) => `word${i} `);
const QUICK = ['Short ', 'answer.'];

/** Every table but the migrations log, each row as JSON, in a stable order. */
async function snapshot(db: TestDatabase): Promise<Record<string, string[]>> {
  const dataSource = await openDatabase(db.config(), new Logger('crash-recovery'), {
    entities: ENTITIES,
    purpose: 'crash-recovery test snapshot',
  });
  try {
    const tables: { name: string }[] = await dataSource.query(
      `SELECT table_name AS name FROM information_schema.tables
       WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'migrations' ORDER BY 1`,
    );
    const out: Record<string, string[]> = {};
    for (const { name } of tables) {
      const rows: { r: string }[] = await dataSource.query(`SELECT row_to_json(t)::text AS r FROM "${name}" t`);
      out[name] = rows.map((row) => row.r).sort();
    }
    return out;
  } finally {
    await dataSource.destroy();
  }
}

describe.each(databaseTargets())('a server killed mid-task (local backend), on $kind', (target) => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start({ tokens: QUICK });
    db = await target.create();
  });

  afterAll(async () => {
    if (server && server.process.exitCode === null) {
      server.process.kill('SIGKILL');
      await server.exited;
    }
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
  });

  const envOf = (): Record<string, string> => localBackendEnv(db, model.baseUrl(), 2);

  /**
   * Sends `text` and kills the server (SIGKILL, no shutdown of any kind) once 5 pieces of the answer
   * streamed; the task under way.
   */
  async function killMidAnswer(client: Client, text: string, contextId?: string): Promise<Task> {
    let task: Task | undefined;
    let streamed = 0;
    try {
      for await (const event of client.sendMessageStream(sendRequest('m', { text, contextId }))) {
        if (event.payload?.$case === 'task') task = event.payload.value;
        if (event.payload?.$case === 'artifactUpdate' && ++streamed === 5) {
          server!.process.kill('SIGKILL');
          break;
        }
      }
    } catch {
      // The stream breaks when the process dies: expected.
    }
    expect(await server!.exited).toBeNull(); // killed by a signal, not exited
    expect(task).toBeDefined();
    return task!;
  }

  /** The next start: waits until the task cut off by the kill completed; a client of the new server. */
  async function restartUntilCompleted(env: Record<string, string>, taskId: string): Promise<Client> {
    server = await startProcess(env);
    const client = await new ClientFactory().createFromUrl(server.baseUrl);
    await until(
      async () => (await client.getTask({ id: taskId, tenant: '' })).status?.state === TaskState.TASK_STATE_COMPLETED,
      'the task to complete after the restart',
      30000,
    );
    return client;
  }

  it('resumes the task from its checkpoint at the next start; nothing else in the database changed', async () => {
    const env = envOf();
    server = await startProcess(env);
    let client: Client = await new ClientFactory().createFromUrl(server.baseUrl);

    // Other things in the database: a finished task in another session, a registry entry.
    const earlier = (await client.sendMessage(sendRequest('m', { text: 'a quick one' }))) as Task;
    expect(earlier.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const entry = await rawCall(`${server.baseUrl}/a2a`, {
      jsonrpc: '2.0',
      id: 1,
      method: '_cleveragents/registry/create',
      params: { kind: 'skill', name: 'kept', spec: { description: 'd', instructions: 'i' } },
    });
    expect(entry.json.result).toMatchObject({ name: 'kept', revision: 1 });

    // The task under way when the process dies: its answer streams a token every 40 ms.
    model.answerWith({ tokens: SLOW, delayMs: 40 });
    const task = await killMidAnswer(client, 'a long story');
    const requestsBeforeRestart = model.completions.length;

    const before = await snapshot(db);
    const working = JSON.parse(before.tasks.find((r) => r.includes(task.id))!);
    expect(working.state).toBe('TASK_STATE_WORKING');

    // The next start: the model answers quickly now.
    model.answerWith({ tokens: QUICK });
    client = await restartUntilCompleted(env, task.id);
    const done = await client.getTask({ id: task.id, tenant: '' });
    const answer = done.artifacts.find((a) => a.name === 'answer')!;
    expect(answer.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('')).toBe(QUICK.join(''));
    // The model was asked once more, for this task only, with the conversation from the checkpoint.
    // (The restarted server's /readyz probes GET /models too: not a model call.)
    expect(model.completions.length).toBe(requestsBeforeRestart + 1);
    expect(model.completions.at(-1)!.body.messages).toEqual([
      expect.objectContaining({ role: 'system' }),
      { role: 'user', content: 'a long story' },
    ]);
    expect(server.log()).toMatch(/resuming a task left running/);

    server.process.kill('SIGTERM');
    await server.exited;
    expect(server.log()).toMatch(/shutting down/); // a graceful stop this time
    server = undefined;

    // Nothing else changed: every table is as it was at the kill, but for this task's own rows.
    const after = await snapshot(db);
    const thread = threadIdFor({ namespace: 'default', owner: 'anonymous', contextId: task.contextId });
    const ownRows = (rows: string[]) => rows.filter((r) => r.includes(task.id) || r.includes(thread));
    const otherRows = (rows: string[]) => rows.filter((r) => !r.includes(task.id) && !r.includes(thread));
    // The task's session counts what the recovered turn used (the killed turn's count died with it).
    const sessionOf = (rows: string[]) => rows.map((r) => JSON.parse(r)).find((r) => r.id === task.contextId);
    expect(sessionOf(before.sessions).usage).toBeNull();
    expect(sessionOf(after.sessions).usage).toEqual({
      tokens: expect.any(Number),
      toolCalls: 0,
      wallTimeMs: expect.any(Number),
    });
    expect(sessionOf(after.sessions).usage.tokens).toBeGreaterThan(0);
    const withoutUsage = (table: string, rows: string[]) =>
      table !== 'sessions'
        ? rows
        : rows.map((r) => {
            const row = JSON.parse(r);
            return JSON.stringify(row.id === task.contextId ? { ...row, usage: null } : row);
          });
    for (const table of Object.keys(before)) {
      if (table === 'task_counts') continue; // the counters move the task from working to completed
      expect({ table, rows: withoutUsage(table, otherRows(after[table])) }).toEqual({
        table,
        rows: withoutUsage(table, otherRows(before[table])),
      });
    }
    expect(Object.keys(after)).toEqual(Object.keys(before));
    const counts = (rows: string[]) =>
      rows
        .map((r) => JSON.parse(r) as { state: string; count: string })
        .reduce<Partial<Record<string, number>>>(
          (acc, r) => ({ ...acc, [r.state]: (acc[r.state] ?? 0) + Number(r.count) }),
          {},
        );
    const moved = counts(after.task_counts);
    const was = counts(before.task_counts);
    expect(moved.TASK_STATE_WORKING ?? 0).toBe((was.TASK_STATE_WORKING ?? 0) - 1);
    expect(moved.TASK_STATE_COMPLETED).toBe((was.TASK_STATE_COMPLETED ?? 0) + 1);
    expect(ownRows(after.task_runs).map((r) => JSON.parse(r).state)).toEqual(['resting']);
    expect(JSON.parse(after.tasks.find((r) => r.includes(task.id))!).state).toBe('TASK_STATE_COMPLETED');
  }, 120000);

  it('what a killed turn used before it died stays counted on its session and its plan', async () => {
    const env = envOf();
    server = await startProcess(env);
    const client: Client = await new ClientFactory().createFromUrl(server.baseUrl);
    const created = await rawCall(`${server.baseUrl}/a2a`, {
      jsonrpc: '2.0',
      id: 1,
      method: '_cleveragents/session/create',
      params: { profile: 'autonomous' },
    });
    const contextId = created.json.result.sessionId as string;
    // The first model call writes a plan (no gate under `autonomous`) and reports what it used; the
    // second streams its answer slowly, and the process dies during it.
    let calls = 0;
    model.answerWith(() =>
      ++calls === 1
        ? {
            toolCalls: [
              {
                id: 'call-plan',
                name: 'update_plan',
                arguments: JSON.stringify({
                  entries: [{ content: 'Tell the story', priority: 'high', status: 'pending' }],
                }),
              },
            ],
            usage: { promptTokens: 11, completionTokens: 7 },
          }
        : { tokens: SLOW, delayMs: 40 },
    );
    const task = await killMidAnswer(client, 'a long story', contextId);
    expect(calls).toBe(2);

    const rowOf = (rows: string[], test: (row: Record<string, unknown>) => boolean) =>
      rows.map((r) => JSON.parse(r) as Record<string, unknown>).find(test)!;
    const before = await snapshot(db);
    const sessionBefore = rowOf(before.sessions, (r) => r.id === contextId);
    const planBefore = rowOf(before.plans, (r) => r.task_id === task.id);
    // The first model call's 18 tokens were written when it reported them, not lost with the process.
    expect(sessionBefore.usage).toEqual({ tokens: 18, toolCalls: 0, wallTimeMs: expect.any(Number) });
    expect(planBefore.usage).toEqual({ tokens: 18, toolCalls: 0, wallTimeMs: expect.any(Number) });
    expect(planBefore.status).toBe('executing');

    model.answerWith({ tokens: QUICK, usage: { promptTokens: 20, completionTokens: 2 } });
    await restartUntilCompleted(env, task.id);
    server.process.kill('SIGTERM');
    await server.exited;
    server = undefined;
    // The recovered turn's own call is added to what the killed turn had counted.
    const after = await snapshot(db);
    const sessionAfter = rowOf(after.sessions, (r) => r.id === contextId);
    const planAfter = rowOf(after.plans, (r) => r.task_id === task.id);
    expect((sessionAfter.usage as { tokens: number }).tokens).toBe(40);
    expect((planAfter.usage as { tokens: number }).tokens).toBe(40);
    expect(planAfter.status).toBe('completed');
  }, 120000);
});
