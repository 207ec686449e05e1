// The `trace_parent` columns (task runs, approvals): where a record was started in a trace, as a W3C
// traceparent, so that later work (a take-over, a gate's answer), even after a restart, can link to it.
import type { Span } from '@opentelemetry/api';
import { traceparentOf } from './tracing.js';

/** A version-00 W3C traceparent, the only kind stored: 55 characters. */
const STORED_TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The check both tables hold the column to (the migration states the same expression). */
export const TRACE_PARENT_CHECK = `"trace_parent" ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'`;

/** Whether `value` may be stored as a `trace_parent`. */
export function isStorableTraceparent(value: unknown): value is string {
  return typeof value === 'string' && value.length === 55 && STORED_TRACEPARENT.test(value);
}

/**
 * The `trace_parent` to store for a record made now: the active span's (or `span`'s) traceparent, null when
 * nothing records (tracing off, or this trace not sampled), so that nothing is written then.
 */
export function traceParentToStore(span?: Span): string | null {
  const value = span === undefined ? traceparentOf() : traceparentOf(span);
  return isStorableTraceparent(value) ? value : null;
}
