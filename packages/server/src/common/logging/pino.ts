// The process's pino logger and where it writes, without Nest: main.ts opens it before the application's
// modules load (nestjs-pino, in app.logger.ts, wraps it for Nest).
import { trace } from '@opentelemetry/api';
import { pino, type DestinationStream, type Logger as Pino } from 'pino';
import type { LogLevel } from './log-levels.js';
import { RequestContext } from './request-context.js';

/** Where log lines go: a pino destination in production, any `write(line)` in tests. */
export type LogSink = DestinationStream;

/** Key names whose values never reach a log line (any case the code base writes them in). */
export const SECRET_KEYS = [
  'authorization',
  'Authorization',
  'proxy-authorization',
  'password',
  'secret',
  'clientSecret',
  'client_secret',
  'secretKey',
  'token',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'idToken',
  'id_token',
  'bearerToken',
  'apiKey',
  'apikey',
  'api_key',
  'api-key',
  'x-api-key',
  'X-API-Key',
];
/** How deep below the top a secret is still found (`call.request.headers.authorization` is depth 3). */
const SECRET_DEPTH = 4;

/** fast-redact paths: each secret key at the top level and under up to SECRET_DEPTH levels of objects. */
export const REDACT_PATHS = SECRET_KEYS.flatMap((key) => {
  const leaf = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`;
  return Array.from({ length: SECRET_DEPTH + 1 }, (_, depth) => {
    const prefix = '*.'.repeat(depth);
    return leaf.startsWith('[') ? `${prefix.slice(0, -1)}${leaf}` : `${prefix}${leaf}`;
  });
});

/**
 * The active span's ids (`trace_id`, `span_id`, `trace_flags`, as OpenTelemetry's log data model names them),
 * so that a log line leads to its trace; none while no span is active (tracing off: always none).
 */
function traceFields(): { trace_id?: string; span_id?: string; trace_flags?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!trace.isSpanContextValid(span.spanContext())) return {};
  return { trace_id: traceId, span_id: spanId, trace_flags: traceFlags.toString(16).padStart(2, '0') };
}

/**
 * The process's pino logger: JSON lines with `time` (ISO 8601), `level` (its name), `msg`, the
 * running call's request context on every line, secrets redacted at any depth up to SECRET_DEPTH.
 */
export function createPino(level: LogLevel, sink: LogSink): Pino {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      // A fresh object: pino merges the line's own fields into it.
      mixin: () => ({ ...RequestContext.current(), ...traceFields() }),
    },
    sink,
  );
}

/** An asynchronous destination on a file descriptor; pino flushes it synchronously when the process exits. */
export function asyncDestination(fd: 1 | 2): LogSink {
  return pino.destination({ dest: fd, sync: false });
}

/**
 * Resolves once an asynchronous destination has written what it holds (its `drain`), or after `maxMs`.
 * Call it in the tick of the write it waits for: for a line that must reach the console before
 * something written elsewhere (stderr).
 */
export function written(sink: LogSink, maxMs = 1000): Promise<void> {
  const events = sink as Partial<Pick<NodeJS.EventEmitter, 'once' | 'off'>>;
  if (typeof events.once !== 'function') return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      events.off?.('drain', done);
      resolve();
    };
    const timer = setTimeout(done, maxMs);
    events.once?.('drain', done);
  });
}

/**
 * Where the server logs: stdout, asynchronously, over HTTP. In stdio mode stderr, synchronously: there
 * the client that spawned the server shows the server's last lines when it dies, and an asynchronous
 * write still queued when the process is killed (SIGKILL, the OOM killer) would be lost; one local
 * user's traffic does not need the throughput.
 */
export function serverLogDestination(stdio: boolean): LogSink {
  return stdio ? pino.destination({ dest: 2, sync: true }) : asyncDestination(1);
}
