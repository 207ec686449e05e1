import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler } from 'express';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { TaskState } from '@a2a-js/sdk';
import { connect, TRACER_NAME, type CleverAgentsClient } from '../../packages/client/src/node.js';
import { sdkAgentCard, startSdkAgent, taskEvents, text, type SdkAgent } from '../support/a2a-test-agent.js';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { parentSpanId, startTestTracing, type TestTracing } from '../support/tracing.js';
import { sendRequest } from '../factories/messages.js';
import { collect } from './lib-support.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The client library's request spans and trace context, with real OpenTelemetry SDK spans in this process:
 * over HTTP to an @a2a-js/sdk agent that records the headers it is sent, and over stdio to the real local
 * server behind a recorder of the lines it is sent (test/support/stdio-recorder.mjs). A hostile agent's
 * error messages stay out of the spans, or in them bounded when content capture is asked for.
 */

const RECORDER = fileURLToPath(new URL('../support/stdio-recorder.mjs', import.meta.url));
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;
/** A server's error message: huge, with terminal controls, a fake secret. */
const HOSTILE_MESSAGE = `\u001b]0;pwned\u0007 token=sk-live-${'A'.repeat(40)} ${'x'.repeat(200_000)}`;

interface Seen {
  method: string;
  traceparent?: string;
}

describe('client request spans', () => {
  let tracing: TestTracing;
  let agent: SdkAgent;
  const seen: Seen[] = [];

  const record: RequestHandler = (req, _res, next) => {
    const traceparent = req.headers.traceparent;
    seen.push({
      method: String((req.body as { method?: unknown } | undefined)?.method),
      ...(typeof traceparent === 'string' ? { traceparent } : {}),
    });
    next();
  };
  /** Answers GetTask with a hostile error; SendStreamingMessage with an event stream whose event is one. */
  const hostile: RequestHandler = (req, res, next) => {
    const body = req.body as { id?: unknown; method?: unknown };
    const error = { code: -32099, message: HOSTILE_MESSAGE, data: 'y'.repeat(100_000) };
    if (body.method === 'GetTask') return void res.json({ jsonrpc: '2.0', id: body.id, error });
    if (body.method === 'SendStreamingMessage' && JSON.stringify(req.body).includes('hostile stream')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, error })}\n\n`);
      return;
    }
    next();
  };

  beforeAll(async () => {
    agent = await startSdkAgent({
      card: (url) => sdkAgentCard(url, { name: 'Recording agent', description: 'records trace headers' }),
      executor: {
        execute: (context, bus) => {
          const events = taskEvents(context, bus);
          events.open();
          events.status(TaskState.TASK_STATE_WORKING);
          events.artifact('answer', 'answer', [text('ok')]);
          events.status(TaskState.TASK_STATE_COMPLETED);
          bus.finished();
          return Promise.resolve();
        },
        cancelTask: () => Promise.resolve(),
      },
      before: [express.json(), record, hostile],
    });
  });

  afterAll(async () => {
    await ifAssigned(agent)?.close();
  });

  describe('without a tracer provider (tracing off)', () => {
    it('sends no trace context', async () => {
      seen.length = 0;
      const client = await connect({ agent: agent.url });
      try {
        await client.send(sendRequest('untraced'));
      } finally {
        await client.close();
      }
      expect(seen.map((s) => s.method)).toEqual(['SendMessage']);
      expect(seen[0].traceparent).toBeUndefined();
    });
  });

  describe('with tracing', () => {
    let client: CleverAgentsClient;

    beforeAll(async () => {
      tracing = startTestTracing();
      client = await connect({ agent: agent.url });
    });

    afterAll(async () => {
      await ifAssigned(client)?.close();
      await ifAssigned(tracing)?.stop();
    });

    it('runs each HTTP request in a CLIENT span named after its method, its context in traceparent', async () => {
      seen.length = 0;
      tracing.reset();
      const parent = trace.getTracer('test');
      await parent.startActiveSpan('command', async (span) => {
        await client.send(sendRequest('traced'));
        span.end();
      });
      const [command] = tracing.named('command');
      const [request] = tracing.named('SendMessage');
      expect(request.kind).toBe(SpanKind.CLIENT);
      expect(request.instrumentationScope.name).toBe(TRACER_NAME);
      expect(request.spanContext().traceId).toBe(command.spanContext().traceId);
      expect(parentSpanId(request)).toBe(command.spanContext().spanId);
      expect(request.attributes).toEqual({
        'rpc.system': 'jsonrpc',
        'rpc.method': 'SendMessage',
        'rpc.jsonrpc.version': '2.0',
        'cleveragents.transport': 'http',
        'server.address': '127.0.0.1',
        'server.port': agent.port,
      });
      expect(request.status.code).toBe(SpanStatusCode.UNSET);
      const [sent] = seen;
      expect(sent.method).toBe('SendMessage');
      const [, traceId, spanId] = TRACEPARENT.exec(sent.traceparent ?? '') ?? [];
      expect({ traceId, spanId }).toEqual({
        traceId: request.spanContext().traceId,
        spanId: request.spanContext().spanId,
      });
    });

    it('keeps a stream span open until the stream ends', async () => {
      tracing.reset();
      const events = client.stream(sendRequest('streamed'));
      expect((await events.next()).done).toBe(false);
      // The first event is read, the stream goes on: its span is still open.
      expect(tracing.named('SendStreamingMessage')).toEqual([]);
      for await (const event of events) expect(event).toBeDefined();
      const [span] = tracing.named('SendStreamingMessage');
      expect(span.attributes['rpc.method']).toBe('SendStreamingMessage');
      expect(span.ended).toBe(true);
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
    });

    it('marks a JSON-RPC error failed with its code, never the server-sent message', async () => {
      tracing.reset();
      await expect(client.tasks.get({ id: 'any' })).rejects.toMatchObject({ code: -32099 });
      const [span] = tracing.named('GetTask');
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'JSON-RPC error -32099' });
      expect(span.attributes['rpc.jsonrpc.error_code']).toBe(-32099);
      expect(span.events).toEqual([]);
      expect(JSON.stringify({ a: span.attributes, s: span.status })).not.toMatch(/pwned|sk-live|xxxx|yyyy/);
    });

    it('marks a stream whose event is an error failed, the message left out', async () => {
      tracing.reset();
      await expect(collect(client.stream(sendRequest('hostile stream')))).rejects.toMatchObject({ code: -32099 });
      const [span] = tracing.named('SendStreamingMessage');
      expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'JSON-RPC error -32099' });
      expect(span.attributes['rpc.jsonrpc.error_code']).toBe(-32099);
      expect(JSON.stringify({ a: span.attributes, s: span.status, e: span.events })).not.toMatch(/pwned|sk-live|xxxx/);
    });
  });

  describe('with content capture', () => {
    let client: CleverAgentsClient;

    beforeAll(async () => {
      tracing = startTestTracing();
      client = await connect({ agent: agent.url, tracing: { captureErrorMessages: true } });
    });

    afterAll(async () => {
      await ifAssigned(client)?.close();
      await ifAssigned(tracing)?.stop();
    });

    it('records the error message bounded and without controls', async () => {
      await expect(client.tasks.get({ id: 'any' })).rejects.toMatchObject({ code: -32099 });
      const [span] = tracing.named('GetTask');
      const message = span.attributes['rpc.jsonrpc.error_message'];
      expect(typeof message).toBe('string');
      expect((message as string).length).toBeLessThanOrEqual(257);
      expect(message).not.toMatch(/[\u0000-\u001f\u007f]/);
      expect(message).toContain('pwned');
    });
  });
});

describe('client request spans over stdio', () => {
  let tracing: TestTracing;
  let db: TestDatabase;
  let dir: string;
  let client: CleverAgentsClient;

  beforeAll(async () => {
    tracing = startTestTracing();
    db = await createEmbeddedTestDatabase();
    dir = await mkdtemp(join(tmpdir(), 'stdio-trace-'));
    client = await connect({
      local: {
        dataDir: db.env.CLEVERAGENTS_DATA_DIR,
        serverEntry: RECORDER,
        env: {
          CLEVERAGENTS_ACTOR_BACKEND: 'conformance',
          LOG_LEVEL: 'info',
          STDIO_RECORD_FILE: join(dir, 'requests.ndjson'),
        },
        closeTimeoutMs: 15_000,
      },
    });
  }, 60_000);

  afterAll(async () => {
    await ifAssigned(client)?.close();
    await ifAssigned(tracing)?.stop();
    await ifAssigned(db)?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("puts the trace context in each request's _meta, the request span as its parent", async () => {
    tracing.reset();
    await trace.getTracer('test').startActiveSpan('command', async (span) => {
      await client.sessions.create({ title: 'traced' });
      await collect(client.stream(sendRequest('tck-stream-001')));
      span.end();
    });
    const [command] = tracing.named('command');
    const lines = (await readFile(join(dir, 'requests.ndjson'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { method: string; _meta?: { traceparent?: string } });
    for (const method of ['_cleveragents/session/create', 'SendStreamingMessage']) {
      const [span] = tracing.named(method);
      expect(span.attributes).toMatchObject({ 'rpc.method': method, 'cleveragents.transport': 'stdio' });
      expect(span.attributes['server.address']).toBeUndefined();
      expect(parentSpanId(span)).toBe(command.spanContext().spanId);
      const sent = lines.filter((l) => l.method === method).at(-1);
      const [, traceId, spanId] = TRACEPARENT.exec(sent?._meta?.traceparent ?? '') ?? [];
      expect({ method, traceId, spanId }).toEqual({
        method,
        traceId: command.spanContext().traceId,
        spanId: span.spanContext().spanId,
      });
    }
    // The bootstrap card request ran outside the command: a trace of its own.
    const card = lines.find((l) => l.method === 'GetExtendedAgentCard')?._meta?.traceparent;
    expect(TRACEPARENT.exec(card ?? '')?.[1]).not.toBe(command.spanContext().traceId);
  });
});
