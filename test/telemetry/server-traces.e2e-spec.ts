import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { databaseTargets, TEST_DEFAULTS, type TestDatabase } from '../support/database.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';
import { startProcess, stopAll, type ServerProcess } from '../support/server-process.js';
import { StdioClient } from '../support/stdio-client.js';
import { until } from '../support/wait.js';

/*
 * The server's span of each JSON-RPC call, exported by a real server process over OTLP (http/json) to a
 * receiver in this test: under the caller's trace context (HTTP `traceparent`, stdio `_meta`), named and
 * described by its method and outcome; log lines carry its ids; and with tracing off, nothing is sent.
 */

const SERVER = 2;

function traceContext(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

async function post(server: ServerProcess, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(`${server.baseUrl}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
    body: JSON.stringify(body),
  });
  return res.json();
}

/** The JSON log lines a process wrote that carry `trace_id`. */
function tracedLogLines(output: string): { trace_id: string; span_id: string; msg?: string; method?: string }[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('"trace_id"'))
    .map((line) => JSON.parse(line) as { trace_id: string; span_id: string; msg?: string; method?: string });
}

describe('the server span of each JSON-RPC call', () => {
  let db: TestDatabase;
  let receiver: OtlpReceiver;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    db = await databaseTargets().at(-1)!.create();
  });

  afterAll(async () => {
    await stopAll(servers);
    await receiver.close();
    await db.cleanup();
  });

  const start = async (extra: Record<string, string>): Promise<ServerProcess> => {
    const server = await startProcess({
      ...TEST_DEFAULTS,
      ...db.env,
      LOG_LEVEL: 'info',
      CLEVERAGENTS_AUTH_SCHEMES: 'none',
      CLEVERAGENTS_MIGRATE_ON_START: 'true',
      ...extra,
    });
    servers.push(server);
    return server;
  };
  const stop = async (server: ServerProcess): Promise<void> => {
    server.process.kill('SIGTERM');
    await server.exited;
  };

  describe('with OTLP export on', () => {
    let server: ServerProcess;
    beforeAll(async () => {
      server = await start(receiver.env('traces-e2e'));
    });

    it('continues the caller’s trace from `traceparent` and names the method and outcome', async () => {
      const caller = traceContext();
      const answer = await post(
        server,
        { jsonrpc: '2.0', id: 'call-1', method: 'GetTask', params: { id: 'no-such-task' } },
        { traceparent: caller.traceparent },
      );
      expect(answer.error.code).toBe(-32001);

      const spans = await receiver.waitForSpans((all) => all.some((s) => s.traceId === caller.traceId));
      const span = spans.find((s) => s.traceId === caller.traceId)!;
      expect(span).toMatchObject({
        name: 'GetTask',
        kind: SERVER,
        parentSpanId: caller.spanId,
        service: 'traces-e2e',
        scope: '@cleveragents/server',
        status: { code: 2 },
      });
      expect(span.attributes).toMatchObject({
        'rpc.system': 'jsonrpc',
        'rpc.method': 'GetTask',
        'rpc.jsonrpc.version': '2.0',
        'rpc.jsonrpc.request_id': 'call-1',
        'rpc.jsonrpc.error_code': -32001,
        'error.type': 'TASK_NOT_FOUND',
        'cleveragents.error.reason': 'TASK_NOT_FOUND',
        'cleveragents.a2a.version': '1.0',
        'cleveragents.transport': 'http',
        'cleveragents.namespace': 'default',
      });

      // The call's log line carries the span's ids.
      const lines = tracedLogLines(server.log()).filter((l) => l.trace_id === caller.traceId);
      expect(lines.map((l) => l.msg)).toContain('rpc call');
      expect(new Set(lines.map((l) => l.span_id))).toEqual(new Set([span.spanId]));
    });

    it('starts a trace of its own for a call without one, and leaves a successful call unset', async () => {
      receiver.reset();
      const answer = await post(server, { jsonrpc: '2.0', id: 2, method: 'ListTasks', params: {} });
      expect(answer.error).toBeUndefined();
      const [span] = (await receiver.waitForSpans((all) => all.some((s) => s.name === 'ListTasks'))).filter(
        (s) => s.name === 'ListTasks',
      );
      expect(span.parentSpanId).toBeUndefined();
      expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(span.status.code ?? 0).toBe(0);
      expect(span.attributes['rpc.jsonrpc.error_code']).toBeUndefined();
    });

    it('names an unknown method by a fixed label, never by the caller’s string', async () => {
      const method = `NoSuchMethod${'x'.repeat(5000)}`;
      receiver.reset();
      const caller = traceContext();
      const answer = await post(
        server,
        { jsonrpc: '2.0', id: 3, method, params: {} },
        { traceparent: caller.traceparent },
      );
      expect(answer.error.code).toBe(-32601);
      const spans = await receiver.waitForSpans((all) => all.some((s) => s.traceId === caller.traceId));
      const span = spans.find((s) => s.traceId === caller.traceId)!;
      expect(span.name).toBe('(unknown)');
      expect(span.attributes['rpc.method']).toBe('(unknown)');
      // The error's message is the one the caller got, which echoes a bounded prefix of the name.
      const message = span.attributes['rpc.jsonrpc.error_message'] as string;
      expect(message).toBe(answer.error.message);
      expect(message.length).toBeLessThan(500);
    });

    it('ignores a malformed traceparent and starts a new trace', async () => {
      receiver.reset();
      await post(
        server,
        { jsonrpc: '2.0', id: 4, method: 'ListTasks', params: {} },
        { traceparent: '00-zzzz-not-a-trace-01' },
      );
      const spans = await receiver.waitForSpans((all) => all.some((s) => s.name === 'ListTasks'));
      expect(spans.find((s) => s.name === 'ListTasks')!.parentSpanId).toBeUndefined();
    });

    it('exports what it still holds when it stops', async () => {
      receiver.reset();
      const caller = traceContext();
      await post(
        server,
        { jsonrpc: '2.0', id: 5, method: 'ListTasks', params: {} },
        { traceparent: caller.traceparent },
      );
      await stop(server);
      expect(receiver.spans().some((s) => s.traceId === caller.traceId)).toBe(true);
    });
  });

  it('over stdio, continues the trace the request’s `_meta` names', async () => {
    receiver.reset();
    const client = StdioClient.start({ ...db.env, ...receiver.env('stdio-e2e') });
    try {
      const caller = traceContext();
      const answer = await client.request({
        jsonrpc: '2.0',
        id: 7,
        method: 'GetTask',
        params: { id: 'missing' },
        _meta: { traceparent: caller.traceparent },
      });
      expect(answer.error.code).toBe(-32001);
      const spans = await receiver.waitForSpans((all) => all.some((s) => s.traceId === caller.traceId));
      const span = spans.find((s) => s.traceId === caller.traceId)!;
      expect(span).toMatchObject({ name: 'GetTask', parentSpanId: caller.spanId, service: 'stdio-e2e' });
      expect(span.attributes['cleveragents.transport']).toBe('stdio');
      // Every stdout line stayed JSON-RPC: the SDK wrote nothing there.
      for (const line of client.stdoutLines) expect(JSON.parse(line)).toHaveProperty('jsonrpc', '2.0');
      expect(tracedLogLines(client.stderr).some((l) => l.trace_id === caller.traceId)).toBe(true);
    } finally {
      await client.end();
    }
  });

  it('over stdio, the console exporter writes to stderr: stdout stays the protocol’s', async () => {
    const client = StdioClient.start({ ...db.env, OTEL_TRACES_EXPORTER: 'console', OTEL_BSP_SCHEDULE_DELAY: '50' });
    try {
      const caller = traceContext();
      await client.request({
        jsonrpc: '2.0',
        id: 9,
        method: 'GetTask',
        params: { id: 'missing' },
        _meta: { traceparent: caller.traceparent },
      });
      await until(() => client.stderr.includes(caller.traceId), 'the span on stderr');
      for (const line of client.stdoutLines) expect(JSON.parse(line)).toHaveProperty('jsonrpc', '2.0');
    } finally {
      await client.end();
    }
  });

  it('pushes the same instruments /metrics shows over OTLP when OTEL_METRICS_EXPORTER asks', async () => {
    receiver.reset();
    const server = await start({
      ...receiver.env('metrics-e2e'),
      OTEL_METRICS_EXPORTER: 'otlp',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=e2e',
    });
    try {
      for (let id = 0; id < 3; id++) await post(server, { jsonrpc: '2.0', id, method: 'ListTasks', params: {} });
      const scraped = await (await fetch(`${server.baseUrl}/metrics`)).text();
      expect(scraped).toContain('cleveragents_rpc_requests_total{method="ListTasks",code="ok",transport="http"} 3');
      await until(
        () =>
          receiver
            .points()
            .some(
              (p) => p.metric === 'cleveragents_rpc_requests' && p.attributes.method === 'ListTasks' && p.value === 3,
            ),
        'the RPC counter to be pushed',
      );
      const point = receiver.points().find((p) => p.metric === 'cleveragents_rpc_requests')!;
      expect(point).toMatchObject({ service: 'metrics-e2e', attributes: { code: 'ok', transport: 'http' } });
    } finally {
      await stop(server);
    }
  });

  it.each([
    ['OTEL_SDK_DISABLED=true', { OTEL_SDK_DISABLED: 'true' }],
    ['OTEL_TRACES_EXPORTER=none', { OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' }],
  ])('sends nothing with %s, even with an endpoint set', async (_name, off) => {
    receiver.reset();
    const server = await start({ ...receiver.env('off-e2e'), ...off });
    const caller = traceContext();
    await post(server, { jsonrpc: '2.0', id: 8, method: 'ListTasks', params: {} }, { traceparent: caller.traceparent });
    await stop(server);
    expect(receiver.requests()).toBe(0);
    expect(server.log()).not.toContain('tracing on');
    // With no span, the log lines carry no trace ids, not even the caller's.
    expect(tracedLogLines(server.log())).toEqual([]);
  });
});
