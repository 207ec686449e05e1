// The LangGraph SDK client's requests as telemetry sees them: each one carries the W3C trace context of the span it
// is made in, and each one the client makes again (its own retries, a stream it re-opens) is counted.
import type { RequestHook } from '@langchain/langgraph-sdk';
import { statusRetryReason, type RetryReason } from '../../metrics/outbound-metrics.js';
import { withTraceContext } from '../../telemetry/outbound.js';

/** Counts one retry of a request to the LangGraph server. */
export type Retried = (reason: RetryReason) => void;

/**
 * The client's fetch (`callerOptions.fetch`), counting its retries: the SDK sends a request again with the very
 * `init` it sent before, so an `init` seen failing is being retried, for the reason it failed.
 */
export function countingRetries(retried: Retried | undefined): typeof fetch {
  if (!retried) return (input, init) => fetch(input, init);
  const failed = new WeakMap<RequestInit, RetryReason>();
  return async (input, init) => {
    if (!init) return await fetch(input, init);
    const before = failed.get(init);
    if (before) retried(before);
    try {
      const response = await fetch(input, init);
      if (response.ok) failed.delete(init);
      else failed.set(init, statusRetryReason(response.status));
      return response;
    } catch (error) {
      failed.set(init, (error as { name?: unknown } | null)?.name === 'TimeoutError' ? 'timeout' : 'network');
      throw error;
    }
  };
}

/** The client's `onRequest` hook: the active trace context on every request, a re-opened stream counted. */
export function tracingRequests(retried: Retried | undefined): RequestHook {
  return (url, init) => {
    if (retried && reopensStream(init)) retried('stream_ended');
    return withTraceContext(url, init) ?? init;
  };
}

/**
 * The SDK re-opening a run's stream where it broke: a GET naming the last event it read. The server's own joins
 * name none, or `-1` (the whole stream again).
 */
function reopensStream(init: RequestInit): boolean {
  if ((init.method ?? 'GET').toUpperCase() !== 'GET' || !init.headers) return false;
  // The SDK hands its headers on as a plain object, names in lower case.
  const lastEventId =
    init.headers instanceof Headers || Array.isArray(init.headers)
      ? new Headers(init.headers).get('last-event-id')
      : init.headers['last-event-id'];
  return typeof lastEventId === 'string' && lastEventId !== '-1';
}
