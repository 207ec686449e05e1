import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { SendMessageRequest, TaskState, type Task } from '@a2a-js/sdk';
import { DefaultExecutionEventBus, RequestContext, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import { Client, ClientFactory } from '@a2a-js/sdk/client';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint, scenarioReply } from '../support/openai-endpoint.js';
import { CAPABILITIES, sendRequestOf, statusData, wireMessage, type Json } from '../support/orchestration.js';
import { extensionCalls, fieldsOf, startServer, type TestServer } from '../support/server.js';
import { collect, stateOf } from '../support/streams.js';
import { parentSpanId, startTestTracing, type TestTracing } from '../support/tracing.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';
import { startRemoteAgent, type RemoteAgent } from '../support/a2a-remote-agent.js';
import { SessionWorkflow } from '../../packages/server/src/turn/session.workflow.js';
import { ownerCallContext } from '../../packages/server/src/database/store-scope.js';
import { CAPTURE_CONTENT_VARIABLE } from '../../packages/server/src/telemetry/content.js';

/*
 * The turn's telemetry on the `local` backend (docs/operations.md, "Traces" and "Metrics"), in process: the real
 * application, its orchestrator graph calling a real ChatOpenAI client against the loopback OpenAI-compatible
 * endpoint (so usage comes as the endpoint reports it), and the SDK's tracer provider with an in-memory
 * exporter (test/support/tracing.ts). The model plays the orchestrator scenario: update_plan, a client-side
 * read, a client-side write, update_plan again, the answer.
 */

const FILE_PATH = '/work/notes.txt';
const USAGE = { promptTokens: 20, completionTokens: 3 };
const SECRET = 'sk-live-should-never-show';
const AGENT_KEY = 'agent-key-never-in-a-span';

const attr = (span: ReadableSpan, key: string) => span.attributes[key];
/** A span time ([seconds, nanoseconds]) as one number of nanoseconds. */
const nanos = ([seconds, nanoseconds]: [number, number]) => BigInt(seconds) * 1_000_000_000n + BigInt(nanoseconds);

describe('turn telemetry on the local backend', () => {
  let tracing: TestTracing;
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let client: Client;
  let agent: RemoteAgent;
  const { ok, call } = extensionCalls(() => server);

  beforeAll(async () => {
    tracing = startTestTracing();
    model = await OpenAiCompatibleEndpoint.start(scenarioReply(USAGE));
    agent = await startRemoteAgent(AGENT_KEY);
    db = await databaseTargets()[0].create();
    server = await startServer(db, {
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'scenario-model',
      // The sub-agent of this suite, on loopback.
      CLEVERAGENTS_MODEL_ALLOWED_HOSTS: `127.0.0.1:${agent.port},*`,
    });
    client = await new ClientFactory().createFromUrl(server.baseUrl);
  }, 60_000);

  afterAll(async () => {
    delete process.env[CAPTURE_CONTENT_VARIABLE];
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
    await ifAssigned(agent)?.close();
    await ifAssigned(tracing)?.stop();
  });

  /** Plays one session to its end under `profile`, the client answering reads and writes from `files`. */
  async function play(actor: string, files: Map<string, string>): Promise<{ taskId: string; contextId: string }> {
    const contextId = (await ok('session/create', { actor, profile: 'autonomous' })).sessionId as string;
    let next = sendRequestOf(wireMessage(`Uppercase ${FILE_PATH}`, { contextId, metadata: CAPABILITIES }));
    let taskId = '';
    for (let round = 0; round < 10; round += 1) {
      const events = await collect(client.sendMessageStream(next));
      if (!taskId) taskId = (events[0].payload as { value: Task }).value.id;
      const last = events.at(-1);
      if (stateOf(last) !== TaskState.TASK_STATE_INPUT_REQUIRED) break;
      const asked = statusData(last).find((d) => d.type === 'cleveragents/client-request');
      if (!asked) throw new Error(`input-required without a client-request: ${JSON.stringify(statusData(last))}`);
      const responses = (asked.requests as Json[]).map((request) => {
        const path = String(request.params?.path);
        if (request.method === 'fs/read_text_file') {
          // `secret` stands for a credential a tool's result may carry: never in a span as it is.
          return { id: request.id, result: { content: files.get(path) ?? '', secret: SECRET } };
        }
        files.set(path, String(request.params?.content));
        return { id: request.id, result: {} };
      });
      next = sendRequestOf(
        wireMessage('', { taskId, contextId }, [{ type: 'cleveragents/client-response', responses }]),
      );
    }
    return { taskId, contextId };
  }

  /** The ended spans of one task's turns, and the spans under them, once its last turn span ended. */
  async function spansOfTask(taskId: string, turns: number): Promise<{ turns: ReadableSpan[]; all: ReadableSpan[] }> {
    const ofTask = () =>
      tracing.spans().filter((s) => s.name.startsWith('invoke_agent ') && attr(s, 'cleveragents.task.id') === taskId);
    await until(() => ofTask().length === turns, `${turns} turn spans of task ${taskId}`);
    const traces = new Set(ofTask().map((s) => s.spanContext().traceId));
    return { turns: ofTask(), all: tracing.spans().filter((s) => traces.has(s.spanContext().traceId)) };
  }

  const childrenOf = (all: ReadableSpan[], parent: ReadableSpan) =>
    all.filter(
      (s) =>
        parentSpanId(s) === parent.spanContext().spanId && s.spanContext().traceId === parent.spanContext().traceId,
    );

  it('a turn is an invoke_agent span over its chat spans (with usage) and execute_tool spans; no content by default', async () => {
    const files = new Map([[FILE_PATH, 'hello notes']]);
    const { taskId, contextId } = await play('default', files);
    const { turns, all } = await spansOfTask(taskId, 3);

    // Three turns: the start (plan, then the read handed to the client), the read's answer, the write's answer.
    expect(turns.map((t) => [t.name, attr(t, 'cleveragents.turn.mode'), attr(t, 'cleveragents.turn.state')])).toEqual([
      ['invoke_agent default', 'start', 'input-required'],
      ['invoke_agent default', 'resume', 'input-required'],
      ['invoke_agent default', 'resume', 'completed'],
    ]);
    const [first, second, third] = turns;
    // Each turn is under the SERVER span of the JSON-RPC call that brought its message.
    for (const turn of turns) {
      const rpc = all.find((s) => s.spanContext().spanId === parentSpanId(turn));
      expect(rpc?.kind).toBe(SpanKind.SERVER);
      expect(rpc?.spanContext().traceId).toBe(turn.spanContext().traceId);
    }
    expect(first.kind).toBe(SpanKind.INTERNAL);
    expect(first.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'default',
      'gen_ai.conversation.id': contextId,
      'gen_ai.request.model': 'scenario-model',
      'cleveragents.namespace': 'default',
      'cleveragents.session': contextId,
      'cleveragents.task.id': taskId,
      'cleveragents.actor': 'default',
      'cleveragents.profile': 'autonomous',
      'cleveragents.backend': 'local',
    });
    expect(first.status.code).toBe(SpanStatusCode.UNSET);
    expect(first.attributes['cleveragents.turn.waited_seconds']).toBeUndefined();
    // A turn that takes a client's answer up says how long the task waited for it.
    expect(second.attributes['cleveragents.turn.waited_seconds']).toEqual(expect.any(Number));

    // The first turn: two model calls (the plan, the read) and two tool calls, all its children, in its trace.
    const underFirst = childrenOf(all, first);
    expect(underFirst.map((s) => s.name).sort()).toEqual([
      'chat scenario-model',
      'chat scenario-model',
      'execute_tool fs_read_text_file',
      'execute_tool update_plan',
    ]);
    const chat = underFirst.find((s) => s.name === 'chat scenario-model')!;
    expect(chat.kind).toBe(SpanKind.CLIENT);
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'scenario-model',
      'gen_ai.response.model': 'scenario-model',
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'gen_ai.usage.input_tokens': USAGE.promptTokens,
      'gen_ai.usage.output_tokens': USAGE.completionTokens,
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(model.baseUrl()).port),
    });
    expect(String(attr(chat, 'gen_ai.response.id'))).toMatch(/^chatcmpl-test-/);

    const plan = underFirst.find((s) => s.name === 'execute_tool update_plan')!;
    expect(plan.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'update_plan',
      'gen_ai.tool.type': 'extension',
      'gen_ai.tool.call.id': 'call-1',
      'cleveragents.tool.runs_on': 'server',
      'cleveragents.tool.outcome': 'ok',
    });
    // The read is handed to the client: the asking turn's span ends there, awaiting the client.
    const asked = underFirst.find((s) => s.name === 'execute_tool fs_read_text_file')!;
    expect(asked.attributes).toMatchObject({
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.call.id': 'call-2',
      'cleveragents.tool.outcome': 'awaiting_client',
    });
    expect(asked.status.code).toBe(SpanStatusCode.UNSET);

    // The next turn takes the client's answer up under a span of its own for the same call, then asks the write.
    const underSecond = childrenOf(all, second);
    expect(
      underSecond.map((s) => [s.name, attr(s, 'gen_ai.tool.call.id'), attr(s, 'cleveragents.tool.outcome')]),
    ).toEqual(
      expect.arrayContaining([
        ['execute_tool fs_read_text_file', 'call-2', 'ok'],
        ['execute_tool fs_write_text_file', 'call-3', 'awaiting_client'],
      ]),
    );
    // Nothing of update_plan again: LangGraph's replay of the node is not traced twice.
    expect(underSecond.filter((s) => s.name === 'execute_tool update_plan')).toEqual([]);
    const underThird = childrenOf(all, third);
    expect(underThird.filter((s) => s.name === 'chat scenario-model')).toHaveLength(2);
    expect(
      underThird.find(
        (s) => s.name === 'chat scenario-model' && attr(s, 'gen_ai.response.finish_reasons')?.toString() === 'stop',
      ),
    ).toBeDefined();

    // By default no span carries what a person or the model wrote, nor a tool's arguments or result.
    const content = [
      'gen_ai.input.messages',
      'gen_ai.output.messages',
      'gen_ai.system_instructions',
      'gen_ai.tool.call.arguments',
      'gen_ai.tool.call.result',
    ];
    for (const span of all) for (const key of content) expect(span.attributes[key]).toBeUndefined();
    expect(JSON.stringify(all.map((s) => s.attributes))).not.toContain('hello notes');
  });

  it('with content capture on, prompts, answers, arguments and results are recorded, secrets redacted', async () => {
    process.env[CAPTURE_CONTENT_VARIABLE] = 'true';
    try {
      const { taskId } = await play('default', new Map([[FILE_PATH, 'captured notes']]));
      const { turns, all } = await spansOfTask(taskId, 3);
      const chats = all.filter((s) => s.name === 'chat scenario-model');
      const first = chats.find((s) => parentSpanId(s) === turns[0].spanContext().spanId)!;
      const input = JSON.parse(String(attr(first, 'gen_ai.input.messages'))) as Json[];
      expect(input).toEqual([{ role: 'user', parts: [{ type: 'text', content: `Uppercase ${FILE_PATH}` }] }]);
      const system = JSON.parse(String(attr(first, 'gen_ai.system_instructions'))) as Json[];
      expect(system[0]).toMatchObject({ type: 'text' });
      const output = JSON.parse(String(attr(first, 'gen_ai.output.messages'))) as Json[];
      expect(output[0]).toMatchObject({ role: 'assistant', finish_reason: 'tool_calls' });
      expect(output[0].parts).toContainEqual(expect.objectContaining({ type: 'tool_call', name: 'update_plan' }));

      const read = all.find(
        (s) => s.name === 'execute_tool fs_read_text_file' && attr(s, 'cleveragents.tool.outcome') === 'ok',
      )!;
      expect(JSON.parse(String(attr(read, 'gen_ai.tool.call.arguments')))).toEqual({ path: FILE_PATH });
      expect(JSON.parse(String(attr(read, 'gen_ai.tool.call.result')))).toEqual({
        content: 'captured notes',
        secret: '[redacted]',
      });
      // The next model call is given the read's result: its input shows it, the secret redacted there too.
      const everything = JSON.stringify(all.map((s) => s.attributes));
      expect(everything).toContain('captured notes');
      expect(everything).not.toContain(SECRET);
    } finally {
      delete process.env[CAPTURE_CONTENT_VARIABLE];
    }
  });

  it('a failing model call marks its chat span and the turn failed, with an error type and no secret', async () => {
    model.answerWith({ status: 500, error: `upstream broke, key ${SECRET}` });
    try {
      const task = (await client.sendMessage(sendRequestOf(wireMessage('hello?')))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      const { turns, all } = await spansOfTask(task.id, 1);
      const [turn] = turns;
      expect(turn.status.code).toBe(SpanStatusCode.ERROR);
      expect(turn.status.message).toMatch(/^MODEL_UNAVAILABLE: /);
      expect(turn.attributes).toMatchObject({ 'error.type': 'MODEL_UNAVAILABLE', 'cleveragents.turn.state': 'failed' });
      const [chat] = childrenOf(all, turn);
      expect(chat.name).toBe('chat scenario-model');
      expect(chat.status).toEqual({ code: SpanStatusCode.ERROR, message: 'the model endpoint answered HTTP 500' });
      expect(chat.attributes['error.type']).toBe('InternalServerError');
      expect(JSON.stringify(all.map((s) => [s.attributes, s.status, s.events]))).not.toContain(SECRET);
    } finally {
      model.answerWith(scenarioReply(USAGE));
    }
  });

  it('the turn context reaches the backend after SendMessage returned (a non-blocking send)', async () => {
    model.answerWith({ tokens: ['Later', ' answer.'], delayMs: 30, usage: USAGE });
    try {
      const request = SendMessageRequest.fromJSON({
        message: wireMessage('answer me later'),
        configuration: { returnImmediately: true },
      });
      const returned = (await client.sendMessage(request)) as Task;
      expect(returned.status?.state).not.toBe(TaskState.TASK_STATE_COMPLETED);
      const { turns, all } = await spansOfTask(returned.id, 1);
      const [chat] = childrenOf(all, turns[0]);
      expect(chat.name).toBe('chat scenario-model');
      expect(chat.attributes['gen_ai.usage.output_tokens']).toBe(USAGE.completionTokens);
      // The call's SERVER span ended with its answer, before the model call under its turn did.
      const rpc = all.find((s) => s.spanContext().spanId === parentSpanId(turns[0]))!;
      expect(rpc.kind).toBe(SpanKind.SERVER);
      expect(nanos(rpc.endTime) < nanos(chat.endTime)).toBe(true);
    } finally {
      model.answerWith(scenarioReply(USAGE));
    }
  });

  it('the turn span is a child of the context active when the turn starts, even once that span ended', async () => {
    model.answerWith({ tokens: ['Streamed', ' on.'], delayMs: 30, usage: USAGE });
    try {
      const workflow = server.app.get(SessionWorkflow);
      const contextId = (await ok('session/create', {})).sessionId as string;
      const taskId = `telemetry-${Date.now()}`;
      const request = SendMessageRequest.fromJSON({ message: wireMessage('stream on', { contextId }) });
      const callContext = ownerCallContext({ namespace: 'default', owner: 'anonymous' });
      const bus = new DefaultExecutionEventBus();
      const events: AgentExecutionEvent[] = [];
      bus.on('event', (event: AgentExecutionEvent) => events.push(event));
      // As the RPC server span: active when the turn starts, ended as soon as the call returns.
      const rpc = trace.getTracer('test').startSpan('SendMessage');
      const running = context.with(trace.setSpan(context.active(), rpc), () =>
        workflow.execute(new RequestContext(request, taskId, contextId, callContext), bus),
      );
      rpc.end();
      await running;
      const { turns, all } = await spansOfTask(taskId, 1);
      expect(parentSpanId(turns[0])).toBe(rpc.spanContext().spanId);
      expect(turns[0].spanContext().traceId).toBe(rpc.spanContext().traceId);
      expect(childrenOf(all, turns[0]).map((s) => s.name)).toEqual(['chat scenario-model']);
      expect(events.length).toBeGreaterThan(0);
    } finally {
      model.answerWith(scenarioReply(USAGE));
    }
  });

  it('a sub-agent call is an execute_tool span of type extension under the turn, with the call in its context', async () => {
    await ok('registry/create', {
      kind: 'actor',
      name: 'remote',
      spec: { description: 'an external agent', a2a: { url: agent.url, auth: { credential: AGENT_KEY } } },
    });
    await ok('registry/create', {
      kind: 'actor',
      name: 'lead',
      spec: { localGraph: 'orchestrator', tools: ['remote'] },
    });
    model.answerWith((body) => {
      const tool = (body.messages as { role: string; content?: unknown }[]).find((m) => m.role === 'tool');
      if (tool) return { tokens: ['Relayed.'], usage: USAGE };
      return {
        toolCalls: [{ id: 'call-agent', name: 'remote', arguments: JSON.stringify({ message: 'sub hello' }) }],
        usage: USAGE,
      };
    });
    process.env[CAPTURE_CONTENT_VARIABLE] = 'true';
    try {
      const contextId = (await ok('session/create', { actor: 'lead', profile: 'autonomous' })).sessionId as string;
      const events = await collect(
        client.sendMessageStream(sendRequestOf(wireMessage('ask the agent', { contextId }))),
      );
      expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
      const taskId = (events[0].payload as { value: Task }).value.id;
      const { turns, all } = await spansOfTask(taskId, 1);
      expect(turns[0].name).toBe('invoke_agent lead');
      const tool = childrenOf(all, turns[0]).find((s) => s.name === 'execute_tool remote')!;
      expect(tool.attributes).toMatchObject({
        'gen_ai.tool.type': 'extension',
        'gen_ai.tool.call.id': 'call-agent',
        'cleveragents.tool.runs_on': 'agent',
        'cleveragents.tool.outcome': 'ok',
      });
      expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.result']))).toMatchObject({
        state: 'completed',
        answer: 'agent: sub hello',
      });
      // Whatever the sub-agent call traces (its outbound request) is under the tool call's span.
      const within = (s: ReadableSpan) =>
        s !== tool && nanos(s.startTime) >= nanos(tool.startTime) && nanos(s.endTime) <= nanos(tool.endTime);
      for (const span of all.filter(within)) {
        expect(parentSpanId(span)).toBe(tool.spanContext().spanId);
      }
      expect(JSON.stringify(all.map((s) => s.attributes))).not.toContain(AGENT_KEY);
    } finally {
      delete process.env[CAPTURE_CONTENT_VARIABLE];
      model.answerWith(scenarioReply(USAGE));
    }
  });

  it('a price on the actor model: validated naming each field, and the cost counted', async () => {
    const bad = await call('registry/create', {
      kind: 'actor',
      name: 'badly-priced',
      spec: {
        localGraph: 'orchestrator',
        model: { model: 'scenario-model', pricing: { inputPerMillionTokens: -1, currency: 'usd' } },
      },
    });
    expect(bad.json.error.code).toBe(-32602);
    expect(fieldsOf(bad).sort()).toEqual(['spec.model.pricing.currency', 'spec.model.pricing.inputPerMillionTokens']);
    const none = await call('registry/create', {
      kind: 'actor',
      name: 'no-price',
      spec: { localGraph: 'orchestrator', model: { model: 'scenario-model', pricing: { currency: 'EUR' } } },
    });
    expect(fieldsOf(none)).toEqual(['spec.model.pricing.inputPerMillionTokens']);
    const huge = await call('registry/create', {
      kind: 'actor',
      name: 'no-price',
      spec: {
        localGraph: 'orchestrator',
        model: { model: 'scenario-model', pricing: { outputPerMillionTokens: 'ten' } },
      },
    });
    expect(fieldsOf(huge)).toEqual(['spec.model.pricing.outputPerMillionTokens']);

    await ok('registry/create', {
      kind: 'actor',
      name: 'priced',
      spec: {
        localGraph: 'orchestrator',
        model: {
          model: 'scenario-model',
          pricing: { inputPerMillionTokens: 2.5, outputPerMillionTokens: 10, currency: 'EUR' },
        },
      },
    });
    const { taskId } = await play('priced', new Map([[FILE_PATH, 'priced notes']]));
    await spansOfTask(taskId, 3);
    const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
    // Five model calls of 20 input and 3 output tokens: 100 × 2.5 / 1e6 + 15 × 10 / 1e6 EUR.
    const cost = Number(
      /^cleveragents_model_cost_total\{namespace="default",actor="priced",model="scenario-model",currency="EUR"\} (\S+)$/m.exec(
        text,
      )?.[1],
    );
    expect(cost).toBeCloseTo((100 * 2.5 + 15 * 10) / 1e6, 12);
    // An actor without a price has no cost series.
    expect(text).not.toMatch(/cleveragents_model_cost_total\{[^}]*actor="default"/);
  });

  it('GET /metrics: turns, their durations and first events, tokens, and the GenAI client histograms', async () => {
    const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
    const value = (series: string) =>
      Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(
      value('cleveragents_turns_total{namespace="default",actor="default",backend="local",outcome="completed"}'),
    ).toBeGreaterThanOrEqual(2);
    expect(
      value('cleveragents_turns_total{namespace="default",actor="default",backend="local",outcome="input-required"}'),
    ).toBeGreaterThanOrEqual(4);
    expect(
      value('cleveragents_turns_total{namespace="default",actor="default",backend="local",outcome="failed"}'),
    ).toBe(1);
    expect(text).toMatch(
      /^cleveragents_turn_duration_seconds_count\{namespace="default",actor="default",backend="local",outcome="completed"\} \d+$/m,
    );
    expect(
      value('cleveragents_turn_first_event_seconds_count{namespace="default",actor="default",backend="local"}'),
    ).toBeGreaterThanOrEqual(6);
    expect(
      value(
        'cleveragents_model_tokens_total{namespace="default",actor="default",model="scenario-model",direction="input"}',
      ),
    ).toBeGreaterThanOrEqual(10 * USAGE.promptTokens);
    expect(
      value(
        'cleveragents_model_tokens_total{namespace="default",actor="default",model="scenario-model",direction="output"}',
      ),
    ).toBeGreaterThanOrEqual(10 * USAGE.completionTokens);
    expect(text).toMatch(/^gen_ai_client_token_usage_bucket\{.*gen_ai_token_type="input".*\} \d+$/m);
    expect(text).toMatch(/^gen_ai_client_operation_duration_count\{.*gen_ai_request_model="scenario-model".*\} \d+$/m);
    // No series is labelled by a task, a session or anything a person wrote.
    expect(text).not.toMatch(/task_id|session=|Uppercase/);
  });
});
