import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { createTestDatabase, postgresAdminUrl, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { startServer, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { sendRequest } from '../factories/messages.js';
import { stateOf } from '../support/streams.js';

/*
 * Two replicas on one PostgreSQL (SPEC.md §10): a CancelTask that reaches the replica not running the
 * task stops the run on the one that does, and the task stays canceled. PostgreSQL only: the embedded
 * database serves one process.
 */
const describeOnPostgres = postgresAdminUrl() ? describe : describe.skip;

describeOnPostgres('CancelTask across replicas (local backend, PostgreSQL)', () => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let a: TestServer;
  let b: TestServer;
  let onA: Client;
  let onB: Client;

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
});
