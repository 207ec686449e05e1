import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { rawCall, readSse, startServer, type TestServer } from '../support/server.js';
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

  describe('errors of streaming methods', () => {
    const post = (method: string, params: unknown, headers: Record<string, string>) =>
      fetch(server.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 'e', method, params }),
      });

    /** The one event of an SSE answer that carries only an error, and the stream has ended. */
    async function onlyEvent(res: Response): Promise<any> {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
      const events = await readSse(res);
      expect(events).toHaveLength(1);
      return events[0];
    }

    it('v0.3 tasks/resubscribe of an unknown task is one SSE event with the -32001 error', async () => {
      const event = await onlyEvent(await post('tasks/resubscribe', { id: 'no-such-task' }, V03));
      expect(event).toMatchObject({ jsonrpc: '2.0', id: 'e', error: { code: -32001 } });
      expect(event.result).toBeUndefined();
      // No header at all is v0.3 too.
      const bare = await onlyEvent(await post('tasks/resubscribe', { id: 'no-such-task' }, {}));
      expect(bare.error.code).toBe(-32001);
    });

    it('v0.3 message/stream refused before it starts (invalid params) is one SSE event with -32602', async () => {
      const event = await onlyEvent(await post('message/stream', { message: { kind: 'message', role: 'user' } }, V03));
      expect(event).toMatchObject({ id: 'e', error: { code: -32602 } });
      const fields = event.error.data.find((d: any) => d.fieldViolations).fieldViolations.map((v: any) => v.field);
      expect(fields).toContain('message.parts');
    });

    it('v1.0 keeps the plain JSON error', async () => {
      const res = await post('SubscribeToTask', { id: 'no-such-task' }, { 'A2A-Version': '1.0' });
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      expect((await res.json()).error.code).toBe(-32001);
      const invalid = await post('SendStreamingMessage', {}, { 'A2A-Version': '1.0' });
      expect(invalid.headers.get('content-type')).toMatch(/application\/json/);
      expect((await invalid.json()).error.code).toBe(-32602);
    });
  });

  describe('push config refusals', () => {
    const errorInfo = (json: any) =>
      (json.error.data as any[]).find((d) => d['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo');

    /** The same refusal over v1.0 and v0.3: code, ErrorInfo and BadRequest details alike. */
    async function refusedAlike(taskId: string, config: { id: string; url: string }): Promise<any> {
      const v1 = await call('CreateTaskPushNotificationConfig', { taskId, ...config }, { 'A2A-Version': '1.0' });
      const v03 = await call('tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: config });
      expect(v1.json.error.code).toBe(-32602);
      expect(v03.json.error.code).toBe(-32602);
      expect(v03.json.error.data).toEqual(v1.json.error.data);
      expect(v03.json.error.message).toBe(v1.json.error.message);
      return errorInfo(v03.json);
    }

    it('a webhook URL the guard refuses carries the same ErrorInfo on both versions', async () => {
      const taskId = await waitingTask();
      const info = await refusedAlike(taskId, { id: 'private', url: 'http://10.1.2.3/hook' });
      expect(info).toMatchObject({
        reason: 'INVALID_PARAMS',
        domain: 'a2a-protocol.org',
        metadata: { field: 'url', setting: 'CLEVERAGENTS_PUSH_ALLOWED_HOSTS' },
      });
      await call('tasks/cancel', { id: taskId });
    });

    it('a webhook refused inline in v0.3 message/send carries the same ErrorInfo', async () => {
      const sent = await call('message/send', {
        message: wireMessageV03('tck-complete-task'),
        configuration: { pushNotificationConfig: { url: 'http://10.1.2.3/hook' } },
      });
      expect(sent.json.error.code).toBe(-32602);
      expect(errorInfo(sent.json)).toMatchObject({
        domain: 'a2a-protocol.org',
        metadata: { field: 'url', setting: 'CLEVERAGENTS_PUSH_ALLOWED_HOSTS' },
      });
    });

    it('a config past the per-task cap carries the same ErrorInfo on both versions', async () => {
      const taskId = await waitingTask();
      for (let n = 1; n <= 10; n++) {
        const set = await call('tasks/pushNotificationConfig/set', {
          taskId,
          pushNotificationConfig: { id: `cfg-${n}`, url: 'http://127.0.0.1:9/hook' },
        });
        expect(set.json.error).toBeUndefined();
      }
      const info = await refusedAlike(taskId, { id: 'cfg-11', url: 'http://127.0.0.1:9/hook' });
      expect(info).toMatchObject({
        domain: 'a2a-protocol.org',
        metadata: { field: 'taskId', limit: '10', setting: 'CLEVERAGENTS_MAX_PUSH_CONFIGS_PER_TASK' },
      });
      await call('tasks/cancel', { id: taskId });
    });
  });
});
