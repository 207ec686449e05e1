// The server's tracing, through the OpenTelemetry API only: with no SDK started (tracing off, the default)
// every call here is the API's no-op, and a span costs one small object. telemetry/start.ts starts the SDK
// from the OTEL_* environment variables (docs/operations.md, "Traces").
import {
  context,
  propagation,
  trace,
  SpanStatusCode,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import { SERVER_VERSION } from '../common/server-info.js';
import { ERROR_TYPE } from './attributes.js';

export const TRACER_NAME = '@cleveragents/server';

/** The server's tracer (a proxy: it follows the provider telemetry/start.ts registers, whenever it does). */
export function serverTracer(): Tracer {
  return trace.getTracer(TRACER_NAME, SERVER_VERSION);
}

/** Marks a span failed: status ERROR with the error's message, `error.type` and the exception event. */
export function failSpan(span: Span, err: unknown, errorType?: string): void {
  if (!span.isRecording()) return;
  const error = err instanceof Error ? err : new Error(String(err));
  span.recordException(error);
  span.setAttribute(ERROR_TYPE, errorType ?? (error.name || 'Error'));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message.slice(0, 500) });
}

/**
 * Runs `fn` inside a new active span (a child of the active one, or of `parent`), ending it when `fn`
 * settles; a throw marks it failed (`fail`, failSpan unless given) and is rethrown.
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: Span) => Promise<T>,
  parent: Context = context.active(),
  fail: (span: Span, err: unknown) => void = failSpan,
): Promise<T> {
  return serverTracer().startActiveSpan(name, options, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      fail(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Whether spans record anything at all (tracing on and this trace sampled): skip costly attributes otherwise. */
export function recording(span: Span | undefined = trace.getActiveSpan()): boolean {
  return span?.isRecording() ?? false;
}

/** Sets attributes only when the span records, leaving out undefined values. */
export function setAttributes(
  span: Span,
  attributes: Record<string, string | number | boolean | string[] | undefined>,
): void {
  if (!span.isRecording()) return;
  const defined: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) defined[key] = value;
  span.setAttributes(defined);
}

/** The W3C trace context (`traceparent`, `tracestate`) of `ctx` as headers for an outgoing request; {} when none. */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(ctx, headers);
  return headers;
}

/** The context a carrier (incoming HTTP headers, stdio `_meta`) names, under `base`; `base` when it names none. */
export function contextFrom(carrier: Readonly<Record<string, unknown>>, base: Context = context.active()): Context {
  const strings: Record<string, string> = {};
  for (const key of ['traceparent', 'tracestate']) {
    const value = carrier[key];
    if (typeof value === 'string' && value.length <= 512) strings[key] = value;
  }
  if (!('traceparent' in strings)) return base;
  return propagation.extract(base, strings);
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * A span's context as a W3C `traceparent` string, to store with a record (a task's run, an approval) so
 * that later work, even after a restart, can link to it; undefined for a span that does not record.
 */
export function traceparentOf(span: Span | undefined = trace.getActiveSpan()): string | undefined {
  if (!span?.isRecording()) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
}

/** The span context a stored `traceparent` names; undefined for anything but a valid one. */
export function spanContextOf(traceparent: string | null | undefined): SpanContext | undefined {
  const match = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (!match) return undefined;
  const spanContext: SpanContext = {
    traceId: match[1],
    spanId: match[2],
    traceFlags: Number.parseInt(match[3], 16),
    isRemote: true,
  };
  return trace.isSpanContextValid(spanContext) ? spanContext : undefined;
}

/** A link to the span a stored `traceparent` names, with attributes saying why; undefined when there is none. */
export function linkTo(traceparent: string | null | undefined, attributes?: Attributes): Link | undefined {
  const spanContext = spanContextOf(traceparent);
  return spanContext ? { context: spanContext, attributes } : undefined;
}
