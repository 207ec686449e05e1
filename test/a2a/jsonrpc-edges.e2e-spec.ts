import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { rawCall, readSse, startServer, type TestServer } from '../support/server.js';
import { wireMessageV03, wireMessageV1 } from '../factories/messages.js';
import { ifAssigned } from '../support/assigned.js';

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';

function errorInfoOf(json: any): any {
  return (json.error.data as any[]).find((d) => d['@type'] === ERROR_INFO);
}

describe.each(databaseTargets())('JSON-RPC edge cases over raw HTTP on $kind', (target) => {
  let db: TestDatabase;
  let server: TestServer;
  let call: (body: unknown, headers?: Record<string, string>) => ReturnType<typeof rawCall>;

  beforeAll(async () => {
    db = await target.create();
    server = await startServer(db, { CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1' });
    call = (body, headers) => rawCall(server.endpoint, body, headers);
  });

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  describe('malformed requests', () => {
    it('bad JSON is -32700 with an ErrorInfo', async () => {
      const res = await call('{"jsonrpc": "2.0", "id": 1, "method": ');
      expect(res.status).toBe(200);
      expect(res.json.error.code).toBe(-32700);
      expect(res.json.id).toBeNull();
      expect(errorInfoOf(res.json)).toMatchObject({ reason: 'PARSE_ERROR', domain: 'cleveragents' });
    });

    it('a batch array is -32600', async () => {
      const res = await call([{ jsonrpc: '2.0', id: 1, method: '_cleveragents/diagnostics/health' }]);
      expect(res.json.error.code).toBe(-32600);
      expect(errorInfoOf(res.json).reason).toBe('BATCH_NOT_SUPPORTED');
    });

    it('a wrong envelope is -32600 and keeps the id', async () => {
      const res = await call({ jsonrpc: '1.0', id: 7, method: 'GetTask' });
      expect(res.json).toMatchObject({ id: 7, error: { code: -32600 } });
      const noMethod = await call({ jsonrpc: '2.0', id: 8 });
      expect(noMethod.json).toMatchObject({ id: 8, error: { code: -32600 } });
      const badId = await call({ jsonrpc: '2.0', id: { x: 1 }, method: 'GetTask' });
      expect(badId.json.error.code).toBe(-32600);
    });

    it('a text/plain body is -32005 (content type not supported)', async () => {
      const res = await fetch(server.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }),
      });
      const json: any = await res.json();
      expect(json.error.code).toBe(-32005);
    });

    it('an oversized body is HTTP 413 with a JSON-RPC -32600, not an HTML page', async () => {
      const big = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { pad: 'x'.repeat(1100 * 1024) },
      });
      const res = await call(big);
      expect(res.status).toBe(413);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      expect(res.json.error.code).toBe(-32600);
      expect(errorInfoOf(res.json)).toMatchObject({ reason: 'REQUEST_TOO_LARGE', metadata: { limitBytes: '1048576' } });
    });

    it('a body nested deeper than the limit is -32600', async () => {
      const deep = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":${'['.repeat(200)}${']'.repeat(200)}}`;
      const res = await call(deep);
      expect(res.json.error.code).toBe(-32600);
      expect(errorInfoOf(res.json).reason).toBe('JSON_TOO_DEEP');
    });

    it('__proto__ and constructor keys are refused', async () => {
      const proto = await call(
        '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","__proto__":{"polluted":true}}}',
      );
      expect(proto.json.error.code).toBe(-32600);
      expect(errorInfoOf(proto.json)).toMatchObject({ reason: 'FORBIDDEN_KEY', metadata: { key: '__proto__' } });
      const ctor = await call({
        jsonrpc: '2.0',
        id: 2,
        method: 'GetTask',
        params: { id: 'x', constructor: { prototype: {} } },
      });
      expect(errorInfoOf(ctor.json)).toMatchObject({ reason: 'FORBIDDEN_KEY', metadata: { key: 'constructor' } });
      expect(({} as any).polluted).toBeUndefined();
    });

    it('a NUL character in a string is -32602 and nothing is stored', async () => {
      const total = async () =>
        (await call({ jsonrpc: '2.0', id: 0, method: 'ListTasks', params: {} })).json.result.totalSize;
      const before = await total();
      const res = await call({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: wireMessageV1('tck-complete-task', 'a\u0000b') },
      });
      expect(res.json.error.code).toBe(-32602);
      expect(errorInfoOf(res.json)).toMatchObject({ reason: 'NUL_CHARACTER', metadata: { key: 'text' } });
      expect(await total()).toBe(before);
    });

    it('non-JSON-RPC routes answer JSON 404s', async () => {
      const res = await fetch(`${server.baseUrl}/a2a/extra`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
    });
  });

  describe('extension methods', () => {
    it('an unknown _cleveragents method is -32601', async () => {
      const res = await call({ jsonrpc: '2.0', id: 1, method: '_cleveragents/nothing/here' });
      expect(res.json.error.code).toBe(-32601);
      expect(errorInfoOf(res.json)).toMatchObject({
        reason: 'METHOD_NOT_FOUND',
        metadata: { method: '_cleveragents/nothing/here' },
      });
    });

    it('unexpected params are -32602 naming the fields', async () => {
      const res = await call({
        jsonrpc: '2.0',
        id: 1,
        method: '_cleveragents/diagnostics/health',
        params: { verbose: true, depth: 2 },
      });
      expect(res.json.error.code).toBe(-32602);
      const badRequest = (res.json.error.data as any[]).find(
        (d) => d['@type'] === 'type.googleapis.com/google.rpc.BadRequest',
      );
      expect(badRequest.fieldViolations.map((v: any) => v.field).sort()).toEqual(['depth', 'verbose']);
      const notObject = await call({
        jsonrpc: '2.0',
        id: 2,
        method: '_cleveragents/diagnostics/health',
        params: [1, 2],
      });
      expect(notObject.json.error.code).toBe(-32602);
    });

    it('diagnostics/info and health answer whatever A2A-Version says', async () => {
      const info = await call(
        { jsonrpc: '2.0', id: 'i', method: '_cleveragents/diagnostics/info' },
        { 'A2A-Version': '99.0' },
      );
      expect(info.json.result).toMatchObject({
        server: { name: 'CleverAgents Server' },
        a2a: { versions: ['1.0', '0.3'] },
        extension: { uri: 'urn:cleveragents:extensions:v1' },
        actorBackend: 'conformance',
        database: { kind: target.kind },
      });
      const health = await call({ jsonrpc: '2.0', id: 'h', method: '_cleveragents/diagnostics/health' });
      expect(health.json.result).toMatchObject({
        status: 'ok',
        checks: { database: { ok: true }, actorBackend: { ok: true } },
      });
    });

    it('activating the extension echoes A2A-Extensions; an unserved major is -32007', async () => {
      const ok = await call(
        { jsonrpc: '2.0', id: 1, method: '_cleveragents/diagnostics/health' },
        { 'A2A-Extensions': 'urn:cleveragents:extensions:v1' },
      );
      expect(ok.json.result).toBeDefined();
      expect(ok.headers.get('a2a-extensions')).toBe('urn:cleveragents:extensions:v1');
      const v2 = await call(
        { jsonrpc: '2.0', id: 2, method: '_cleveragents/diagnostics/health' },
        { 'A2A-Extensions': 'urn:cleveragents:extensions:v2' },
      );
      expect(v2.json.error.code).toBe(-32007);
      expect(errorInfoOf(v2.json).metadata).toMatchObject({
        supportedVersions: '1.0',
        requested: 'urn:cleveragents:extensions:v2',
      });
    });

    it('the rule of versions: current served, a newer minor served as the current, another major or a malformed one -32007', async () => {
      const health = (uri: string) =>
        call({ jsonrpc: '2.0', id: uri, method: '_cleveragents/diagnostics/health' }, { 'A2A-Extensions': uri });
      const served: [string, string][] = [
        ['urn:cleveragents:extensions:v1.0', 'urn:cleveragents:extensions:v1.0'],
        ['urn:cleveragents:extensions:v1.1', 'urn:cleveragents:extensions:v1.0'],
        ['urn:cleveragents:extensions:v1.7', 'urn:cleveragents:extensions:v1.0'],
      ];
      for (const [asked, answered] of served) {
        const res = await health(asked);
        expect({ asked, error: res.json.error, header: res.headers.get('a2a-extensions') }).toEqual({
          asked,
          error: undefined,
          header: answered,
        });
      }
      for (const asked of [
        'urn:cleveragents:extensions:v0.9',
        'urn:cleveragents:extensions:v2.0',
        'urn:cleveragents:extensions:v1.x',
        'urn:cleveragents:extensions:1.0',
        'urn:cleveragents:extensions:v1.0.0',
      ]) {
        const res = await health(asked);
        expect({ asked, code: res.json.error?.code }).toEqual({ asked, code: -32007 });
        expect(errorInfoOf(res.json)).toMatchObject({
          reason: 'VERSION_MISMATCH',
          metadata: { supportedVersions: '1.0', requested: asked },
        });
        expect(res.json.error.message).toContain('versions 1.0');
      }
      // A standard method activates a newer minor the same way, and ignores a version it does not serve.
      const standard = await call(
        { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'nope' } },
        { 'A2A-Extensions': 'urn:cleveragents:extensions:v1.1, urn:cleveragents:extensions:v2' },
      );
      expect(standard.headers.get('a2a-extensions')).toBe('urn:cleveragents:extensions:v1.0');
    });

    it('on a standard method an unserved extension is not activated, not an error', async () => {
      const res = await call(
        { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: wireMessageV1('tck-complete-task') } },
        { 'A2A-Extensions': 'urn:cleveragents:extensions:v2' },
      );
      expect(res.json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(res.headers.get('a2a-extensions')).toBeNull();
    });

    it('snake_case params are accepted as their camelCase names', async () => {
      // diagnostics takes no params except namespace; a snake-cased unknown field is reported camelCased.
      const res = await call({
        jsonrpc: '2.0',
        id: 1,
        method: '_cleveragents/diagnostics/health',
        params: { plan_id: 'p' },
      });
      expect(res.json.error.data.find((d: any) => d.fieldViolations).fieldViolations[0].field).toBe('planId');
    });
  });

  describe('versions and aliases', () => {
    it('A2A-Version 99.0 is -32009, by header or query parameter', async () => {
      const body = { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } };
      const byHeader = await call(body, { 'A2A-Version': '99.0' });
      expect(byHeader.json.error.code).toBe(-32009);
      expect(errorInfoOf(byHeader.json).domain).toBe('a2a-protocol.org');
      const byQuery = await rawCall(`${server.endpoint}?A2A-Version=99.0`, body);
      expect(byQuery.json.error.code).toBe(-32009);
    });

    it('a PascalCase method without a header is v1.0; with A2A-Version 0.3 it is unknown there', async () => {
      const v1 = await call({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: wireMessageV1('tck-complete-task') },
      });
      expect(v1.json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      const as03 = await call(
        { jsonrpc: '2.0', id: 2, method: 'SendMessage', params: { message: wireMessageV1('tck-complete-task') } },
        { 'A2A-Version': '0.3' },
      );
      expect(as03.json.error.code).toBe(-32601);
      expect(errorInfoOf(as03.json)).toMatchObject({ reason: 'METHOD_NOT_FOUND' });
      expect(as03.json.error.message).toContain("'SendMessage' is the A2A v1.0 name");
      expect(as03.json.error.message).toContain("call 'message/send'");
      expect(as03.json.error.message).toContain('A2A-Version: 1.0');
    });

    it('a v0.3 method with A2A-Version 1.0 is -32601 naming the v1.0 method and the header to drop', async () => {
      const res = await call(
        { jsonrpc: '2.0', id: 3, method: 'message/send', params: { message: wireMessageV03('tck-complete-task') } },
        { 'A2A-Version': '1.0' },
      );
      expect(res.json.error.code).toBe(-32601);
      expect(errorInfoOf(res.json)).toMatchObject({ reason: 'METHOD_NOT_FOUND' });
      expect(res.json.error.message).toContain("'message/send' is the A2A v0.3 name");
      expect(res.json.error.message).toContain("call 'SendMessage'");
      expect(res.json.error.message).toContain('drop the A2A-Version header (or send A2A-Version: 0.3)');
      const listTasks = await call(
        { jsonrpc: '2.0', id: 4, method: 'ListTasks', params: {} },
        { 'A2A-Version': '0.3' },
      );
      expect(listTasks.json.error.code).toBe(-32601);
      expect(listTasks.json.error.message).toContain(
        "'ListTasks' is the A2A v1.0 name; with A2A-Version 0.3 it has no v0.3 name",
      );
    });

    it('a v0.3 method without a header is v0.3', async () => {
      const res = await call({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: wireMessageV03('tck-complete-task') },
      });
      expect(res.json.result).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    });

    it('a v0.3 message written by hand (no messageId, no kinds) is completed, not refused; an ambiguous part is not guessed at', async () => {
      const res = await call({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { role: 'user', parts: [{ text: 'tck-complete-task' }] } },
      });
      expect(res.json.error).toBeUndefined();
      expect(res.json.result).toMatchObject({ kind: 'task', status: { state: 'completed' } });
      const sent = res.json.result.history.find((m: any) => m.role === 'user');
      expect(sent).toMatchObject({ kind: 'message', parts: [{ kind: 'text', text: 'tck-complete-task' }] });
      expect(sent.messageId).toMatch(/^[0-9a-f-]{36}$/);
      // A part that names two kinds is not guessed at.
      const ambiguous = await call({
        jsonrpc: '2.0',
        id: 2,
        method: 'message/send',
        params: { message: { role: 'user', parts: [{ text: 'x', data: { a: 1 } }] } },
      });
      expect(ambiguous.json.error.code).toBe(-32602);
      expect(ambiguous.json.error.data.find((d: any) => d.fieldViolations).fieldViolations[0].field).toBe(
        'message.parts[0].kind',
      );
    });

    it('the trailing-slash endpoint is the same endpoint', async () => {
      const res = await rawCall(`${server.endpoint}/`, {
        jsonrpc: '2.0',
        id: 1,
        method: '_cleveragents/diagnostics/health',
      });
      expect(res.json.result.status).toBe('ok');
    });

    it('the aliases of docs/protocol.md §3.2 are served as the v1.0 operations', async () => {
      const sent = await call({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: wireMessageV1('tck-input-required') },
      });
      const task = sent.json.result.task;
      const listed = await call({ jsonrpc: '2.0', id: 2, method: 'tasks/list', params: { contextId: task.contextId } });
      expect(listed.json.result).toMatchObject({ totalSize: 1, tasks: [{ id: task.id }] });
      expect(listed.json.result.nextPageToken).toBe('');

      const set = await call({
        jsonrpc: '2.0',
        id: 3,
        method: 'pushNotificationConfig/set',
        params: { taskId: task.id, id: 'alias-cfg', url: 'http://127.0.0.1:9/a2a-hook', token: 't' },
      });
      expect(set.json.result).toMatchObject({ id: 'alias-cfg', taskId: task.id, url: 'http://127.0.0.1:9/a2a-hook' });
      const got = await call({
        jsonrpc: '2.0',
        id: 4,
        method: 'pushNotificationConfig/get',
        params: { taskId: task.id, id: 'alias-cfg' },
      });
      expect(got.json.result.id).toBe('alias-cfg');
      const list = await call({
        jsonrpc: '2.0',
        id: 5,
        method: 'pushNotificationConfig/list',
        params: { taskId: task.id },
      });
      expect(list.json.result.configs).toHaveLength(1);
      const del = await call({
        jsonrpc: '2.0',
        id: 6,
        method: 'pushNotificationConfig/delete',
        params: { taskId: task.id, id: 'alias-cfg' },
      });
      expect(del.json).toMatchObject({ id: 6, result: null });

      const card = await call({ jsonrpc: '2.0', id: 7, method: 'getExtendedAgentCard' });
      expect(card.json.result.capabilities.extendedAgentCard).toBe(true); // the v1.0 extended card

      const res = await fetch(server.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tasks/subscribe', params: { id: task.id } }),
      });
      expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
      // input-required keeps the task open; cancel it from another call so the stream ends.
      const eventsPromise = readSse(res);
      await call({ jsonrpc: '2.0', id: 9, method: 'CancelTask', params: { id: task.id } });
      const events = await eventsPromise;
      expect(events[0].result.task.id).toBe(task.id);
      expect(events.at(-1).result.statusUpdate.status.state).toBe('TASK_STATE_CANCELED');
    });

    it('a malformed message is -32602 naming the field, and no task is created', async () => {
      const total = async () =>
        (await call({ jsonrpc: '2.0', id: 0, method: 'ListTasks', params: {} })).json.result.totalSize;
      const before = await total();
      const cases: [unknown, string][] = [
        [{ messageId: 'm1', role: 'ROLE_USER', parts: 'invalid' }, 'message.parts'],
        [{ messageId: 'm2', role: 'ROLE_USER', parts: [] }, 'message.parts'],
        [{ messageId: 'm3', parts: [{ text: 'x' }] }, 'message.role'],
        [{ role: 'ROLE_USER', parts: [{ text: 'x' }] }, 'message.messageId'],
        [{ messageId: 'm5', role: 'ROLE_USER', parts: [{ text: 'x', url: 'http://x' }] }, 'message.parts[0]'],
        [{ messageId: 'm6', role: 'ROLE_USER', parts: [{ text: 42 }] }, 'message.parts[0].text'],
      ];
      for (const [message, field] of cases) {
        const res = await call({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message } });
        expect(res.json.error.code).toBe(-32602);
        const violations = res.json.error.data.find((d: any) => d.fieldViolations).fieldViolations;
        expect(violations.map((v: any) => v.field)).toContain(field);
      }
      const noMessage = await call({ jsonrpc: '2.0', id: 2, method: 'SendStreamingMessage', params: {} });
      expect(noMessage.json.error.code).toBe(-32602);
      const legacy = await call({
        jsonrpc: '2.0',
        id: 3,
        method: 'message/send',
        params: { message: { kind: 'message', messageId: 'm7', role: 'user', parts: [{ kind: 'image', text: 'x' }] } },
      });
      expect(legacy.json.error.code).toBe(-32602);
      expect(legacy.json.error.data.find((d: any) => d.fieldViolations).fieldViolations[0].field).toBe(
        'message.parts[0].kind',
      );
      expect(await total()).toBe(before);
    });

    it('a task takes at most 10 push configs (the default cap); the next is -32602 naming taskId', async () => {
      const sent = await call({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: wireMessageV1('tck-input-required') },
      });
      const taskId = sent.json.result.task.id;
      const set = (n: number) =>
        call({
          jsonrpc: '2.0',
          id: n,
          method: 'CreateTaskPushNotificationConfig',
          params: { taskId, id: `cfg-${n}`, url: 'http://127.0.0.1:9/a2a-hook' },
        });
      for (let n = 1; n <= 10; n++) expect((await set(n)).json.error).toBeUndefined();
      const refused = await set(11);
      expect(refused.json.error?.code).toBe(-32602);
      expect(errorInfoOf(refused.json).metadata).toMatchObject({
        field: 'taskId',
        limit: '10',
        setting: 'CLEVERAGENTS_MAX_PUSH_CONFIGS_PER_TASK',
      });
      const list = await call({
        jsonrpc: '2.0',
        id: 12,
        method: 'ListTaskPushNotificationConfigs',
        params: { taskId },
      });
      expect(list.json.result.configs).toHaveLength(10);
      await call({ jsonrpc: '2.0', id: 13, method: 'CancelTask', params: { id: taskId } });
    });

    it('an unknown standard method is -32601; an unknown task is -32001 with the A2A ErrorInfo', async () => {
      const unknown = await call(
        { jsonrpc: '2.0', id: 1, method: 'DoSomething', params: {} },
        { 'A2A-Version': '1.0' },
      );
      expect(unknown.json.error.code).toBe(-32601);
      expect(errorInfoOf(unknown.json)).toMatchObject({ reason: 'METHOD_NOT_FOUND' });
      expect(unknown.json.error.message).toBe('Method not found: DoSomething');
      const missing = await call({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: 'nope' } });
      expect(missing.json.error.code).toBe(-32001);
      expect(errorInfoOf(missing.json)).toMatchObject({ reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' });
    });

    it('streams are text/event-stream, everything else application/json; X-Request-Id is echoed', async () => {
      const res = await fetch(server.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'req-123' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 's',
          method: 'SendStreamingMessage',
          params: { message: wireMessageV1('tck-stream-002') },
        }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
      expect(res.headers.get('x-request-id')).toBe('req-123');
      const events = await readSse(res);
      expect(events.every((e) => e.id === 's' && e.jsonrpc === '2.0')).toBe(true);
      expect(events.at(-1).result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    });
  });

  describe('operational probes', () => {
    it('healthz, readyz and metrics', async () => {
      expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
      const ready = await fetch(`${server.baseUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ok' });
      const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
      expect(metrics).toMatch(/cleveragents_rpc_requests_total\{[^}]*method="_cleveragents\/diagnostics\/health"/);
      expect(metrics).toMatch(/cleveragents_rpc_requests_total\{[^}]*method="\(unknown\)"/);
    });
  });
});
