import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { AgentCard, StreamResponse, Task, TaskState } from '@a2a-js/sdk';
import { SpanKind, SpanStatusCode, type Context, type SpanContext } from '@opentelemetry/api';
import { AppConfig } from '../../packages/server/src/config/app.config.js';
import { SecretBox } from '../../packages/server/src/common/secret-box.js';
import { A2aAgentBackend } from '../../packages/server/src/execution/a2a/a2a.backend.js';
import { credentialContext } from '../../packages/server/src/execution/a2a/a2a-credential.js';
import {
  TURN_DETACHED,
  type ActorDefinition,
  type ActorTurn,
  type TurnResult,
} from '../../packages/server/src/execution/actor-turn.js';
import { MetricsService } from '../../packages/server/src/metrics/metrics.service.js';
import { OutboundMetrics } from '../../packages/server/src/metrics/outbound-metrics.js';
import { contextFrom, serverTracer } from '../../packages/server/src/telemetry/tracing.js';
import { aTurn, RecordingTurnOutput } from '../factories/actor-turns.js';
import { startRemoteAgent, type RemoteAgent } from '../support/a2a-remote-agent.js';
import { sdkAgentCard } from '../support/a2a-test-agent.js';
import { parentSpanId, spanText, startTestTracing, type TestTracing } from '../support/tracing.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * Calls to external A2A agents as outbound calls (docs/operations.md, "Traces"): each turn sent to an agent is
 * a CLIENT span `a2a.<method>` under the span active when the turn runs it, and every request to the agent
 * carries that span's W3C trace context, as the real SDK agent of test/support/a2a-remote-agent.ts sees it.
 */

const AGENT_KEY = 'agent-key-5e1d0c9a7f';
let dataDir: string;
let tracing: TestTracing;
let agent: RemoteAgent;
let box: SecretBox;
let metrics: MetricsService;
let backend: A2aAgentBackend;
let remote: ActorDefinition;

function configAllowing(...ports: number[]): AppConfig {
  return AppConfig.fromEnv({
    CLEVERAGENTS_DATA_DIR: dataDir,
    CLEVERAGENTS_MODEL_ALLOWED_HOSTS: ports.map((port) => `127.0.0.1:${port}`).join(','),
  });
}

const traceparentOf = (span: SpanContext): string => `00-${span.traceId}-${span.spanId}-01`;

/** Runs the turn inside a span standing for the turn's own (the turn workflow's), under `under` when given. */
async function inTurnSpan(
  on: A2aAgentBackend,
  turn: ActorTurn,
  under?: Context,
): Promise<{ result: TurnResult; parent: SpanContext }> {
  const run = async (span: { spanContext(): SpanContext; end(): void }) => {
    try {
      return { result: await on.run(turn), parent: span.spanContext() };
    } finally {
      span.end();
    }
  };
  return under
    ? await serverTracer().startActiveSpan('turn under test', {}, under, run)
    : await serverTracer().startActiveSpan('turn under test', run);
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'cleveragents-a2a-tracing-'));
  tracing = startTestTracing();
  agent = await startRemoteAgent(AGENT_KEY);
  box = new SecretBox([randomBytes(32)]);
  metrics = new MetricsService();
  backend = new A2aAgentBackend(configAllowing(agent.port), box, new OutboundMetrics(metrics));
  remote = {
    name: 'remote',
    tools: [],
    a2a: {
      url: agent.url,
      auth: { sealedCredential: box.seal(AGENT_KEY, credentialContext('acme', 'remote', agent.url)) },
    },
  };
});

afterAll(async () => {
  await ifAssigned(agent)?.close();
  await ifAssigned(metrics)?.onApplicationShutdown();
  await ifAssigned(tracing)?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

beforeEach(() => tracing.reset());

describe('calls to external A2A agents, traced', () => {
  it('a turn is a CLIENT span `a2a.SendStreamingMessage` under the turn; the agent sees its traceparent and tracestate', async () => {
    // The turn's trace continues a caller's that carries vendor state: it goes on to the agent as it came.
    const caller = contextFrom({
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'vendor=opaque-value',
    });
    const output = new RecordingTurnOutput();
    const before = agent.traceHeaders.length;
    const { result, parent } = await inTurnSpan(
      backend,
      aTurn({ text: 'hello', namespace: 'acme', actor: remote, output }),
      caller,
    );
    expect(result).toMatchObject({ state: 'completed' });
    expect(output.answer).toBe('agent: hello');

    const span = tracing.only('a2a.SendStreamingMessage');
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(parentSpanId(span)).toBe(parent.spanId);
    const taskId = (output.remembered.a2aRemoteTask as { taskId: string }).taskId;
    expect(span.attributes).toEqual({
      'rpc.system': 'jsonrpc',
      'rpc.method': 'SendStreamingMessage',
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'remote',
      'server.address': '127.0.0.1',
      'server.port': agent.port,
      'cleveragents.a2a.protocol_binding': 'JSONRPC',
      'cleveragents.a2a.remote_task.id': taskId,
      'cleveragents.a2a.remote_task.state': 'completed',
      'cleveragents.outcome': 'completed',
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(agent.traceHeaders.slice(before)).toEqual([
      { traceparent: traceparentOf(span.spanContext()), tracestate: 'vendor=opaque-value', baggage: null },
    ]);
  });

  it('re-joining a remote task (GetTask, SubscribeToTask) and cancelling it (CancelTask): each request carries its span', async () => {
    const before = agent.traceHeaders.length;
    // A turn lets go of its slow remote task when the server stops: the task goes on at the agent.
    const first = new RecordingTurnOutput();
    const detach = new AbortController();
    const started = inTurnSpan(
      backend,
      aTurn({ text: 'slow', namespace: 'acme', actor: remote, signal: detach.signal, output: first }),
    );
    await first.answerReaches((answer) => answer.includes('w1 '));
    detach.abort(TURN_DETACHED);
    expect((await started).result).toEqual({ state: 'canceled' });

    // Recovered after the restart: read back, followed again, then cancelled by its caller.
    const second = new RecordingTurnOutput();
    const cancel = new AbortController();
    const recovered = inTurnSpan(backend, {
      ...aTurn({
        text: 'slow',
        namespace: 'acme',
        actor: remote,
        mode: 'recover',
        signal: cancel.signal,
        output: second,
      }),
      remembered: first.remembered,
    });
    await second.answerReaches((answer) => answer.length > 0);
    cancel.abort();
    expect((await recovered).result).toEqual({ state: 'canceled' });

    const sent = tracing.only('a2a.SendStreamingMessage');
    const rejoined = tracing.only('a2a.SubscribeToTask');
    const cancelled = tracing.only('a2a.CancelTask');
    expect(rejoined.attributes).toMatchObject({ 'rpc.method': 'SubscribeToTask', 'cleveragents.outcome': 'canceled' });
    expect(cancelled.kind).toBe(SpanKind.CLIENT);
    expect(parentSpanId(cancelled)).toBe(rejoined.spanContext().spanId);
    const taskId = (first.remembered.a2aRemoteTask as { taskId: string }).taskId;
    expect(cancelled.attributes).toMatchObject({
      'rpc.system': 'jsonrpc',
      'rpc.method': 'CancelTask',
      'gen_ai.agent.name': 'remote',
      'cleveragents.a2a.remote_task.id': taskId,
      'cleveragents.a2a.remote_task.state': 'canceled',
    });
    expect(agent.traceHeaders.slice(before).map((headers) => headers.traceparent)).toEqual([
      traceparentOf(sent.spanContext()), // SendStreamingMessage
      traceparentOf(rejoined.spanContext()), // GetTask
      traceparentOf(rejoined.spanContext()), // SubscribeToTask
      traceparentOf(cancelled.spanContext()), // CancelTask
    ]);
    expect(agent.canceled).toContain(taskId);
  });
});

describe('a hostile A2A agent', () => {
  let hostile: Server;
  let url: string;
  const SECRET = 'free text of the agent that must not reach a span';
  const taskId = `task-${'t'.repeat(4000)}\u001b[31m\n`;
  const task = (state: TaskState): Task => ({
    id: taskId,
    contextId: 'ctx',
    status: {
      state,
      message: {
        messageId: 'm',
        contextId: 'ctx',
        taskId,
        role: 2,
        parts: [{ content: { $case: 'text', value: SECRET }, metadata: undefined, filename: '', mediaType: '' }],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      timestamp: undefined,
    },
    artifacts: [],
    history: [],
    metadata: undefined,
  });

  beforeAll(async () => {
    // Its stream ends while its task (a huge id with control characters) is working; read back, it failed.
    hostile = createServer((req, res) => {
      if (req.url === '/.well-known/agent-card.json') {
        const card = sdkAgentCard(url, { name: 'Hostile agent', description: SECRET });
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(AgentCard.toJSON(card)));
      }
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const { id, method } = JSON.parse(Buffer.concat(chunks).toString()) as { id: number; method: string };
        if (method === 'SendStreamingMessage') {
          const event = StreamResponse.toJSON({
            payload: { $case: 'task', value: task(TaskState.TASK_STATE_WORKING) },
          });
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          return void res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: event })}\n\n`);
        }
        const result = Task.toJSON(task(TaskState.TASK_STATE_FAILED));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result }));
      });
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    hostile.closeAllConnections();
    await new Promise((resolve) => hostile.close(resolve));
  });

  it('gets into the span only as bounded labels, and the re-join after its early end is counted', async () => {
    const on = new A2aAgentBackend(
      configAllowing((hostile.address() as AddressInfo).port),
      box,
      new OutboundMetrics(metrics),
    );
    const actor: ActorDefinition = { name: 'hostile', tools: [], a2a: { url } };
    const { result } = await inTurnSpan(on, aTurn({ text: 'hello', actor }));
    expect(result).toEqual({ state: 'failed', reason: expect.stringContaining(SECRET) });

    const span = tracing.only('a2a.SendStreamingMessage');
    const recorded = span.attributes['cleveragents.a2a.remote_task.id'] as string;
    expect(recorded.length).toBeLessThanOrEqual(129);
    expect(recorded).toMatch(/^task-t+…$/);
    expect(span.attributes['cleveragents.a2a.remote_task.state']).toBe('failed');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'remote_failed' });
    expect(span.events.map((event) => [event.name, event.attributes])).toEqual([
      ['cleveragents.rejoin', { 'cleveragents.attempt': 1 }],
    ]);
    expect(spanText(span)).not.toContain(SECRET);
    expect(await metrics.render()).toMatch(
      /^cleveragents_outbound_retries_total\{target="a2a",reason="stream_ended"\} 1$/m,
    );
  });
});
