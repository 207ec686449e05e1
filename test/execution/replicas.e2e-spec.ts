import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { DataSource } from 'typeorm';
import { SessionWorkflow } from '../../src/session/session.workflow.js';
import { createTestDatabase, postgresAdminUrl, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { statusData } from '../support/orchestration.js';
import { extensionCalls, startServer, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { sendRequest } from '../factories/messages.js';
import { partText, stateOf } from '../support/streams.js';

/*
 * Two replicas on one PostgreSQL (SPEC.md §10): a CancelTask that reaches the replica not running the
 * task stops the run on the one that does, and the task stays canceled; a plan/pause that reaches it
 * stops the turn there too, and plan/resume goes on from either. PostgreSQL only: the embedded database
 * serves one process.
 */
const describeOnPostgres = postgresAdminUrl() ? describe : describe.skip;

describeOnPostgres('CancelTask and plan/pause across replicas (local backend, PostgreSQL)', () => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let a: TestServer;
  let b: TestServer;
  let onA: Client;
  let onB: Client;
  const rpcOnA = extensionCalls(() => a);
  const rpcOnB = extensionCalls(() => b);

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start({ tokens: ['x'] });
    db = await createTestDatabase();
    const env = {
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'onprem-model',
    };
    a = await startServer(db, env);
    b = await startServer(db, env);
    onA = await new ClientFactory().createFromUrl(a.baseUrl);
    onB = await new ClientFactory().createFromUrl(b.baseUrl);
  }, 60000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.cleanup();
    await model?.close();
  });

  it('a CancelTask on B stops the turn running on A; the task ends canceled and stays so', async () => {
    model.answerWith({ tokens: Array.from({ length: 200 }, (_, i) => `t${i} `), delayMs: 20 });
    const hangUps = model.hangUps;
    const events: StreamResponse[] = [];
    let taskId = '';
    let canceledOnB: TaskState | undefined;
    for await (const event of onA.sendMessageStream(sendRequest('m', { text: 'long, on A' }))) {
      events.push(event);
      if (event.payload?.$case === 'task') taskId = event.payload.value.id;
      if (event.payload?.$case === 'artifactUpdate' && canceledOnB === undefined) {
        canceledOnB = TaskState.TASK_STATE_UNSPECIFIED;
        const canceled = await onB.cancelTask({ id: taskId, tenant: '' } as never);
        canceledOnB = canceled.status?.state;
      }
    }
    expect(canceledOnB).toBe(TaskState.TASK_STATE_CANCELED);
    // A's own stream ends with the canceled status its workflow published; its model call was stopped.
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_CANCELED);
    await until(() => model.hangUps === hangUps + 1, 'the model call on A to be stopped');
    // Nothing on A overwrites it afterwards: both replicas read it canceled, with fewer tokens than asked.
    for (const client of [onA, onB]) {
      const stored = await client.getTask({ id: taskId, tenant: '' } as never);
      expect(stored.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    }
  });

  it('a plan/pause on B stops the turn running on A; the task waits paused, and plan/resume on B completes it', async () => {
    model.answerWith({ tokens: Array.from({ length: 400 }, (_, i) => `p${i} `), delayMs: 20 });
    const plan = await rpcOnA.ok('plan/create', { goal: 'long, on A', entries: [{ content: 'Write a long answer' }] });
    await rpcOnA.ok('plan/approve', { planId: plan.planId });
    const started = await rpcOnA.ok('plan/execute', { planId: plan.planId });
    const getTask = (client: Client): Promise<Task> =>
      client.getTask({ id: started.taskId, tenant: '', historyLength: 0 } as never);
    // The turn runs on A: its tokens are stored, and A is the replica running a turn.
    await until(async () => (await getTask(onA)).artifacts.length > 0, 'answer tokens from the turn on A', 15000);
    expect(a.app.get(SessionWorkflow).runningTurns).toBe(1);
    expect(b.app.get(SessionWorkflow).runningTurns).toBe(0);
    const hangUps = model.hangUps;
    const requests = model.requests.length;

    // Paused on B: the answer comes once the task's paused status is stored, so both replicas read it.
    expect(await rpcOnB.ok('plan/pause', { planId: plan.planId })).toMatchObject({ status: 'paused' });
    for (const client of [onB, onA]) {
      const paused = await getTask(client);
      expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      expect(partText(paused.status?.message?.parts[0] as never)).toBe(
        `Plan ${plan.planId} is paused; resume it with _cleveragents/plan/resume.`,
      );
      expect(statusData(paused).find((d) => d.type === 'cleveragents/plan')?.plan).toMatchObject({
        planId: plan.planId,
        status: 'paused',
      });
    }
    // The turn on A really stopped: its model call was hung up on, and A runs no turn any more.
    await until(() => model.hangUps === hangUps + 1, 'the model call on A to be stopped');
    expect(a.app.get(SessionWorkflow).runningTurns).toBe(0);
    // A let the run go as it rested: no replica holds its lease, so whichever gets plan/resume takes it up.
    const runs: { state: string; lease_owner: string | null }[] = await b.app
      .get(DataSource)
      .query('SELECT state, lease_owner FROM task_runs WHERE task_id = $1', [started.taskId]);
    expect(runs).toEqual([{ state: 'resting', lease_owner: null }]);

    // Resumed on B: the turn goes on from its checkpoint (one more model call) to the end.
    model.answerWith({ tokens: ['resumed ', 'on ', 'B.'] });
    expect(model.requests.length).toBe(requests);
    expect(await rpcOnB.ok('plan/resume', { planId: plan.planId })).toMatchObject({ status: 'executing' });
    await until(
      async () => (await getTask(onA)).status?.state === TaskState.TASK_STATE_COMPLETED,
      'the resumed task to complete',
      15000,
    );
    for (const client of [onA, onB]) {
      const done = await getTask(client);
      expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(partText(done.status?.message?.parts[0] as never)).toBe('resumed on B.');
    }
    expect(model.requests.length).toBe(requests + 1);
    for (const rpc of [rpcOnA, rpcOnB]) {
      expect(await rpc.ok('plan/get', { planId: plan.planId })).toMatchObject({ status: 'completed' });
    }
  });
});
