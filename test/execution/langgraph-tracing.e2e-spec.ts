import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Client } from '@langchain/langgraph-sdk';
import { SpanKind, SpanStatusCode, type SpanContext } from '@opentelemetry/api';
import { AppConfig } from '../../packages/server/src/config/app.config.js';
import { LangGraphActorBackend } from '../../packages/server/src/execution/langgraph/langgraph.backend.js';
import { langGraphThreadId } from '../../packages/server/src/execution/langgraph/langgraph.mapping.js';
import { MetricsService } from '../../packages/server/src/metrics/metrics.service.js';
import { OutboundMetrics } from '../../packages/server/src/metrics/outbound-metrics.js';
import { serverTracer } from '../../packages/server/src/telemetry/tracing.js';
import type { ActorTurn, TurnResult } from '../../packages/server/src/execution/actor-turn.js';
import { aTurn, RecordingTurnOutput } from '../factories/actor-turns.js';
import { startLangGraphServer, type LangGraphServer } from '../support/langgraph-server.js';
import { parentSpanId, spanText, startTestTracing, type TestTracing } from '../support/tracing.js';
import { freePort } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * LangGraph runs as outbound calls (docs/operations.md, "Traces"): each turn's run is a CLIENT span under the
 * span active when the turn runs it, and every request made for the run carries that span's W3C trace context
 * to the real LangGraph API server (which notes the headers it receives: test/fixtures/langgraph/
 * trace-headers-app.mjs). Spans are the OpenTelemetry SDK's, kept in memory (test/support/tracing.ts).
 */

let dataDir: string;
let tracing: TestTracing;
let langgraph: LangGraphServer;
let client: Client;
let metrics: MetricsService;
let backend: LangGraphActorBackend;

function configFor(url: string): AppConfig {
  return AppConfig.fromEnv({
    CLEVERAGENTS_DATA_DIR: dataDir,
    CLEVERAGENTS_ACTOR_BACKEND: 'langgraph',
    CLEVERAGENTS_LANGGRAPH_URL: url,
  });
}

const traceparentOf = (span: SpanContext): string => `00-${span.traceId}-${span.spanId}-01`;

/** Runs the turn on `on` inside a span standing for the turn's own (the turn workflow's `invoke_agent <actor>`). */
async function inTurnSpan(
  on: LangGraphActorBackend,
  turn: ActorTurn,
): Promise<{ result: TurnResult; parent: SpanContext }> {
  return await serverTracer().startActiveSpan('turn under test', async (span) => {
    try {
      return { result: await on.run(turn), parent: span.spanContext() };
    } finally {
      span.end();
    }
  });
}

/** The one ended span named `name`. */
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'cleveragents-langgraph-tracing-'));
  tracing = startTestTracing();
  langgraph = await startLangGraphServer({ recordTraceHeaders: true });
  client = new Client({ apiUrl: langgraph.url, apiKey: null });
  metrics = new MetricsService();
  backend = new LangGraphActorBackend(configFor(langgraph.url), {}, new OutboundMetrics(metrics));
});

afterAll(async () => {
  ifAssigned(backend)?.stop();
  await ifAssigned(langgraph)?.close();
  await ifAssigned(metrics)?.onApplicationShutdown();
  await ifAssigned(tracing)?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

beforeEach(() => tracing.reset());

describe('LangGraph runs, traced', () => {
  it('a run is a CLIENT span `invoke_agent <graph id>` under the turn, and its every request carries that span', async () => {
    const output = new RecordingTurnOutput();
    const turn = aTurn({ text: 'hello', namespace: 'acme', owner: 'ada', output });
    const { result, parent } = await inTurnSpan(backend, turn);
    expect(result).toEqual({ state: 'completed' });
    expect(output.answer).toBe('Echo #1: hello');

    const span = tracing.only('invoke_agent orchestrator');
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.spanContext().traceId).toBe(parent.traceId);
    expect(parentSpanId(span)).toBe(parent.spanId);
    const threadId = langGraphThreadId('acme', 'ada', turn.contextId);
    const runId = output.remembered.runId as string;
    expect(span.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'orchestrator',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(langgraph.url).port),
      'cleveragents.langgraph.thread_id': threadId,
      'cleveragents.langgraph.operation': 'create',
      'cleveragents.langgraph.run_id': runId,
      'cleveragents.outcome': 'completed',
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);

    // The thread created, the run streamed, the run read back: each with the run's span as its parent.
    const requests = (await langgraph.tracedRequests()).filter(
      (r) => r.path.includes(threadId) || r.path === '/threads',
    );
    expect(requests.map((r) => `${r.method} ${r.path.replace(threadId, ':thread').replace(runId, ':run')}`)).toEqual([
      'POST /threads',
      'POST /threads/:thread/runs/stream',
      'GET /threads/:thread/runs/:run',
    ]);
    for (const request of requests) {
      expect(request.traceparent).toBe(traceparentOf(span.spanContext()));
      expect(request.baggage).toBeNull();
    }
    // And in the run's metadata, where the graph's nodes find it.
    expect((await client.runs.get(threadId, runId)).metadata).toMatchObject({
      cleveragents_task_id: turn.taskId,
      traceparent: traceparentOf(span.spanContext()),
    });
  });

  it('a cancel is a CLIENT span `cancel_run <graph id>` under the run, its request carrying it', async () => {
    const abort = new AbortController();
    const output = new RecordingTurnOutput();
    const turn = aTurn({ text: 'slow please', signal: abort.signal, output });
    const running = inTurnSpan(backend, turn);
    await output.answerReaches((answer) => answer.length >= 4);
    abort.abort();
    expect((await running).result).toEqual({ state: 'canceled' });

    const run = tracing.only('invoke_agent orchestrator');
    expect(run.attributes['cleveragents.outcome']).toBe('canceled');
    const cancel = tracing.only('cancel_run orchestrator');
    expect(cancel.kind).toBe(SpanKind.CLIENT);
    expect(parentSpanId(cancel)).toBe(run.spanContext().spanId);
    const runId = output.remembered.runId as string;
    expect(cancel.attributes).toMatchObject({
      'gen_ai.agent.name': 'orchestrator',
      'cleveragents.langgraph.run_id': runId,
      'server.address': '127.0.0.1',
    });
    const cancels = (await langgraph.tracedRequests()).filter((r) => r.path.endsWith(`/runs/${runId}/cancel`));
    expect(cancels.map((r) => r.traceparent)).toEqual([traceparentOf(cancel.spanContext())]);
  });

  it('a server that cannot be reached: the span fails with a bounded error.type, and each retry is counted', async () => {
    const port = await freePort();
    const unreachable = new LangGraphActorBackend(
      configFor(`http://127.0.0.1:${port}`),
      { maxRetries: 1 },
      new OutboundMetrics(metrics),
    );
    const { result } = await inTurnSpan(unreachable, aTurn({ text: 'hello' }));
    expect(result.state).toBe('failed');

    const span = tracing.only('invoke_agent orchestrator');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'ConnectionError' });
    expect(span.attributes).toMatchObject({
      'error.type': 'ConnectionError',
      'cleveragents.outcome': 'failed',
      'server.port': port,
    });
    // A read (a GET: the client retries it, not a POST refused) is refused, tried once more, and counted.
    const session = { contextId: 'ctx-unreachable', namespace: 'acme', owner: 'ada', actor: aTurn().actor };
    await expect(unreachable.assemble(session)).rejects.toThrow(/could not be reached/);
    expect(await metrics.render()).toMatch(
      /^cleveragents_outbound_retries_total\{target="langgraph",reason="network"\} 1$/m,
    );
  });
});

describe('a hostile LangGraph server', () => {
  let hostile: Server;
  let url: string;
  const SECRET = 'free text of the server that must not reach a span';
  const runId = `run-${'r'.repeat(4000)}\u0007\n`;

  beforeAll(async () => {
    // Creates threads, then streams a run whose id is huge and carries control characters, and an error event.
    hostile = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/threads') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`event: metadata\ndata: ${JSON.stringify({ run_id: runId })}\n\n`);
        res.end(`event: error\ndata: ${JSON.stringify({ error: SECRET, message: SECRET })}\n\n`);
      });
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    hostile.closeAllConnections();
    await new Promise((resolve) => hostile.close(resolve));
  });

  it('gets into the span only as bounded labels: a capped printable run id, no error text', async () => {
    const on = new LangGraphActorBackend(configFor(url));
    const { result } = await inTurnSpan(on, aTurn({ text: 'hello' }));
    expect(result).toEqual({ state: 'failed', reason: expect.stringContaining(SECRET) });

    const span = tracing.only('invoke_agent orchestrator');
    const recorded = span.attributes['cleveragents.langgraph.run_id'] as string;
    expect(recorded.length).toBeLessThanOrEqual(129);
    expect(recorded).toMatch(/^run-r+…$/);
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'run_failed' });
    expect(spanText(span)).not.toContain(SECRET);
  });
});
