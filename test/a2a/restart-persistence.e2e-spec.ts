import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { startServer } from '../support/server.js';
import { sendRequest } from '../factories/messages.js';
import { ifAssigned } from '../support/assigned.js';

describe.each(databaseTargets())('tasks survive a restart on $kind', (target) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await target.create();
  });

  afterAll(async () => {
    await ifAssigned(db)?.cleanup();
  });

  it('GetTask and ListTasks return, after a restart, what was written before it', async () => {
    const env = { CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1' };
    const first = await startServer(db, env);
    const written: Task[] = [];
    let contextId = '';
    try {
      const client = await new ClientFactory().createFromUrl(first.baseUrl);
      const opening = (await client.sendMessage(sendRequest('tck-artifact-text'))) as Task;
      contextId = opening.contextId;
      written.push(opening);
      for (let i = 0; i < 3; i++) {
        written.push((await client.sendMessage(sendRequest('tck-complete-task', { contextId }))) as Task);
      }
      const waiting = (await client.sendMessage(sendRequest('tck-input-required', { contextId }))) as Task;
      written.push(waiting);
      await client.createTaskPushNotificationConfig({
        tenant: '',
        id: 'kept-config',
        taskId: waiting.id,
        url: 'http://127.0.0.1:9/kept',
        token: 'kept-token',
        authentication: undefined,
      });
    } finally {
      await first.close();
    }

    const second = await startServer(db, env);
    try {
      const client = await new ClientFactory().createFromUrl(second.baseUrl);
      for (const before of written) {
        const after = await client.getTask({ tenant: '', id: before.id });
        expect(after.status?.state).toBe(before.status?.state);
        expect(after.contextId).toBe(contextId);
        expect(after.artifacts).toEqual(before.artifacts);
        expect(after.history.map((m) => m.messageId)).toEqual(before.history.map((m) => m.messageId));
      }
      const listed = await client.listTasks({
        tenant: '',
        contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 50,
      } as never);
      expect(listed.totalSize).toBe(written.length);
      expect(new Set(listed.tasks.map((t) => t.id))).toEqual(new Set(written.map((t) => t.id)));
      const waiting = written.at(-1)!;
      const configs = await client.listTaskPushNotificationConfig({ tenant: '', taskId: waiting.id } as never);
      expect(configs.configs.map((c) => [c.id, c.url, c.token])).toEqual([
        ['kept-config', 'http://127.0.0.1:9/kept', 'kept-token'],
      ]);
      // The waiting task can still be continued after the restart.
      const resumed = (await client.sendMessage(
        sendRequest('tck-complete-task', { contextId, taskId: waiting.id }),
      )) as Task;
      expect(resumed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    } finally {
      await second.close();
    }
  });
});
