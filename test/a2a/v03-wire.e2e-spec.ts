import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { rawCall, startServer, type TestServer } from '../support/server.js';
import { wireMessageV03 } from '../factories/messages.js';
import { ifAssigned } from '../support/assigned.js';

const V03 = { 'A2A-Version': '0.3' };

/** The A2A v0.3 wire where it differs from v1.0, over raw HTTP against the real server. */
describe('the A2A v0.3 wire', () => {
  let db: TestDatabase;
  let server: TestServer;
  let id = 0;
  const call = (method: string, params: unknown, headers: Record<string, string> = V03) =>
    rawCall(server.endpoint, { jsonrpc: '2.0', id: ++id, method, params }, headers);

  /** A v0.3 task that waits for input, so that configs can be set on it. */
  async function waitingTask(): Promise<string> {
    const sent = await call('message/send', { message: wireMessageV03('tck-input-required') });
    expect(sent.json.result.status.state).toBe('input-required');
    return sent.json.result.id as string;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db, { CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1' });
  }, 60_000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  describe('tasks/pushNotificationConfig/get without a config id', () => {
    it('answers the task config created first', async () => {
      const taskId = await waitingTask();
      for (const name of ['first', 'second']) {
        const set = await call('tasks/pushNotificationConfig/set', {
          taskId,
          pushNotificationConfig: { id: name, url: `http://127.0.0.1:9/${name}` },
        });
        expect(set.json.error).toBeUndefined();
      }
      const got = await call('tasks/pushNotificationConfig/get', { id: taskId });
      expect(got.json.error).toBeUndefined();
      expect(got.json.result).toMatchObject({
        taskId,
        pushNotificationConfig: { id: 'first', url: 'http://127.0.0.1:9/first' },
      });
      const named = await call('tasks/pushNotificationConfig/get', { id: taskId, pushNotificationConfigId: 'second' });
      expect(named.json.result.pushNotificationConfig.id).toBe('second');
      await call('tasks/cancel', { id: taskId });
    });

    it('a task without configs is -32001 naming the task', async () => {
      const taskId = await waitingTask();
      const got = await call('tasks/pushNotificationConfig/get', { id: taskId });
      expect(got.json.error.code).toBe(-32001);
      expect(got.json.error.message).toContain(taskId);
      expect(got.json.error.message).not.toContain("id ''");
      await call('tasks/cancel', { id: taskId });
    });
  });
});
