/**
 * Client spans over the OpenTelemetry API: each JSON-RPC request gets a CLIENT span named after its method and
 * carries the W3C trace context (`traceparent`, `tracestate`) as headers; the stdio connection moves them into
 * the request's `_meta`. Without a registered SDK every call here is a no-op and no header is added. Nothing a
 * server sends reaches a span but a JSON-RPC error code (its message only with content capture on, bounded).
 */
import { SpanKind, SpanStatusCode, context, propagation, trace, type Span } from '@opentelemetry/api';
import { CleverAgentsError } from './errors.js';
import { methodOfBody } from './http.js';

export const TRACER_NAME = '@cleveragents/client';

/** The trace context members a request carries: HTTP headers, or `_meta` over stdio. */
export const TRACE_CONTEXT_KEYS = ['traceparent', 'tracestate'] as const;

/** Longest server-sent error message kept in a span (content capture on only). */
const MAX_ERROR_MESSAGE_CHARS = 256;
/** Longest SSE data line inspected for a JSON-RPC error (an error event is small; results are not read). */
const MAX_INSPECTED_LINE_CHARS = 8 * 1024;

export type Transport = 'http' | 'stdio';

export interface TracingOptions {
  /** Record a JSON-RPC error's message (bounded, controls removed); off unless content capture is on. */
  captureErrorMessages?: boolean;
}

/** Text from a stranger as a span may hold it: no control characters, at most `max` characters. */
export function boundedText(text: string, max: number): string {
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, ' ');
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

/** An ErrorInfo reason as a span may hold it: UPPER_SNAKE_CASE, short; anything else is left out. */
const REASON = /^[A-Z][A-Z0-9_]{0,63}$/;

function failWith(span: Span, code: number, message: unknown, options: TracingOptions, reason?: unknown): void {
  span.setAttribute('rpc.jsonrpc.error_code', code);
  span.setAttribute('error.type', String(code));
  if (typeof reason === 'string' && REASON.test(reason)) span.setAttribute('cleveragents.error.reason', reason);
  if (options.captureErrorMessages && typeof message === 'string') {
    span.setAttribute('rpc.jsonrpc.error_message', boundedText(message, MAX_ERROR_MESSAGE_CHARS));
  }
  span.setStatus({ code: SpanStatusCode.ERROR, message: `JSON-RPC error ${code}` });
}

/** Marks the span failed when `text` is a JSON-RPC error answer. */
function inspectAnswer(span: Span, text: string, options: TracingOptions): void {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return;
  }
  const error = (answer as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (typeof error?.code !== 'number' || !Number.isInteger(error.code)) return;
  failWith(span, error.code, error.message, options);
}

/** A top-level JSON-RPC error as an answer too long to parse here begins: `"error":{"code":N` before any result. */
const LEADING_ERROR = /^[^]*?"error"\s*:\s*\{\s*"code"\s*:\s*(-?\d+)/;

/** Marks the span failed when an SSE event's data (its first MAX_INSPECTED_LINE_CHARS kept) is a JSON-RPC error. */
function inspectEvent(span: Span, data: string, options: TracingOptions): void {
  if (data.length <= MAX_INSPECTED_LINE_CHARS) return inspectAnswer(span, data, options);
  const match = LEADING_ERROR.exec(data);
  // Outside a string a quote is never escaped: a match before any "result" member is the answer's own error.
  if (match && !match[0].includes('"result"')) failWith(span, Number(match[1]), undefined, options);
}

/**
 * An SSE body that ends the span when the stream ends (read to its end, failed or cancelled), marking it failed
 * on an event that is a JSON-RPC error.
 */
function observedStream(body: ReadableStream<Uint8Array>, span: Span, options: TracingOptions): ReadableStream {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let line = '';
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    span.end();
  };
  const inspect = (chunk: Uint8Array): void => {
    const text = decoder.decode(chunk, { stream: true });
    for (let at = 0; ;) {
      const newline = text.indexOf('\n', at);
      // A line is kept up to just past the length inspected: enough to know it was longer.
      const room = MAX_INSPECTED_LINE_CHARS + 6 - line.length;
      if (room > 0) line += text.slice(at, Math.min(newline < 0 ? text.length : newline, at + room));
      if (newline < 0) return;
      if (line.startsWith('data:')) inspectEvent(span, line.slice(5), options);
      line = '';
      at = newline + 1;
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
          return;
        }
        if (span.isRecording()) inspect(value);
        controller.enqueue(value);
      } catch (err) {
        span.setAttribute('error.type', err instanceof Error ? err.name : 'Error');
        span.setStatus({ code: SpanStatusCode.ERROR });
        end();
        throw err;
      }
    },
    async cancel(reason) {
      end();
      await reader.cancel(reason);
    },
  });
}

/** Where the request goes, as the RPC conventions name it (HTTP only). */
function serverAttributes(input: Parameters<typeof fetch>[0]): Record<string, string | number> {
  const url = URL.parse(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  if (!url) return {};
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { 'server.address': url.hostname, 'server.port': port };
}

/**
 * A `fetch` whose JSON-RPC requests each run in a CLIENT span (named after the method) and carry the active
 * trace context. A single answer ends the span when it arrives; an event stream, when it ends.
 */
export function tracedFetch(base: typeof fetch, transport: Transport, options: TracingOptions = {}): typeof fetch {
  return async (input, init) => {
    const method = methodOfBody(init?.body);
    if (method === undefined) return base(input, init);
    const tracer = trace.getTracer(TRACER_NAME);
    const span = tracer.startSpan(method, {
      kind: SpanKind.CLIENT,
      attributes: {
        'rpc.system': 'jsonrpc',
        'rpc.method': method,
        'rpc.jsonrpc.version': '2.0',
        'cleveragents.transport': transport,
        ...(transport === 'http' ? serverAttributes(input) : {}),
      },
    });
    const headers = new Headers(init?.headers);
    propagation.inject(trace.setSpan(context.active(), span), headers, {
      set: (carrier, key, value) => carrier.set(key, value),
    });
    let response: Response;
    try {
      response = await base(input, { ...init, headers });
    } catch (err) {
      if (err instanceof CleverAgentsError) failWith(span, err.code, err.message, options, err.reason);
      else {
        span.setAttribute('error.type', err instanceof Error ? err.name : 'Error');
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
      throw err;
    }
    if (!span.isRecording()) return response;
    if (response.headers.get('content-type')?.startsWith('text/event-stream') && response.body) {
      return new Response(observedStream(response.body, span, options), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
    try {
      if (response.status >= 400) span.setAttribute('http.response.status_code', response.status);
      inspectAnswer(span, await response.clone().text(), options);
    } finally {
      span.end();
    }
    return response;
  };
}

/** The trace context of a request's headers, as stdio's `_meta` carries it; undefined when there is none. */
export function traceContextOf(headers: RequestInit['headers']): Record<string, string> | undefined {
  const given = new Headers(headers);
  const meta: Record<string, string> = {};
  for (const key of TRACE_CONTEXT_KEYS) {
    const value = given.get(key);
    if (value !== null) meta[key] = value;
  }
  return Object.keys(meta).length > 0 ? meta : undefined;
}
