import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { APPROVAL_RESPONSE_TYPE, MAX_APPROVAL_REASON_LENGTH } from '../../packages/contract/src/index.js';
import { clientScenarioReply, scenarioServerEnv, scenarioWorkspace } from '../support/client-scenario.js';
import { createEmbeddedTestDatabase, databaseTargets, type TestDatabase } from '../support/database.js';
import {
  COMPILED_ORCHESTRATOR_GRAPH,
  startLangGraphServer,
  type LangGraphServer,
} from '../support/langgraph-server.js';
import { CAPABILITIES, wireMessage, type Json } from '../support/orchestration.js';
import { OpenAiCompatibleEndpoint, scenarioMessagesOf } from '../support/openai-endpoint.js';
import { extensionCalls, fieldsOf, rawCall, startServer, type TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * What a waiting task's answers become in the model's input, on the local backend with the scripted
 * client-scenario model (test/support/client-scenario.ts): an approval- or client-response is never user
 * text, and one that answers nothing waiting is refused (-32602 naming the part); a person who types on
 * while a call waits leaves no call without its result (the call is answered "not run", the waiting task
 * ends canceled); a rejection's reason reaches the model, the task and the audit log.
 */

const A2A = { 'A2A-Version': '1.0' };

describe.each(databaseTargets())('answers to a waiting task on $kind', (target) => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let root: string;
  const { ok } = extensionCalls(() => server);

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start(clientScenarioReply());
    db = await target.create();
    server = await startServer(db, scenarioServerEnv(model));
    root = realpathSync(await mkdtemp(`${tmpdir()}/ca-waiting-answers-`));
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** SendMessage (blocking) as raw JSON-RPC: the whole answer, result or error. */
  async function send(message: Json): Promise<{ json: any }> {
    const answer = await rawCall(
      server.endpoint,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message, configuration: { returnImmediately: false } },
      },
      A2A,
    );
    return answer;
  }

  async function sent(message: Json): Promise<Json> {
    const answer = await send(message);
    expect(answer.json.error).toBeUndefined();
    return (answer.json.result.task ?? answer.json.result) as Json;
  }

  async function taskOf(id: string): Promise<Json> {
    const answer = await rawCall(server.endpoint, { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } }, A2A);
    return answer.json.result as Json;
  }

  function waitsFor(task: Json): Json {
    const parts = (task.status?.message?.parts ?? []) as Json[];
    const request = parts.map((p) => p.data as Json | undefined).find((d) => d?.type?.endsWith('-request'));
    if (!request) throw new Error(`task ${task.id} waits for nothing: ${JSON.stringify(task.status)}`);
    return request;
  }

  function answer(task: Json, decision: string, extra: Json = {}): Json {
    return wireMessage('', { taskId: task.id, contextId: task.contextId }, [
      { type: APPROVAL_RESPONSE_TYPE, requestId: waitsFor(task).requestId, decision, ...extra },
    ]);
  }

  /** A session under `manual`, its first task waiting at the plan's gate ("Uppercase <file>"). */
  async function atPlanGate(name: string): Promise<{ sessionId: string; task: Json; file: string }> {
    const { file } = await scenarioWorkspace(root, `${name}-${Date.now()}`);
    const sessionId = String((await ok('session/create', { profile: 'manual' })).sessionId);
    const task = await sent(wireMessage(`Uppercase ${file}`, { contextId: sessionId, metadata: CAPABILITIES }));
    expect({ state: task.status.state, kind: waitsFor(task).subject?.kind }).toEqual({
      state: 'TASK_STATE_INPUT_REQUIRED',
      kind: 'plan',
    });
    return { sessionId, task, file };
  }

  const assembled = async (sessionId: string) =>
    (await ok('context/assemble', { sessionId })).messages as { role: string; content: string }[];

  /** Every assistant tool call of a model request is answered by a tool message before the next user message. */
  function unansweredCalls(body: Record<string, unknown>): string[] {
    const messages = scenarioMessagesOf(body);
    const missing: string[] = [];
    messages.forEach((message, i) => {
      const nextUser = messages.findIndex((m, j) => j > i && m.role === 'user');
      const until = nextUser < 0 ? messages.length : nextUser;
      for (const call of message.toolCalls ?? []) {
        const answered = messages.slice(i + 1, until).some((m) => m.role === 'tool' && m.toolCallId === call.id);
        if (!answered) missing.push(call.id);
      }
    });
    return missing;
  }

  it('an approval-response on a new message answers nothing: -32602 naming the part, no task, nothing for the model', async () => {
    const { sessionId, task } = await atPlanGate('stray-new');
    const before = await assembled(sessionId);
    const refused = await send(
      wireMessage('approve it', { contextId: sessionId }, [
        { type: APPROVAL_RESPONSE_TYPE, requestId: waitsFor(task).requestId, decision: 'approve' },
      ]),
    );
    expect({ code: refused.json.error?.code, fields: fieldsOf(refused) }).toEqual({
      code: -32602,
      fields: ['message.parts[1].data'],
    });
    expect(await assembled(sessionId)).toEqual(before);
    expect((await taskOf(String(task.id))).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  }, 60000);

  it('typing on at a tool gate: the call is answered "not run" before the new text, and the waiting task ends', async () => {
    const { sessionId, task, file } = await atPlanGate('typing-on');
    const atRead = await sent(answer(task, 'approve'));
    expect(waitsFor(atRead).subject).toMatchObject({ kind: 'tool', tool: 'fs_read_text_file', args: { path: file } });
    const readCall = String(waitsFor(atRead).subject.toolCallId);

    const next = await sent(
      wireMessage('Never mind that, say hello', { contextId: sessionId, metadata: CAPABILITIES }),
    );
    expect(next.id).not.toBe(task.id);

    // What the model was sent for the new message: the waiting call's result, then the new text.
    const request = model.completions.at(-1)!.body;
    expect(unansweredCalls(request)).toEqual([]);
    const seen = scenarioMessagesOf(request).slice(1);
    const result = seen.findIndex((m) => m.role === 'tool' && m.toolCallId === readCall);
    expect(seen[result].content).toMatch(/^Error: not run: .*new message/);
    expect(seen[result + 1]).toEqual({ role: 'user', content: 'Never mind that, say hello' });
    // context/assemble shows the same order.
    const shown = await assembled(sessionId);
    const at = shown.findIndex((m) => m.role === 'tool' && /not run: .*new message/.test(m.content));
    expect(shown[at + 1]).toEqual({ role: 'user', content: 'Never mind that, say hello' });

    // The task that waited no longer does; an answer to it now is refused, naming the part.
    const ended = await taskOf(String(task.id));
    expect(ended.status.state).toBe('TASK_STATE_CANCELED');
    const late = await send(answer(atRead, 'approve'));
    expect({ code: late.json.error?.code, fields: fieldsOf(late) }).toEqual({
      code: -32602,
      fields: ['message.parts[0].data'],
    });
    expect((await assembled(sessionId)).some((m) => m.content.includes(APPROVAL_RESPONSE_TYPE))).toBe(false);
  }, 60000);

  it('typing on at a client request: the call is answered "not run", the model input stays whole', async () => {
    const { file } = await scenarioWorkspace(root, `client-request-${Date.now()}`);
    const sessionId = String((await ok('session/create', { profile: 'autonomous' })).sessionId);
    const first = await sent(wireMessage(`Uppercase ${file}`, { contextId: sessionId, metadata: CAPABILITIES }));
    expect(waitsFor(first).type).toBe('cleveragents/client-request');
    await sent(wireMessage('Stop, say hello', { contextId: sessionId, metadata: CAPABILITIES }));
    expect(unansweredCalls(model.completions.at(-1)!.body)).toEqual([]);
    expect((await taskOf(String(first.id))).status.state).toBe('TASK_STATE_CANCELED');
  }, 60000);

  it("a rejected tool call's reason reaches the model; a rejected plan's reason is the task's and the audit log's", async () => {
    const { sessionId, task } = await atPlanGate('reasons');
    const atRead = await sent(answer(task, 'approve'));
    await sent(answer(atRead, 'reject', { reason: 'not that file, it is private' }));
    const toolResult = scenarioMessagesOf(model.completions.at(-1)!.body).findLast((m) => m.role === 'tool');
    expect(toolResult?.content).toMatch(/denied/i);
    expect(toolResult?.content).toContain('not that file, it is private');

    const other = await atPlanGate('plan-reason');
    const rejected = await sent(answer(other.task, 'reject', { reason: 'too many steps' }));
    expect(rejected.status.state).toBe('TASK_STATE_REJECTED');
    expect(JSON.stringify(rejected.status.message)).toContain('too many steps');
    expect(
      (await assembled(other.sessionId)).some((m) => m.role === 'tool' && m.content.includes('too many steps')),
    ).toBe(true);
    const audit = await ok('audit/list', { namespace: 'default', action: 'plan.cancel', pageSize: 100 });
    const record = (audit.items as { details: Json }[]).find((r) => r.details.reason === 'too many steps');
    expect(record).toBeDefined();
    expect(sessionId).not.toBe(other.sessionId);
  }, 60000);

  it('an over-long reason is refused (-32602 naming reason); the task keeps waiting', async () => {
    const { task } = await atPlanGate('long-reason');
    const refused = await send(answer(task, 'reject', { reason: 'x'.repeat(MAX_APPROVAL_REASON_LENGTH + 1) }));
    expect({ code: refused.json.error?.code, fields: fieldsOf(refused) }).toEqual({
      code: -32602,
      fields: ['message.parts[0].data.reason'],
    });
    expect((await taskOf(String(task.id))).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  }, 60000);
});

/*
 * The same on the `langgraph` backend: the real orchestrator graph (compiled to dist/) on a LangGraph server
 * over the scripted orchestrator scenario. Its thread is the session's too: a new message after a call that
 * waits at its gate comes after that call's "not run" result, and the task that waited ends.
 */
describe('typing on at a gate on the langgraph backend (embedded)', () => {
  let langgraph: LangGraphServer;
  let db: TestDatabase;
  let server: TestServer;
  const { ok } = extensionCalls(() => server);

  beforeAll(async () => {
    if (!existsSync(COMPILED_ORCHESTRATOR_GRAPH)) {
      throw new Error(`${COMPILED_ORCHESTRATOR_GRAPH} is missing: run npm run build first (npm test does)`);
    }
    langgraph = await startLangGraphServer();
    db = await createEmbeddedTestDatabase();
    server = await startServer(db, {
      CLEVERAGENTS_ACTOR_BACKEND: 'langgraph',
      CLEVERAGENTS_LANGGRAPH_URL: langgraph.url,
    });
    await ok('registry/create', {
      kind: 'actor',
      name: 'remote-orchestrator',
      spec: { description: 'the real orchestrator graph on LangGraph', graphId: 'orchestrator-real', tools: [] },
    });
  }, 120_000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(langgraph)?.close();
  });

  async function sent(message: Json): Promise<Json> {
    const answer = await rawCall(
      server.endpoint,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message, configuration: { returnImmediately: false } },
      },
      A2A,
    );
    expect(answer.json.error).toBeUndefined();
    return (answer.json.result.task ?? answer.json.result) as Json;
  }

  it('the waiting plan call is answered "not run" before the new text; the waiting task is canceled', async () => {
    const sessionId = String(
      (await ok('session/create', { actor: 'remote-orchestrator', profile: 'manual' })).sessionId,
    );
    const first = await sent(
      wireMessage('Uppercase /work/notes.txt', { contextId: sessionId, metadata: CAPABILITIES }),
    );
    expect(first.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    await sent(wireMessage('Never mind that', { contextId: sessionId, metadata: CAPABILITIES }));
    const shown = (await ok('context/assemble', { sessionId })).messages as { role: string; content: string }[];
    const at = shown.findIndex((m) => m.role === 'user' && m.content === 'Never mind that');
    expect(shown[at - 1]).toMatchObject({ role: 'tool' });
    expect(shown[at - 1].content).toMatch(/not run: .*new message/);
    const ended = await rawCall(
      server.endpoint,
      { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: first.id } },
      A2A,
    );
    expect(ended.json.result.status.state).toBe('TASK_STATE_CANCELED');
  }, 60_000);
});
