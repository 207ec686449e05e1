/**
 * The A2A TCK 1.0 (github.com/a2aproject/a2a-tck, branch 1.0-dev) checks that apply to a server with
 * only JSON-RPC interfaces, replayed over raw HTTP against the real server started with
 * CLEVERAGENTS_ACTOR_BACKEND=conformance and CLEVERAGENTS_AUTH_SCHEMES=none.
 *
 * Each test title starts with the TCK requirement id it mirrors (tck/requirements/*.py), or with the
 * SUT scenario (scenarios/*.feature) it exercises. Requests are shaped the way the TCK's JSON-RPC
 * transport sends them: `A2A-Version: 1.0` on every call, posts to `<interface url>/`, and the
 * snake_case parameter names its client uses for GetTask/ListTasks/push configs (`history_length`,
 * `context_id`, `page_size`, `task_id`). Payloads the TCK validates are validated against the
 * official A2A v1.0 JSON Schema bundle (../shared/a2a/a2a-v1.0.schema.json beside the project).
 *
 * One deliberate difference from a bare `…=conformance …=none` start: push-notification webhooks in
 * these tests point at a receiver on 127.0.0.1, so CLEVERAGENTS_PUSH_ALLOWED_HOSTS admits it (the TCK's
 * own receiver also listens on localhost and needs the same setting).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { startServer, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { wireMessageV03 } from '../factories/messages.js';
import { definitionErrors, type A2aDefinition } from '../support/a2a-definitions.js';
import {
  errorInfoOf,
  kindOf,
  stateOf,
  STREAM_RESPONSE_KEYS,
  TERMINAL_STATES,
  TckJsonRpcClient,
  tckId,
  userMessage,
  WebhookReceiver,
  type RpcResponse,
  type SseStream,
} from './tck-support.js';
import { ifAssigned } from '../support/assigned.js';

const A2A_DOMAIN = 'a2a-protocol.org';
/** The hold of a `test-resubscribe-message-id` task: 2 × the TCK's 2 s streaming timeout. */

/** A stream request that was answered with plain JSON (an error before any event), as a response. */
function answerOf(stream: { status: number; headers: Headers; contentType: string; json: any }) {
  return {
    status: stream.status,
    headers: stream.headers,
    contentType: stream.contentType,
    json: stream.json,
    text: '',
  };
}

const RESUBSCRIBE_HOLD_MS = 4000;

/** JSON-RPC checks common to every error the TCK inspects (JSONRPC-ERR-001). */
function expectErrorObject(res: RpcResponse, code: number): any {
  expect(res.contentType).toMatch(/application\/json/);
  expect(res.json?.jsonrpc).toBe('2.0');
  expect(res.json).not.toHaveProperty('result');
  const error = res.json?.error;
  expect(error).toBeDefined();
  expect(Object.keys(error).every((k) => ['code', 'message', 'data'].includes(k))).toBe(true);
  expect(Number.isInteger(error.code)).toBe(true);
  expect(typeof error.message).toBe('string');
  if ('data' in error) expect(Array.isArray(error.data)).toBe(true);
  expect(error.code).toBe(code);
  return error;
}

/** An A2A-specific error: code, and a google.rpc.ErrorInfo with the A2A domain and reason (JSONRPC-ERR-003). */
function expectA2aError(res: RpcResponse, code: number, reason: string): void {
  const error = expectErrorObject(res, code);
  expect(code).toBeGreaterThanOrEqual(-32099);
  expect(code).toBeLessThanOrEqual(-32001);
  expect(errorInfoOf(error)).toMatchObject({ domain: A2A_DOMAIN, reason });
}

function expectSchema(definition: A2aDefinition, value: unknown): void {
  expect(definitionErrors(definition, value)).toEqual([]);
}

function expectResult(res: RpcResponse, id?: string | number): any {
  expect(res.contentType).toMatch(/application\/json/);
  expect(res.json?.jsonrpc).toBe('2.0');
  if (res.json?.error) throw new Error(`expected a result, got error ${JSON.stringify(res.json.error)}`);
  if (id !== undefined) expect(res.json.id).toBe(id);
  expect(res.json).toHaveProperty('result');
  return res.json.result;
}

/** Keys that look snake_case (DM-SERIAL-001 uses the same pattern). */
function snakeCaseKeys(value: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => snakeCaseKeys(v, found));
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (/^[a-z]+(_[a-z]+)+$/.test(key)) found.add(key);
      snakeCaseKeys(v, found);
    }
  }
  return found;
}

function valuesOf(value: unknown, key: string, found: unknown[] = []): unknown[] {
  if (Array.isArray(value)) value.forEach((v) => valuesOf(v, key, found));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === key) found.push(v);
      valuesOf(v, key, found);
    }
  }
  return found;
}

/** JSON with object keys sorted at every level. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SSE events with the per-request envelope (id, jsonrpc) removed, for comparing two streams (STREAM-ORDER-003). */
function normalised(events: any[]): string[] {
  return events.map(({ id: _id, jsonrpc: _jsonrpc, ...rest }) => canonical(rest));
}

describe.each(databaseTargets())('A2A TCK 1.0 JSON-RPC checks against the conformance backend on $kind', (target) => {
  let db: TestDatabase;
  let server: TestServer;
  let webhook: WebhookReceiver;
  let card: any;
  let cardResponse: Response;
  /** The TCK's JSON-RPC client: posts to `<card JSONRPC url>/` with A2A-Version 1.0. */
  let rpc: TckJsonRpcClient;
  /** The TCK's raw `_jsonrpc_call`: posts to the card's JSONRPC url exactly. */
  let raw: TckJsonRpcClient;

  beforeAll(async () => {
    webhook = new WebhookReceiver();
    await webhook.start();
    db = await target.create();
    server = await startServer(db, {
      CLEVERAGENTS_ACTOR_BACKEND: 'conformance',
      CLEVERAGENTS_AUTH_SCHEMES: 'none',
      CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1',
    });
    // The TCK discovers the card at {host}/.well-known/agent-card.json, with no A2A-Version header.
    cardResponse = await fetch(`${server.baseUrl}/.well-known/agent-card.json`);
    card = await cardResponse.clone().json();
    // The first JSONRPC interface wins (the TCK's preference order).
    const iface = card.supportedInterfaces.find((i: any) => i.protocolBinding === 'JSONRPC');
    rpc = new TckJsonRpcClient(`${iface.url}/`);
    raw = new TckJsonRpcClient(iface.url);
  });

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(webhook)?.close();
  });

  /** The server's open streams, as /metrics counts them. */
  async function openStreams(): Promise<number> {
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    return Number(/^cleveragents_open_streams (\d+)/m.exec(metrics)?.[1]);
  }

  /** SendMessage with a conformance prefix; answers the result (Task or Message wrapper). */
  async function send(
    prefix: string,
    extra: Record<string, unknown> = {},
    configuration?: Record<string, unknown>,
  ): Promise<any> {
    const params: Record<string, unknown> = { message: userMessage(prefix, 'TCK prerequisite task creation', extra) };
    if (configuration) params.configuration = configuration;
    return expectResult(await rpc.call('SendMessage', params));
  }

  /** The TCK's create_completed_task / create_working_task helpers. */
  async function createTask(prefix: string, state: string, extra: Record<string, unknown> = {}): Promise<any> {
    const result = await send(prefix, extra);
    expect(result.task?.status?.state).toBe(state);
    return result.task;
  }

  /** The TCK's create_multiturn_task: input-required, then a follow-up that completes it. */
  async function createMultiturnTask(): Promise<any> {
    const task = await createTask('tck-input-required', 'TASK_STATE_INPUT_REQUIRED');
    const result = await send('tck-complete-task', { taskId: task.id });
    expect(result.task.status.state).toBe('TASK_STATE_COMPLETED');
    return result.task;
  }

  // -------------------------------------------------------------------------------------------------
  describe('Agent Card (tests/compatibility/agent_card/*)', () => {
    it('CARD-DISC-001: the Agent Card is served at /.well-known/agent-card.json as a JSON object', () => {
      expect(cardResponse.status).toBe(200);
      expect(cardResponse.headers.get('content-type')).toMatch(/application\/json/);
      expect(card && typeof card === 'object' && !Array.isArray(card)).toBe(true);
    });

    it('CARD-STRUCT-001: the card validates against "Agent Card" and has every required field', () => {
      expectSchema('Agent Card', card);
      for (const field of [
        'name',
        'description',
        'version',
        'capabilities',
        'skills',
        'supportedInterfaces',
        'defaultInputModes',
        'defaultOutputModes',
      ]) {
        expect(card).toHaveProperty(field);
      }
    });

    it('CARD-PROTO-001: supportedInterfaces is a non-empty list', () => {
      expect(Array.isArray(card.supportedInterfaces)).toBe(true);
      expect(card.supportedInterfaces.length).toBeGreaterThan(0);
    });

    it('CARD-PROTO-002: each interface validates against "Agent Interface" and answers JSON-RPC at its URL in its version', async () => {
      for (const iface of card.supportedInterfaces) {
        expectSchema('Agent Interface', iface);
        expect(iface.url).toMatch(/^https?:\/\//);
        const client = new TckJsonRpcClient(iface.url, iface.protocolVersion);
        const method = iface.protocolVersion === '0.3' ? 'tasks/get' : 'GetTask';
        const res = await client.call(method, { id: tckId('nonexistent-card-proto-002') });
        expect(res.json?.error?.code).toBe(-32001);
      }
    });

    it('BIND-FIELD-001: every declared binding is JSONRPC (the only one served), and the first is protocolVersion 1.0', () => {
      const bindings = card.supportedInterfaces.map((i: any) => i.protocolBinding);
      expect(new Set(bindings)).toEqual(new Set(['JSONRPC']));
      expect(card.supportedInterfaces[0]).toMatchObject({ protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
      expect(card.supportedInterfaces.map((i: any) => i.protocolVersion).sort()).toEqual(['0.3', '1.0']);
    });

    it('CARD-CACHE-001 (SHOULD): Cache-Control with a max-age directive', () => {
      expect(cardResponse.headers.get('cache-control') ?? '').toMatch(/max-age=\d+/i);
    });

    it('CARD-CACHE-002 (SHOULD): an ETag header', () => {
      expect(cardResponse.headers.get('etag')).toBeTruthy();
    });

    it('capabilities gate the TCK: streaming and pushNotifications are declared (CORE-CAP-001/002 do not apply), no required extension (CORE-CAP-004 does not apply)', () => {
      expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
      expect((card.capabilities.extensions ?? []).filter((e: any) => e.required === true)).toEqual([]);
    });

    it('CORE-CAP-003: extendedAgentCard is declared, so GetExtendedAgentCard answers a valid Agent Card', async () => {
      expect(card.capabilities.extendedAgentCard).toBe(true);
      const extended = expectResult(await rpc.call('GetExtendedAgentCard', {}));
      expectSchema('Agent Card', extended);
      expect((extended as { name: string }).name).toBe(card.name);
    });
  });

  // -------------------------------------------------------------------------------------------------
  describe('JSON-RPC binding (test_transport_behavior.py, test_error_handling.py, jsonrpc/*)', () => {
    it('JSONRPC-FMT-001: a SendMessage answer is a JSON-RPC 2.0 response echoing the id, its result a valid "Send Message Response"', async () => {
      const res = await rpc.call('SendMessage', { message: userMessage('tck-transport-test-001') }, { id: 'fmt-001' });
      const result = expectResult(res, 'fmt-001');
      expectSchema('Send Message Response', result);
    });

    it('JSONRPC-FMT-002: responses are Content-Type application/json, at the interface URL with and without a trailing slash', async () => {
      for (const client of [rpc, raw]) {
        const res = await client.call('SendMessage', { message: userMessage('tck-complete-task') });
        expect(res.contentType).toMatch(/^application\/json/);
        expectResult(res);
      }
    });

    it('JSONRPC-SVC-002: an A2A-Extensions header naming unknown extensions is accepted (no 5xx)', async () => {
      const res = await raw.call(
        'SendMessage',
        { message: userMessage('tck-jsonrpc-svc-002-ext', 'Extensions header test') },
        { headers: { 'A2A-Extensions': 'https://example.com/ext/v1,https://example.com/ext/v2' } },
      );
      expect(res.status).toBeLessThan(500);
      expectResult(res);
    });

    it('JSONRPC-SSE-001: SendStreamingMessage answers text/event-stream; every event is a JSON-RPC response with the request id wrapping one StreamResponse', async () => {
      const stream = await rpc.stream(
        'SendStreamingMessage',
        { message: userMessage('tck-stream-001') },
        { id: 'sse-001' },
      );
      expect(stream.contentType).toMatch(/^text\/event-stream/);
      const events = await stream.drain();
      expect(events.length).toBeGreaterThan(0);
      for (const event of events) {
        expect(event).toMatchObject({ jsonrpc: '2.0', id: 'sse-001' });
        expect(event).toHaveProperty('result');
        expect(STREAM_RESPONSE_KEYS).toContain(kindOf(event.result));
        expectSchema('Stream Response', event.result);
      }
    });

    it('CORE-ERR-001: an unknown method answers an error with a code (-32601) and a message', async () => {
      const res = await raw.call('NonExistentMethod', {});
      expectErrorObject(res, -32601);
    });

    it('CORE-ERR-002: SendMessage with no message is rejected (-32602)', async () => {
      const res = await raw.call('SendMessage', {});
      expectErrorObject(res, -32602);
    });

    it('JSONRPC-ERR-001: an error object holds only code (integer), message (string) and data (array)', async () => {
      const res = await rpc.call('GetTask', { id: tckId('tck-nonexistent-err-test') });
      expectErrorObject(res, -32001);
    });

    it('JSONRPC-ERR-002: error codes are in the A2A range (-32001…-32099) or the JSON-RPC range (-32600…-32700)', async () => {
      const answers = [
        await rpc.call('GetTask', { id: tckId('tck-range-check-001') }),
        await rpc.call('CancelTask', { id: tckId('tck-range-check-002') }),
        await raw.call(
          'SendMessage',
          { message: userMessage('tck-range-check-003') },
          { headers: { 'A2A-Version': '99.0' } },
        ),
      ];
      for (const res of answers) {
        const { code } = res.json.error;
        expect((code <= -32001 && code >= -32099) || (code <= -32600 && code >= -32700)).toBe(true);
      }
    });

    it('JSONRPC-ERR-003: a TaskNotFoundError carries a google.rpc.ErrorInfo (domain a2a-protocol.org, reason TASK_NOT_FOUND) in data', async () => {
      const res = await rpc.call('GetTask', { id: tckId('tck-nonexistent-errinfo-test') });
      expectA2aError(res, -32001, 'TASK_NOT_FOUND');
    });

    it('JSONRPC-SSE-002: A2A errors map to their codes (TaskNotFound -32001, TaskNotCancelable -32002, UnsupportedOperation -32004, ContentTypeNotSupported -32005, VersionNotSupported -32009)', async () => {
      expectA2aError(
        await rpc.call('GetTask', { id: tckId('tck-nonexistent-error-code-001') }),
        -32001,
        'TASK_NOT_FOUND',
      );
      expectA2aError(
        await rpc.call('CancelTask', { id: tckId('tck-nonexistent-error-code-002') }),
        -32001,
        'TASK_NOT_FOUND',
      );
      const completed = await createTask('tck-complete-task', 'TASK_STATE_COMPLETED');
      expectA2aError(await rpc.call('CancelTask', { id: completed.id }), -32002, 'TASK_NOT_CANCELABLE');
      expectA2aError(
        await rpc.call('SendMessage', {
          message: userMessage('tck-terminal', 'Follow-up to terminal task', { taskId: completed.id }),
        }),
        -32004,
        'UNSUPPORTED_OPERATION',
      );
      // The TCK posts a Python repr (not JSON) as text/plain.
      const wrongType = await raw.post(`{'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage'}`, {
        headers: { 'Content-Type': 'text/plain' },
      });
      expectA2aError(wrongType, -32005, 'CONTENT_TYPE_NOT_SUPPORTED');
      expectA2aError(
        await raw.call(
          'SendMessage',
          { message: userMessage('tck-error-code-009') },
          { headers: { 'A2A-Version': '99.0' } },
        ),
        -32009,
        'VERSION_NOT_SUPPORTED',
      );
    });

    it('DM-SERIAL-005 (SHOULD): unrecognised fields in the message and in params are ignored', async () => {
      const message = {
        ...userMessage('tck-dm-serial-005-jsonrpc', 'unrecognized field test'),
        tckUnknownField: 'should-be-ignored',
      };
      const res = await raw.call('SendMessage', { message, tckExtraParam: 42 });
      expectResult(res);
    });
  });

  // -------------------------------------------------------------------------------------------------
  describe('JSON-RPC 2.0 request validation (pre-1.0 TCK: tests/mandatory/jsonrpc/test_json_rpc_compliance.py)', () => {
    it('malformed JSON is -32700 (parse error) with id null', async () => {
      const res = await raw.post('{"jsonrpc": "2.0", "id": 1, "method": ');
      expect(res.status).toBe(200);
      expectErrorObject(res, -32700);
      expect(res.json.id).toBeNull();
    });

    const invalidRequests: Array<[string, number, Record<string, unknown>]> = [
      ['a wrong jsonrpc member', -32600, { jsonrpc: 'aaa', method: 'SendMessage', params: {} }],
      ['no method', -32600, { jsonrpc: '2.0', params: {} }],
      ['an unknown method', -32601, { jsonrpc: '2.0', method: 'SendMessageXXX', id: '3', params: {} }],
      ['an id of the wrong type', -32600, { jsonrpc: '2.0', method: 'SendMessage', params: {}, id: { bad: 'type' } }],
      [
        'params of the wrong shape',
        -32602,
        { jsonrpc: '2.0', method: 'SendMessage', id: '4', params: { '': 'not_a_dict' } },
      ],
      [
        'a message with invalid parts and no messageId',
        -32602,
        { jsonrpc: '2.0', method: 'SendMessage', id: '5', params: { message: { parts: 'invalid' } } },
      ],
    ];
    it.each(invalidRequests)('a request with %s is answered with HTTP 200 and error %d', async (_what, code, body) => {
      const res = await raw.post(body);
      expect(res.status).toBe(200);
      expectErrorObject(res, code);
      if (typeof body.id === 'string') expect(res.json.id).toBe(body.id);
    });
  });

  // -------------------------------------------------------------------------------------------------
  describe('Data model on a SendMessage answer (test_data_model.py)', () => {
    let result: any;
    beforeAll(async () => {
      // An artifact, a status message and history: every object kind the checks look at.
      result = await send('tck-artifact-text');
    });

    it('DM-TASK-001 … DM-STATUS-001, DM-SERIAL-004: the result validates against "Send Message Response" (Task, TaskState, Message, Role, Part, Artifact, TaskStatus)', () => {
      expectSchema('Send Message Response', result);
      expect(result.task).toMatchObject({ id: expect.any(String), status: { state: expect.any(String) } });
      for (const message of result.task.history ?? []) {
        expect(message).toMatchObject({
          role: expect.any(String),
          messageId: expect.any(String),
          parts: expect.any(Array),
        });
      }
      for (const artifact of result.task.artifacts) expect(artifact.parts.length).toBeGreaterThan(0);
    });

    it('DM-SERIAL-001: no snake_case field names', () => {
      expect([...snakeCaseKeys(result)]).toEqual([]);
    });

    it('DM-SERIAL-002: enum values (state, role) are ProtoJSON strings', () => {
      const states = valuesOf(result, 'state');
      const roles = valuesOf(result, 'role');
      expect(states.length).toBeGreaterThan(0);
      expect(roles.length).toBeGreaterThan(0);
      for (const value of states) expect(value).toMatch(/^TASK_STATE_[A-Z_]+$/);
      for (const value of roles) expect(value).toMatch(/^ROLE_(USER|AGENT)$/);
    });

    it('DM-SERIAL-003: timestamps are ISO 8601 in UTC with a Z suffix', () => {
      const stamps = ['timestamp', 'createdAt', 'updatedAt', 'statusTimestamp'].flatMap((key) => valuesOf(result, key));
      expect(stamps.length).toBeGreaterThan(0);
      for (const stamp of stamps) expect(stamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    });
  });

  // -------------------------------------------------------------------------------------------------
  describe('SendMessage per SUT scenario (scenarios/core_operations.feature, test_artifacts.py)', () => {
    it('CORE-SEND-001 / "Complete the task" (tck-complete-task): a completed Task whose status message says "Hello from TCK"', async () => {
      const result = await send('tck-complete-task');
      expectSchema('Send Message Response', result);
      expect(result.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(result.task.status.message).toMatchObject({ role: 'ROLE_AGENT', parts: [{ text: 'Hello from TCK' }] });
    });

    it('DM-ART-001 / "Task with text artifact" (tck-artifact-text): an artifact with an artifactId and the text "Generated text content"', async () => {
      const { task } = await send('tck-artifact-text');
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(task.artifacts[0].artifactId).toBeTruthy();
      expect(task.artifacts[0].parts[0]).toMatchObject({ text: 'Generated text content' });
    });

    it('DM-ART-001 / "Task with file artifact" (tck-artifact-file): a raw file part output.txt, text/plain', async () => {
      const { task } = await send('tck-artifact-file');
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      const part = task.artifacts[0].parts[0];
      expect(task.artifacts[0].artifactId).toBeTruthy();
      expect(part).toMatchObject({ filename: 'output.txt', mediaType: 'text/plain' });
      expect(Buffer.from(part.raw, 'base64').toString('utf8')).toBe('tck');
    });

    it('DM-ART-001 / "Task with file URL artifact" (tck-artifact-file-url): a url part https://example.com/output.txt named output.txt, text/plain', async () => {
      const { task } = await send('tck-artifact-file-url');
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(task.artifacts[0].artifactId).toBeTruthy();
      expect(task.artifacts[0].parts[0]).toEqual(
        expect.objectContaining({
          url: 'https://example.com/output.txt',
          filename: 'output.txt',
          mediaType: 'text/plain',
        }),
      );
      expect(task.artifacts[0].parts[0]).not.toHaveProperty('raw');
    });

    it('DM-ART-001 / "Task with data artifact" (tck-artifact-data): a data part {"key":"value","count":42}', async () => {
      const { task } = await send('tck-artifact-data');
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(task.artifacts[0].artifactId).toBeTruthy();
      expect(task.artifacts[0].parts[0].data).toEqual({ key: 'value', count: 42 });
    });

    it('DM-MSG-001 / "Return message instead of task" (tck-message-response): a Message, not a Task, with the text "Direct message response"', async () => {
      const result = await send('tck-message-response');
      expectSchema('Send Message Response', result);
      expect(result).not.toHaveProperty('task');
      expect(result.message).toMatchObject({
        role: 'ROLE_AGENT',
        messageId: expect.any(String),
        parts: [{ text: 'Direct message response' }],
      });
    });

    it('"Task requiring user input" (tck-input-required): the task stops in TASK_STATE_INPUT_REQUIRED', async () => {
      const { task } = await send('tck-input-required');
      expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    });

    it('"Task rejected by executor" (tck-reject-task): the task ends in the terminal TASK_STATE_REJECTED', async () => {
      const { task } = await send('tck-reject-task');
      expect(task.status.state).toBe('TASK_STATE_REJECTED');
      expect(task.status.message.parts[0].text).toBe('rejected');
    });

    it('CORE-SEND-002: a message to a task in a terminal state (completed, canceled, rejected) is UnsupportedOperationError (-32004)', async () => {
      const completed = await createTask('tck-complete-task', 'TASK_STATE_COMPLETED');
      const rejected = await createTask('tck-reject-task', 'TASK_STATE_REJECTED');
      const canceled = await createTask('tck-input-required', 'TASK_STATE_INPUT_REQUIRED');
      expect(expectResult(await rpc.call('CancelTask', { id: canceled.id })).status.state).toBe('TASK_STATE_CANCELED');
      for (const task of [completed, rejected, canceled]) {
        const res = await rpc.call('SendMessage', {
          message: userMessage('tck-terminal', 'Follow-up to terminal task', { taskId: task.id }),
        });
        expectA2aError(res, -32004, 'UNSUPPORTED_OPERATION');
      }
    });

    // The task holds working for RESUBSCRIBE_HOLD_MS: an answer that shows it completed waited for it.
    it('CORE-EXECUTION-MODE-001: with returnImmediately unset or false, SendMessage waits for the terminal state', async () => {
      const [unset, explicit] = await Promise.all([
        send('test-resubscribe-message-id'),
        send('test-resubscribe-message-id', {}, { returnImmediately: false }),
      ]);
      expect(unset.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(explicit.task.status.state).toBe('TASK_STATE_COMPLETED');
    });

    // An answer that shows the task still in progress did not wait for it to end.
    it('CORE-EXECUTION-MODE-002: with returnImmediately true, SendMessage answers at once with the task still in progress', async () => {
      const { task } = await send('test-resubscribe-message-id', {}, { returnImmediately: true });
      expect(TERMINAL_STATES).not.toContain(task.status.state);
      expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']).toContain(task.status.state);
      // Leave nothing running behind the test.
      expect(expectResult(await rpc.call('CancelTask', { id: task.id })).status.state).toBe('TASK_STATE_CANCELED');
    });
  });

  // -------------------------------------------------------------------------------------------------
  describe('Context and task identifiers (CORE-MULTI-*, test_task_lifecycle.py)', () => {
    it('CORE-MULTI-001a: a contextId the agent generates is in the response (Task and Message)', async () => {
      const taskResult = await send('tck-complete-task');
      expect(taskResult.task.contextId).toEqual(expect.any(String));
      expect(taskResult.task.contextId.length).toBeGreaterThan(0);
      const messageResult = await send('tck-message-response');
      expect(messageResult.message.contextId).toEqual(expect.any(String));
    });

    it('CORE-MULTI-002 (MAY) / CORE-MULTI-002a harness: a client-provided contextId is accepted and preserved', async () => {
      const contextId = tckId('tck-client-context-001');
      const { task } = await send('tck-complete-task', { contextId });
      expect(task.contextId).toBe(contextId);
    });

    it('CORE-MULTI-003: every new task gets a unique, server-generated id', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 3; i++) ids.add((await send('tck-complete-task')).task.id);
      expect(ids.size).toBe(3);
      for (const id of ids) expect(id.length).toBeGreaterThan(0);
    });

    it('CORE-MULTI-004: a message naming a taskId that does not exist is TaskNotFoundError (-32001)', async () => {
      const res = await rpc.call('SendMessage', {
        message: userMessage('tck-multi-004', 'Message to invalid task', {
          taskId: tckId('tck-nonexistent-multi-004'),
        }),
      });
      expectA2aError(res, -32001, 'TASK_NOT_FOUND');
    });

    it('CORE-MULTI-005 / input-required follow-up: a message with only the taskId continues that task, its contextId inferred, and completes it', async () => {
      const task = await createTask('tck-input-required', 'TASK_STATE_INPUT_REQUIRED');
      const res = await rpc.call('SendMessage', {
        message: userMessage('tck-infer-ctx', 'Follow-up message', { taskId: task.id }),
      });
      const result = expectResult(res);
      expect(result.task).toMatchObject({
        id: task.id,
        contextId: task.contextId,
        status: { state: 'TASK_STATE_COMPLETED' },
      });
      const got = expectResult(await rpc.call('GetTask', { id: task.id, historyLength: 10 }));
      const userTexts = got.history.filter((m: any) => m.role === 'ROLE_USER').map((m: any) => m.parts[0].text);
      expect(userTexts).toEqual(['TCK prerequisite task creation', 'Follow-up message']);
      for (const message of got.history.filter((m: any) => m.role === 'ROLE_AGENT')) {
        expect(message.contextId).toBe(task.contextId);
      }
    });

    it("CORE-MULTI-006: a message whose contextId differs from its task's is rejected, and the task is untouched", async () => {
      for (const task of [
        await createTask('tck-complete-task', 'TASK_STATE_COMPLETED'),
        await createTask('tck-input-required', 'TASK_STATE_INPUT_REQUIRED'),
      ]) {
        const res = await rpc.call('SendMessage', {
          message: userMessage('tck-mismatch', 'Mismatched context test', {
            taskId: task.id,
            contextId: tckId('tck-wrong-context'),
          }),
        });
        expect(res.json.error).toBeDefined();
        expect(expectResult(await rpc.call('GetTask', { id: task.id })).status.state).toBe(task.status.state);
      }
    });
  });

  // -------------------------------------------------------------------------------------------------
  describe('SendStreamingMessage (scenarios/streaming.feature, test_stream_ordering.py, test_sse_streaming.py)', () => {
    async function streamOf(prefix: string): Promise<{ stream: SseStream; results: any[] }> {
      const stream = await rpc.stream('SendStreamingMessage', { message: userMessage(prefix) });
      expect(stream.isSse).toBe(true);
      const events = await stream.drain();
      expect(stream.closed).toBe(true);
      return { stream, results: events.map((e) => e.result) };
    }

    it('CORE-STREAM-001 / "Basic streaming lifecycle" (tck-stream-001): Task, working, artifact "Stream hello from TCK", completed, then the stream closes', async () => {
      const { results } = await streamOf('tck-stream-001');
      expect(results.map(kindOf)).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
      expect(results[1].statusUpdate.status.state).toBe('TASK_STATE_WORKING');
      expect(results[2].artifactUpdate.artifact.parts[0].text).toBe('Stream hello from TCK');
      expect(results[3].statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
      const taskId = results[0].task.id;
      for (const r of results.slice(1)) expect((r.statusUpdate ?? r.artifactUpdate).taskId).toBe(taskId);
    });

    it('CORE-STREAM-002: when the agent answers with a Message, the stream holds exactly that one Message and closes (tck-message-response)', async () => {
      const { results } = await streamOf('tck-message-response');
      expect(results).toHaveLength(1);
      expect(kindOf(results[0])).toBe('message');
      expect(results[0].message.parts[0].text).toBe('Direct message response');
      expectSchema('Stream Response', results[0]);
    });

    it('"Message-only stream" (tck-stream-002): the SUT completes the task at once: Task, then completed, then close', async () => {
      const { results } = await streamOf('tck-stream-002');
      expect(results.map(kindOf)).toEqual(['task', 'statusUpdate']);
      expect(stateOf(results[1])).toBe('TASK_STATE_COMPLETED');
    });

    it('CORE-STREAM-003 / "Task lifecycle stream" (tck-stream-003): the stream begins with the Task and closes at the terminal state', async () => {
      const { results } = await streamOf('tck-stream-003');
      expect(kindOf(results[0])).toBe('task');
      expect(TERMINAL_STATES).toContain(stateOf(results.at(-1)));
      expect(results.filter((r) => TERMINAL_STATES.includes(stateOf(r) ?? ''))).toHaveLength(1);
      expect(results.some((r) => r.artifactUpdate?.artifact.parts[0].text === 'Stream task lifecycle')).toBe(true);
    });

    it('STREAM-ORDER-001 (tck-stream-ordering-001): states never regress, the last event is terminal, every event is a valid "Stream Response"', async () => {
      const { results } = await streamOf('tck-stream-ordering-001');
      const rank: Record<string, number> = {
        TASK_STATE_SUBMITTED: 0,
        TASK_STATE_WORKING: 1,
        TASK_STATE_INPUT_REQUIRED: 1,
        TASK_STATE_AUTH_REQUIRED: 1,
        ...Object.fromEntries(TERMINAL_STATES.map((s) => [s, 2])),
      };
      let highest = -1;
      for (const result of results) {
        expectSchema('Stream Response', result);
        const state = stateOf(result);
        if (state === undefined) continue;
        expect(rank[state]).toBeGreaterThanOrEqual(highest);
        highest = rank[state];
      }
      expect(TERMINAL_STATES).toContain(stateOf(results.at(-1)));
      expect(results.some((r) => r.artifactUpdate?.artifact.parts[0].text === 'Ordered output')).toBe(true);
    });

    it('"Streaming with text artifact" (tck-stream-artifact-text): working, artifact "Streamed text content", completed', async () => {
      const { results } = await streamOf('tck-stream-artifact-text');
      expect(results.map((r) => stateOf(r) ?? kindOf(r))).toEqual([
        'TASK_STATE_SUBMITTED',
        'TASK_STATE_WORKING',
        'artifactUpdate',
        'TASK_STATE_COMPLETED',
      ]);
      expect(results[2].artifactUpdate.artifact.parts[0].text).toBe('Streamed text content');
    });

    it('"Streaming with file artifact" (tck-stream-artifact-file): a file part output.txt, text/plain', async () => {
      const { results } = await streamOf('tck-stream-artifact-file');
      const artifact = results.find((r) => r.artifactUpdate)!.artifactUpdate.artifact;
      expect(artifact.parts[0]).toMatchObject({ filename: 'output.txt', mediaType: 'text/plain' });
      expect(Buffer.from(artifact.parts[0].raw, 'base64').toString('utf8')).toBe('tck');
      expect(stateOf(results.at(-1))).toBe('TASK_STATE_COMPLETED');
    });

    it('"Streaming with chunked artifact" (tck-stream-artifact-chunked): two appended chunks of one artifact, the second the last chunk, then completed', async () => {
      const { results } = await streamOf('tck-stream-artifact-chunked');
      const chunks = results.filter((r) => r.artifactUpdate).map((r) => r.artifactUpdate);
      expect(chunks).toHaveLength(2);
      expect(chunks[0].artifact.artifactId).toBe(chunks[1].artifact.artifactId);
      expect(chunks.map((c) => c.artifact.parts[0].text)).toEqual(['chunk-1 ', 'chunk-2']);
      expect(chunks.map((c) => [c.append ?? false, c.lastChunk ?? false])).toEqual([
        [true, false],
        [true, true],
      ]);
      expect(stateOf(results.at(-1))).toBe('TASK_STATE_COMPLETED');
      const { artifacts } = expectResult(await rpc.call('GetTask', { id: results[0].task.id }));
      expect(artifacts).toHaveLength(1);
      expect(artifacts[0].parts.map((p: any) => p.text).join('')).toBe('chunk-1 chunk-2');
    });
  });

  // -------------------------------------------------------------------------------------------------
  describe('GetTask and history (test_task_lifecycle.py, test_task_history.py)', () => {
    it('CORE-GET-001: GetTask returns the task (same id, status, artifacts) as a valid "Task"', async () => {
      const { task } = await send('tck-artifact-text');
      const got = expectResult(await rpc.call('GetTask', { id: task.id }));
      expectSchema('Task', got);
      expect(got).toMatchObject({ id: task.id, contextId: task.contextId, status: { state: 'TASK_STATE_COMPLETED' } });
      expect(got.artifacts).toEqual(task.artifacts);
    });

    it('CORE-GET-002: GetTask of an unknown id is TaskNotFoundError (-32001)', async () => {
      expectA2aError(await rpc.call('GetTask', { id: tckId('tck-nonexistent-get-002') }), -32001, 'TASK_NOT_FOUND');
    });

    it('CORE-HIST-001 (SHOULD): historyLength 0 (sent as the TCK does, history_length) omits the history', async () => {
      const task = await createMultiturnTask();
      const got = expectResult(await rpc.call('GetTask', { id: task.id, history_length: 0 }));
      expect(got.history ?? []).toEqual([]);
    });

    it("CORE-HIST-002: no more history than historyLength, in the TCK's snake_case and in camelCase", async () => {
      const task = await createMultiturnTask();
      const full = expectResult(await rpc.call('GetTask', { id: task.id, historyLength: 10 }));
      expect(full.history.length).toBeGreaterThan(1);
      for (const params of [{ history_length: 1 }, { historyLength: 1 }]) {
        const got = expectResult(await rpc.call('GetTask', { id: task.id, ...params }));
        expect(got.history).toHaveLength(1);
        // The most recent message.
        expect(got.history[0]).toEqual(full.history.at(-1));
      }
    });

    it('CORE-HIST-003 (SHOULD): historyLength 0 on SendMessage omits the history from the answer', async () => {
      const task = await createTask('tck-input-required', 'TASK_STATE_INPUT_REQUIRED');
      const res = await rpc.call('SendMessage', {
        message: userMessage('tck-complete-task', 'Follow-up with no history', { taskId: task.id }),
        configuration: { historyLength: 0 },
      });
      const result = expectResult(res);
      expect(result.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(result.task.history ?? []).toEqual([]);
    });

    it('CORE-HIST-004 (MAY): with historyLength 10 the persisted messages come back, oldest first', async () => {
      const task = await createMultiturnTask();
      const got = expectResult(await rpc.call('GetTask', { id: task.id, history_length: 10 }));
      expect(got.history.length).toBeGreaterThan(0);
      const users = got.history.filter((m: any) => m.role === 'ROLE_USER');
      expect(users.map((m: any) => m.parts[0].text)).toEqual([
        'TCK prerequisite task creation',
        'TCK prerequisite task creation',
      ]);
      expect(users.map((m: any) => m.messageId.split('-').slice(0, 3).join('-'))).toEqual([
        'tck-input-required',
        'tck-complete-task',
      ]);
    });
  });

  // -------------------------------------------------------------------------------------------------
  describe('ListTasks (CORE-LIST-*, parametrized in test_requirements.py)', () => {
    let contextId: string;
    let created: any[];

    beforeAll(async () => {
      contextId = tckId('tck-test-context');
      created = [];
      for (const prefix of ['tck-artifact-text', 'tck-complete-task', 'tck-input-required']) {
        created.push((await send(prefix, { contextId })).task);
        // Distinct status timestamps (milliseconds), so that the expected order is unambiguous.
        const stamped = Date.parse(created.at(-1).status.timestamp);
        await until(() => Date.now() > stamped, 'the clock to pass the last status timestamp');
      }
      // A task in another context, which must not be listed.
      await send('tck-complete-task', { contextId: tckId('tck-other-context') });
    });

    it('CORE-LIST-001: listing by context_id answers exactly that context\'s tasks, as a valid "List Tasks Response"', async () => {
      const result = expectResult(await rpc.call('ListTasks', { context_id: contextId }));
      expectSchema('List Tasks Response', result);
      expect(result.tasks.map((t: any) => t.id).sort()).toEqual(created.map((t) => t.id).sort());
      for (const task of result.tasks) expect(task.contextId).toBe(contextId);
    });

    it('CORE-LIST-002 / CORE-LIST-004: cursor pagination with page_size; nextPageToken always present, "" on the final page', async () => {
      const first = expectResult(await rpc.call('ListTasks', { context_id: contextId, page_size: 2 }));
      expect(first.tasks).toHaveLength(2);
      expect(typeof first.nextPageToken).toBe('string');
      expect(first.nextPageToken.length).toBeGreaterThan(0);
      const second = expectResult(
        await rpc.call('ListTasks', { context_id: contextId, page_size: 2, page_token: first.nextPageToken }),
      );
      expect(second.tasks).toHaveLength(1);
      expect(second.nextPageToken).toBe('');
      const ids = [...first.tasks, ...second.tasks].map((t: any) => t.id);
      expect(new Set(ids).size).toBe(3);
      const whole = expectResult(await rpc.call('ListTasks', { context_id: contextId, page_size: 100 }));
      expect(whole.nextPageToken).toBe('');
      // The TCK's parametrized run lists a context of its own, which holds no task.
      const empty = expectResult(await rpc.call('ListTasks', { context_id: tckId('tck-test-context'), page_size: 2 }));
      expectSchema('List Tasks Response', empty);
      expect(empty).toMatchObject({ tasks: [], nextPageToken: '' });
    });

    it('CORE-LIST-003: tasks come most recently updated first (status timestamp descending), across pages', async () => {
      const first = expectResult(await rpc.call('ListTasks', { contextId, pageSize: 2 }));
      const second = expectResult(
        await rpc.call('ListTasks', { contextId, pageSize: 2, pageToken: first.nextPageToken }),
      );
      const stamps = [...first.tasks, ...second.tasks].map((t: any) => Date.parse(t.status.timestamp));
      expect(stamps).toEqual([...stamps].sort((a, b) => b - a));
      // The input-required task was created (so last updated) last.
      expect(first.tasks[0].id).toBe(created[2].id);
    });

    it('CORE-LIST-005: artifacts are omitted entirely unless includeArtifacts is true', async () => {
      for (const params of [{ context_id: contextId }, { context_id: contextId, include_artifacts: false }]) {
        const result = expectResult(await rpc.call('ListTasks', params));
        for (const task of result.tasks) expect(task).not.toHaveProperty('artifacts');
      }
      const included = expectResult(await rpc.call('ListTasks', { contextId, includeArtifacts: true }));
      const withArtifact = included.tasks.find((t: any) => t.id === created[0].id);
      expect(withArtifact.artifacts[0].parts[0].text).toBe('Generated text content');
    });
  });

  // -------------------------------------------------------------------------------------------------
  describe('CancelTask (CORE-CANCEL-*, test_task_lifecycle.py)', () => {
    it('CORE-CANCEL-001: canceling an input-required task answers the Task, same id, TASK_STATE_CANCELED', async () => {
      const task = await createTask('tck-input-required', 'TASK_STATE_INPUT_REQUIRED');
      const canceled = expectResult(await rpc.call('CancelTask', { id: task.id }));
      expectSchema('Task', canceled);
      expect(canceled).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_CANCELED' } });
      expect(expectResult(await rpc.call('GetTask', { id: task.id })).status.state).toBe('TASK_STATE_CANCELED');
    });

    it('CORE-CANCEL-001 on a running task (test-resubscribe-message-id): the task is canceled and its open stream ends with the canceled status', async () => {
      const stream = await rpc.stream('SendStreamingMessage', { message: userMessage('test-resubscribe-message-id') });
      const first = await stream.next();
      const taskId = first.result.task.id;
      expect(stateOf((await stream.next()).result)).toBe('TASK_STATE_WORKING');
      const canceled = expectResult(await rpc.call('CancelTask', { id: taskId }));
      expect(canceled.status.state).toBe('TASK_STATE_CANCELED');
      // Had the cancel not ended the stream, it would end once the task's hold is over, completed.
      const rest = await stream.drain(30_000);
      expect(stateOf(rest.at(-1).result)).toBe('TASK_STATE_CANCELED');
      expect(rest.map((e) => stateOf(e.result))).not.toContain('TASK_STATE_COMPLETED');
    });

    it('CORE-CANCEL-002: canceling a completed, failed or rejected task is TaskNotCancelableError (-32002)', async () => {
      for (const [prefix, state] of [
        ['tck-complete-task', 'TASK_STATE_COMPLETED'],
        ['tck-task-failure', 'TASK_STATE_FAILED'],
        ['tck-reject-task', 'TASK_STATE_REJECTED'],
      ]) {
        const task = await createTask(prefix, state);
        expectA2aError(await rpc.call('CancelTask', { id: task.id }), -32002, 'TASK_NOT_CANCELABLE');
        expect(expectResult(await rpc.call('GetTask', { id: task.id })).status.state).toBe(state);
      }
    });

    it('CORE-CANCEL-002: canceling an already canceled task is TaskNotCancelableError (-32002)', async () => {
      const task = await createTask('tck-input-required', 'TASK_STATE_INPUT_REQUIRED');
      expect(expectResult(await rpc.call('CancelTask', { id: task.id })).status.state).toBe('TASK_STATE_CANCELED');
      expectA2aError(await rpc.call('CancelTask', { id: task.id }), -32002, 'TASK_NOT_CANCELABLE');
      expect(expectResult(await rpc.call('GetTask', { id: task.id })).status.state).toBe('TASK_STATE_CANCELED');
    });

    it('CORE-CANCEL-003: canceling an unknown task is TaskNotFoundError (-32001)', async () => {
      expectA2aError(
        await rpc.call('CancelTask', { id: tckId('tck-nonexistent-cancel-003') }),
        -32001,
        'TASK_NOT_FOUND',
      );
    });
  });

  // -------------------------------------------------------------------------------------------------
  describe('SubscribeToTask (STREAM-SUB-*, STREAM-ORDER-002…004; test_sse_streaming.py, test_multi_stream.py)', () => {
    it('"Long-running task for resubscription test" (test-resubscribe-message-id): a subscriber to the running task gets the Task (working) first, then completed, and both streams close', async () => {
      const original = await rpc.stream('SendStreamingMessage', {
        message: userMessage('test-resubscribe-message-id'),
      });
      const taskId = (await original.next()).result.task.id;
      expect(stateOf((await original.next()).result)).toBe('TASK_STATE_WORKING');

      const subscriber = await rpc.stream('SubscribeToTask', { id: taskId }, { id: 'resubscribe' });
      expect(subscriber.isSse).toBe(true);
      const first = await subscriber.next();
      expect(first).toMatchObject({ jsonrpc: '2.0', id: 'resubscribe' });
      expect(kindOf(first.result)).toBe('task');
      expect(first.result.task).toMatchObject({ id: taskId, status: { state: 'TASK_STATE_WORKING' } });

      const [subscribed, streamed] = await Promise.all([
        subscriber.drain(RESUBSCRIBE_HOLD_MS + 30_000),
        original.drain(RESUBSCRIBE_HOLD_MS + 30_000),
      ]);
      expect(stateOf(subscribed.at(-1).result)).toBe('TASK_STATE_COMPLETED');
      expect(stateOf(streamed.at(-1).result)).toBe('TASK_STATE_COMPLETED');
      for (const event of subscribed) expectSchema('Stream Response', event.result);
      expect(expectResult(await rpc.call('GetTask', { id: taskId })).status.state).toBe('TASK_STATE_COMPLETED');
    });

    it('STREAM-SUB-001: the first event of SubscribeToTask on a non-terminal task is the Task in its current state', async () => {
      const task = await createTask('tck-input-required', 'TASK_STATE_INPUT_REQUIRED');
      const stream = await rpc.stream('SubscribeToTask', { id: task.id });
      expect(stream.contentType).toMatch(/^text\/event-stream/);
      const first = await stream.next();
      expect(Object.keys(first.result)).toEqual(['task']);
      expect(first.result.task).toMatchObject({
        id: task.id,
        contextId: task.contextId,
        status: { state: 'TASK_STATE_INPUT_REQUIRED' },
      });
      expectSchema('Stream Response', first.result);
      await stream.cancel();
    });

    it('STREAM-SUB-002: the subscription stream closes when the task reaches a terminal state, the last event carrying it', async () => {
      const task = await createTask('tck-input-required', 'TASK_STATE_INPUT_REQUIRED');
      const stream = await rpc.stream('SubscribeToTask', { id: task.id });
      // Its first event (the task as stored) has come: what is stored after it, it is sent.
      await stream.next();
      await send('tck-complete-task', { taskId: task.id });
      const events = await stream.drain(10_000);
      expect(stream.closed).toBe(true);
      expect(stateOf(events.at(-1).result)).toBe('TASK_STATE_COMPLETED');
    });

    it('STREAM-SUB-003: SubscribeToTask on a terminal task is UnsupportedOperationError (-32004), answered as JSON, not a stream', async () => {
      for (const [prefix, state] of [
        ['tck-complete-task', 'TASK_STATE_COMPLETED'],
        ['tck-reject-task', 'TASK_STATE_REJECTED'],
      ]) {
        const task = await createTask(prefix, state);
        const stream = await rpc.stream('SubscribeToTask', { id: task.id });
        expect(stream.isSse).toBe(false);
        expectA2aError(answerOf(stream), -32004, 'UNSUPPORTED_OPERATION');
      }
    });

    it('STREAM-SUB-004: SubscribeToTask on an unknown task is TaskNotFoundError (-32001)', async () => {
      const stream = await rpc.stream('SubscribeToTask', { id: tckId('tck-nonexistent-subscribe-001') });
      expect(stream.isSse).toBe(false);
      expectA2aError(answerOf(stream), -32001, 'TASK_NOT_FOUND');
    });

    it('STREAM-ORDER-002 / STREAM-ORDER-003: two subscribers to one task both get every event, the same events in the same order', async () => {
      const task = await createTask('tck-input-required', 'TASK_STATE_INPUT_REQUIRED');
      const streams = [
        await rpc.stream('SubscribeToTask', { id: task.id }),
        await rpc.stream('SubscribeToTask', { id: task.id }),
      ];
      for (const stream of streams) expect(kindOf((await stream.next()).result)).toBe('task');
      await send('tck-complete-task', { taskId: task.id });
      const [a, b] = await Promise.all(streams.map((s) => s.drain(10_000)));
      expect(a.length).toBeGreaterThan(1);
      expect(normalised(a)).toEqual(normalised(b));
      expect(stateOf(a.at(-1).result)).toBe('TASK_STATE_COMPLETED');
    });

    it('STREAM-ORDER-004: closing one subscription does not affect another on the same task', async () => {
      const task = await createTask('tck-input-required', 'TASK_STATE_INPUT_REQUIRED');
      const [leaving, staying] = [
        await rpc.stream('SubscribeToTask', { id: task.id }),
        await rpc.stream('SubscribeToTask', { id: task.id }),
      ];
      await leaving.next();
      await staying.next();
      const open = await openStreams();
      await leaving.cancel();
      // The server has let go of the leaving one before the task moves on.
      await until(async () => (await openStreams()) < open, 'the server to close the leaving subscription', 10_000);
      await send('tck-complete-task', { taskId: task.id });
      const events = await staying.drain(10_000);
      expect(leaving.events).toHaveLength(1);
      expect(stateOf(events.at(-1).result)).toBe('TASK_STATE_COMPLETED');
    });
  });

  // -------------------------------------------------------------------------------------------------
  describe('Versioning (VER-*, test_error_handling.py)', () => {
    it('VER-SERVER-002: an unsupported A2A-Version (99.0) is VersionNotSupportedError (-32009), streaming methods included', async () => {
      expectA2aError(
        await raw.call(
          'SendMessage',
          { message: userMessage('tck-ver-002', 'version test') },
          { headers: { 'A2A-Version': '99.0' } },
        ),
        -32009,
        'VERSION_NOT_SUPPORTED',
      );
      const stream = await rpc.stream(
        'SendStreamingMessage',
        { message: userMessage('tck-ver-002') },
        { headers: { 'A2A-Version': '99.0' } },
      );
      expect(stream.isSse).toBe(false);
      expect(stream.json.error.code).toBe(-32009);
    });

    it('VER-SERVER-003: an empty A2A-Version gets a well-formed JSON-RPC answer, and a v0.3 method under it is served with v0.3 semantics', async () => {
      const tckCase = await raw.call(
        'SendMessage',
        { message: userMessage('tck-ver-003', 'empty version test') },
        { headers: { 'A2A-Version': '' } },
      );
      expect(tckCase.json.jsonrpc).toBe('2.0');
      expect('result' in tckCase.json || 'error' in tckCase.json).toBe(true);
      const v03 = await raw.call(
        'message/send',
        { message: wireMessageV03('tck-complete-task', 'hi') },
        { headers: { 'A2A-Version': '' } },
      );
      expect(expectResult(v03)).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    });

    it('VER-SERVER-001: the request is processed with the semantics of the requested version', async () => {
      const v1 = expectResult(
        await raw.call(
          'SendMessage',
          { message: userMessage('tck-complete-task') },
          { headers: { 'A2A-Version': '1.0' } },
        ),
      );
      expect(v1.task.status.state).toBe('TASK_STATE_COMPLETED');
      const v03 = expectResult(
        await raw.call(
          'message/send',
          { message: wireMessageV03('tck-complete-task', 'hi') },
          { headers: { 'A2A-Version': '0.3' } },
        ),
      );
      expect(v03).toMatchObject({
        kind: 'task',
        status: { state: 'completed', message: { kind: 'message', role: 'agent' } },
      });
      // The same task read back in each version's shape.
      const asV1 = expectResult(await raw.call('GetTask', { id: v03.id }, { headers: { 'A2A-Version': '1.0' } }));
      expect(asV1.status.state).toBe('TASK_STATE_COMPLETED');
      const asV03 = expectResult(
        await raw.call('tasks/get', { id: v1.task.id }, { headers: { 'A2A-Version': '0.3' } }),
      );
      expect(asV03).toMatchObject({ kind: 'task', status: { state: 'completed' } });
      // v0.3 has no PascalCase methods.
      expectErrorObject(await raw.call('GetTask', { id: v1.task.id }, { headers: { 'A2A-Version': '0.3' } }), -32601);
    });

    it('VER-CLIENT-002: patch numbers are not considered (1.0.0 and 1.0.1 are 1.0; 0.3.0 is 0.3)', async () => {
      const { task } = await send('tck-complete-task');
      for (const version of ['1.0.0', '1.0.1']) {
        expect(
          expectResult(await raw.call('GetTask', { id: task.id }, { headers: { 'A2A-Version': version } })).status
            .state,
        ).toBe('TASK_STATE_COMPLETED');
      }
      expect(
        expectResult(await raw.call('tasks/get', { id: task.id }, { headers: { 'A2A-Version': '0.3.0' } })).status
          .state,
      ).toBe('completed');
    });

    it('JSONRPC-SVC-002 / spec 3.6.1: A2A-Version may come as a request parameter instead of a header', async () => {
      const { task } = await send('tck-complete-task');
      const byQuery = new TckJsonRpcClient(`${raw.url}?A2A-Version=1.0`, null);
      expect(expectResult(await byQuery.call('GetTask', { id: task.id })).id).toBe(task.id);
      const unsupported = new TckJsonRpcClient(`${raw.url}?A2A-Version=99.0`, null);
      expectA2aError(await unsupported.call('GetTask', { id: task.id }), -32009, 'VERSION_NOT_SUPPORTED');
    });
  });

  // -------------------------------------------------------------------------------------------------
  describe('Push notifications (test_push_notifications.py; the card declares pushNotifications)', () => {
    const hookPath = (name: string): string => `/tck-push-webhook/${name}/${tckId('hook')}`;

    /** What the TCK's JSON-RPC client sends for CreateTaskPushNotificationConfig: `{task_id, ...config}`. */
    async function createConfig(taskId: string, configId: string, url: string): Promise<RpcResponse> {
      return rpc.call('CreateTaskPushNotificationConfig', { task_id: taskId, id: configId, url });
    }

    it('PUSH-CREATE-001 / PUSH-CREATE-002 / PUSH-GET-001: a created config is answered, persists and reads back with its URL', async () => {
      const task = await createTask('tck-complete-task', 'TASK_STATE_COMPLETED');
      const configId = tckId('tck-push');
      const url = webhook.url(hookPath('crud'));
      const created = expectResult(await createConfig(task.id, configId, url));
      expectSchema('Task Push Notification Config', created);
      expect(created).toMatchObject({ id: configId, taskId: task.id, url });
      const got = expectResult(await rpc.call('GetTaskPushNotificationConfig', { task_id: task.id, id: configId }));
      expectSchema('Task Push Notification Config', got);
      expect(got).toMatchObject({ id: configId, taskId: task.id, url });
    });

    it('PUSH-GET-002: reading a config that does not exist fails', async () => {
      const task = await createTask('tck-complete-task', 'TASK_STATE_COMPLETED');
      const res = await rpc.call('GetTaskPushNotificationConfig', { task_id: task.id, id: tckId('tck-nonexistent') });
      expect(res.json.error).toBeDefined();
      expect(res.json.error.code).toBe(-32001);
    });

    it('PUSH-LIST-001: listing a task\'s configs includes the created one, as a valid "List Task Push Notification Configs Response"', async () => {
      const task = await createTask('tck-complete-task', 'TASK_STATE_COMPLETED');
      const configId = tckId('tck-push');
      expectResult(await createConfig(task.id, configId, webhook.url(hookPath('list'))));
      const listed = expectResult(await rpc.call('ListTaskPushNotificationConfigs', { task_id: task.id }));
      expectSchema('List Task Push Notification Configs Response', listed);
      expect(listed.configs.map((c: any) => c.id)).toContain(configId);
    });

    it('PUSH-DEL-001 / PUSH-DEL-002: a deleted config is gone, and deleting it again is not an error', async () => {
      const task = await createTask('tck-complete-task', 'TASK_STATE_COMPLETED');
      const configId = tckId('tck-push');
      expectResult(await createConfig(task.id, configId, webhook.url(hookPath('delete'))));
      expectResult(await rpc.call('DeleteTaskPushNotificationConfig', { task_id: task.id, id: configId }));
      expect(
        (await rpc.call('GetTaskPushNotificationConfig', { task_id: task.id, id: configId })).json.error,
      ).toBeDefined();
      expectResult(await rpc.call('DeleteTaskPushNotificationConfig', { task_id: task.id, id: configId }));
    });

    it('PUSH-DELIVER-001 … 003: a config given inline with SendMessage is delivered at least once, with its credentials, as a valid StreamResponse', async () => {
      const path = hookPath('deliver');
      const credentials = `tck-test-token-${tckId('auth')}`;
      const task = (
        await send(
          'tck-input-required',
          {},
          {
            taskPushNotificationConfig: {
              id: tckId('tck-push'),
              url: webhook.url(path),
              authentication: { scheme: 'Bearer', credentials },
            },
          },
        )
      ).task;
      expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      await send('tck-complete-task', { taskId: task.id });
      const received = await webhook.waitFor(path, (got) =>
        got.some((r) => stateOf(r.json) === 'TASK_STATE_COMPLETED'),
      );
      expect(received.length).toBeGreaterThan(0);
      for (const request of received) {
        expect(request.method).toBe('POST');
        expect(request.headers.authorization).toBe(`Bearer ${credentials}`);
        expect(request.json).toBeDefined();
        expectSchema('Stream Response', request.json);
        expect(STREAM_RESPONSE_KEYS).toContain(kindOf(request.json));
      }
      expect(received.map((r) => stateOf(r.json))).toContain('TASK_STATE_COMPLETED');
    });
  });
});
