import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { fieldsOf, rawCall, reasonOf, startServer, type TestServer } from '../support/server.js';
import { wireMessageV03, wireMessageV1 } from '../factories/messages.js';
import { ifAssigned } from '../support/assigned.js';

/** Bad input on the standard methods: -32602 naming the field, never a 500, nothing huge echoed back. */
describe.each(databaseTargets())('input limits over raw HTTP on $kind', (target) => {
  let db: TestDatabase;
  let server: TestServer;
  let call: (body: unknown, headers?: Record<string, string>) => ReturnType<typeof rawCall>;
  let taskId: string;
  const HOOK = 'http://127.0.0.1:9/a2a-hook';

  const totalTasks = async () =>
    (await call({ jsonrpc: '2.0', id: 0, method: 'ListTasks', params: {} })).json.result.totalSize as number;
  const configIds = async (): Promise<string[]> => {
    const listed = await call({ jsonrpc: '2.0', id: 0, method: 'ListTaskPushNotificationConfigs', params: { taskId } });
    expect(listed.json.error).toBeUndefined();
    return (listed.json.result.configs ?? []).map((c: { id: string }) => c.id); // proto JSON omits an empty list
  };

  function expectInvalid(answer: { status: number; json: any; text: string }, field: string): void {
    expect(answer.status).toBe(200);
    expect(answer.json.error.code).toBe(-32602);
    expect(fieldsOf(answer)).toContain(field);
    expect(answer.text.length).toBeLessThan(4096);
  }

  beforeAll(async () => {
    db = await target.create();
    server = await startServer(db, { CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1' });
    call = (body, headers) => rawCall(server.endpoint, body, headers);
    const sent = await call({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: wireMessageV1('tck-input-required') },
    });
    taskId = sent.json.result.task.id;
  });

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  describe('lone UTF-16 surrogates', () => {
    it('in a message text are -32602 naming the JSON path, and no task is created', async () => {
      const before = await totalTasks();
      const answer = await call(
        '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":' +
          JSON.stringify(wireMessageV1('tck-complete-task', 'PLACEHOLDER')).replace('PLACEHOLDER', 'a\\ud800b') +
          '}}',
      );
      expectInvalid(answer, 'params.message.parts[0].text');
      expect(reasonOf(answer)).toBe('LONE_SURROGATE');
      expect(await totalTasks()).toBe(before);
    });

    it('in a registry spec and in a key are -32602 too', async () => {
      const spec = await call(
        '{"jsonrpc":"2.0","id":1,"method":"_cleveragents/registry/create",' +
          '"params":{"kind":"tool","name":"t1","spec":{"description":"x\\udc00"}}}',
      );
      expectInvalid(spec, 'params.spec.description');
      const key = await call('{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","\\ud800":1}}');
      expectInvalid(key, 'params');
    });
  });

  describe('v0.3 params are validated before the SDK sees them', () => {
    it('tasks/cancel with a non-string id is -32602 naming id', async () => {
      expectInvalid(await call({ jsonrpc: '2.0', id: 1, method: 'tasks/cancel', params: { id: true } }), 'id');
      expectInvalid(await call({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: {} }), 'id');
      expectInvalid(await call({ jsonrpc: '2.0', id: 1, method: 'tasks/resubscribe', params: [] }), 'params');
    });

    it('tasks/pushNotificationConfig/set without the config is -32602 naming it, and nothing is stored', async () => {
      const before = await configIds();
      expectInvalid(
        await call({ jsonrpc: '2.0', id: 1, method: 'tasks/pushNotificationConfig/set', params: { taskId } }),
        'pushNotificationConfig',
      );
      expectInvalid(
        await call({
          jsonrpc: '2.0',
          id: 2,
          method: 'tasks/pushNotificationConfig/set',
          params: { taskId, pushNotificationConfig: { url: 42 } },
        }),
        'pushNotificationConfig.url',
      );
      expectInvalid(
        await call({
          jsonrpc: '2.0',
          id: 3,
          method: 'tasks/pushNotificationConfig/delete',
          params: { id: taskId, pushNotificationConfigId: { x: 1 } },
        }),
        'pushNotificationConfigId',
      );
      expect(await configIds()).toEqual(before);
    });

    it('v1.0 CancelTask and GetTaskPushNotificationConfig with wrong types are -32602 too', async () => {
      expectInvalid(await call({ jsonrpc: '2.0', id: 1, method: 'CancelTask', params: { id: true } }), 'id');
      expectInvalid(
        await call({ jsonrpc: '2.0', id: 2, method: 'GetTaskPushNotificationConfig', params: { taskId, id: 7 } }),
        'id',
      );
      expectInvalid(
        await call({ jsonrpc: '2.0', id: 3, method: 'GetTask', params: { id: 'x', historyLength: 'all' } }),
        'historyLength',
      );
    });
  });

  describe('identifiers, URLs and credentials are bounded', () => {
    it('a 900 KB push-config id is -32602 naming id, and nothing is stored', async () => {
      const before = await configIds();
      const answer = await call({
        jsonrpc: '2.0',
        id: 1,
        method: 'CreateTaskPushNotificationConfig',
        params: { taskId, id: 'c'.repeat(900 * 1024), url: HOOK },
      });
      expectInvalid(answer, 'id');
      expect(await configIds()).toEqual(before);
    });

    it('a 200 KB webhook URL is -32602 naming url, in both versions', async () => {
      const url = `${HOOK}?pad=${'p'.repeat(200 * 1024)}`;
      expectInvalid(
        await call({ jsonrpc: '2.0', id: 1, method: 'CreateTaskPushNotificationConfig', params: { taskId, url } }),
        'url',
      );
      expectInvalid(
        await call({
          jsonrpc: '2.0',
          id: 2,
          method: 'tasks/pushNotificationConfig/set',
          params: { taskId, pushNotificationConfig: { url } },
        }),
        'pushNotificationConfig.url',
      );
    });

    it('a 900 KB messageId is -32602 naming it, in both versions, and no task is created', async () => {
      const before = await totalTasks();
      const big = 'm'.repeat(900 * 1024);
      expectInvalid(
        await call({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { ...wireMessageV1('tck-complete-task'), messageId: big } },
        }),
        'message.messageId',
      );
      expectInvalid(
        await call({
          jsonrpc: '2.0',
          id: 2,
          method: 'message/send',
          params: { message: { ...wireMessageV03('tck-complete-task'), messageId: big } },
        }),
        'message.messageId',
      );
      expect(await totalTasks()).toBe(before);
    });

    it('an oversized tenant is -32602 naming it, not echoed', async () => {
      const answer = await call({
        jsonrpc: '2.0',
        id: 1,
        method: 'GetTask',
        params: { tenant: 't'.repeat(900 * 1024), id: 'x' },
      });
      expectInvalid(answer, 'tenant');
      const extension = await call({
        jsonrpc: '2.0',
        id: 2,
        method: '_cleveragents/registry/list',
        params: { namespace: 'n'.repeat(900 * 1024) },
      });
      expectInvalid(extension, 'namespace');
    });

    it('an unknown method is echoed as a short prefix only', async () => {
      for (const method of [`_cleveragents/${'x'.repeat(900 * 1024)}`, `Do${'x'.repeat(900 * 1024)}`]) {
        const answer = await call({ jsonrpc: '2.0', id: 1, method }, { 'A2A-Version': '1.0' });
        expect(answer.json.error.code).toBe(-32601);
        expect(answer.text.length).toBeLessThan(1024);
      }
    });

    it('a JSON-RPC id over the limit is -32600, not echoed', async () => {
      const answer = await call({ jsonrpc: '2.0', id: 'i'.repeat(900 * 1024), method: 'GetTask', params: {} });
      expect(answer.text.length).toBeLessThan(1024);
      expect(answer.json).toMatchObject({ id: null, error: { code: -32600 } });
    });

    it('CR/LF in push credentials or token is -32602 at registration, in both versions', async () => {
      const before = await configIds();
      expectInvalid(
        await call({
          jsonrpc: '2.0',
          id: 1,
          method: 'CreateTaskPushNotificationConfig',
          params: { taskId, url: HOOK, authentication: { scheme: 'Bearer', credentials: 'a\r\nX-Injected: 1' } },
        }),
        'authentication.credentials',
      );
      expectInvalid(
        await call({
          jsonrpc: '2.0',
          id: 2,
          method: 'CreateTaskPushNotificationConfig',
          params: { taskId, url: HOOK, token: 'tok\nen' },
        }),
        'token',
      );
      expectInvalid(
        await call({
          jsonrpc: '2.0',
          id: 3,
          method: 'tasks/pushNotificationConfig/set',
          params: {
            taskId,
            pushNotificationConfig: { url: HOOK, authentication: { schemes: ['Bearer'], credentials: 'a\r\nb' } },
          },
        }),
        'pushNotificationConfig.authentication.credentials',
      );
      expect(await configIds()).toEqual(before);
    });

    it('identifiers and URLs within the limits are still accepted', async () => {
      const id = 'c'.repeat(256);
      const set = await call({
        jsonrpc: '2.0',
        id: 1,
        method: 'CreateTaskPushNotificationConfig',
        params: { taskId, id, url: `${HOOK}?p=${'p'.repeat(1500)}`, token: 'tok-1' },
      });
      expect(set.json.result).toMatchObject({ id, taskId });
      expect(await configIds()).toContain(id);
    });
  });
});
