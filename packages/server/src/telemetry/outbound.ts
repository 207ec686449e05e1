// Client spans and outgoing W3C trace context for the server's calls to others: LangGraph runs, external A2A
// agents, webhooks (docs/operations.md, "Traces"). A peer is a stranger: what it answers reaches a span only as
// a bounded label (an id, a state, a status code), never its free text; a URL only without user info or query.
import {
  context,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';
import { ERROR_TYPE, SERVER_ADDRESS, SERVER_PORT } from './attributes.js';
import { inSpan, traceHeaders } from './tracing.js';

/** Longest value a peer chose (a run or task id) that an attribute keeps. */
export const MAX_REMOTE_LABEL = 128;

/** A value a peer chose, as an attribute: printable ASCII, at most MAX_REMOTE_LABEL characters; undefined when empty. */
export function remoteLabel(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > MAX_REMOTE_LABEL ? `${printable.slice(0, MAX_REMOTE_LABEL)}…` : printable;
}

/** `server.address` and `server.port` of a URL (the scheme's default port when it names none); {} when invalid. */
export function serverAttributes(url: string | URL): Attributes {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return {};
  }
  const defaultPort = parsed.protocol === 'https:' ? 443 : parsed.protocol === 'http:' ? 80 : undefined;
  const port = parsed.port ? Number(parsed.port) : defaultPort;
  return {
    [SERVER_ADDRESS]: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    ...(port === undefined ? {} : { [SERVER_PORT]: port }),
  };
}

/**
 * A URL's scheme for `url.scheme`. A webhook's URL is not recorded whole (`url.full`): besides user info,
 * query and fragment, its path may be the credential itself (a chat service's incoming-webhook path).
 */
export function spanUrlScheme(url: string | URL): string | undefined {
  try {
    return new URL(url).protocol.replace(/:$/, '');
  } catch {
    return undefined;
  }
}

/**
 * The W3C `traceparent` and `tracestate` of `ctx` for an outgoing request; {} when tracing is off. Never
 * `baggage`: what a caller put there is not a third party's to read.
 */
export function outgoingTraceHeaders(ctx: Context = context.active()): Record<string, string> {
  const { traceparent, tracestate } = traceHeaders(ctx);
  if (!traceparent) return {};
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

/** `init` with the active trace context in its headers (replacing any the caller set); `init` itself when none. */
export function withTraceContext(input: Parameters<typeof fetch>[0], init?: RequestInit): RequestInit | undefined {
  const carried = outgoingTraceHeaders();
  if (!carried.traceparent) return init;
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  for (const [name, value] of Object.entries(carried)) headers.set(name, value);
  return { ...init, headers };
}

/** A fetch whose every request carries the active trace context. */
export function tracingFetch(inner: typeof fetch): typeof fetch {
  return (input, init) => inner(input, withTraceContext(input, init));
}

/**
 * A bounded `error.type` for a thrown value: its class name (AbortError, TimeoutError, TypeError…), or `_OTHER`.
 * Never its message, which may quote the peer.
 */
export function errorTypeOf(error: unknown): string {
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === 'string' && /^[A-Za-z][\w.]{0,63}$/.test(name) ? name : '_OTHER';
}

/** Marks an outbound span failed: `error.type` and status ERROR, with that label as the status message too. */
export function failOutbound(span: Span, errorType: string): void {
  if (!span.isRecording()) return;
  span.setAttribute(ERROR_TYPE, errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
}

export interface ClientSpanOptions {
  /** The span's parent; the active context unless given. */
  parent?: Context;
  links?: Link[];
}

/**
 * Runs `fn` inside a new active CLIENT span, ending it when `fn` settles; a throw marks it failed (with
 * `errorTypeOf`, no message) and is rethrown.
 */
export async function inClientSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  options: ClientSpanOptions = {},
): Promise<T> {
  return inSpan(
    name,
    { kind: SpanKind.CLIENT, attributes, links: options.links },
    fn,
    options.parent ?? context.active(),
    (span, error) => failOutbound(span, errorTypeOf(error)),
  );
}

/**
 * A link to the span active now when it is another than `span`'s: a call made on behalf of one trace's
 * request (a CancelTask) for work that lives in another.
 */
export function causeLinks(span: Span | undefined): Link[] {
  const cause = trace.getActiveSpan()?.spanContext();
  if (!cause || !trace.isSpanContextValid(cause)) return [];
  return cause.spanId === span?.spanContext().spanId ? [] : [{ context: cause }];
}
