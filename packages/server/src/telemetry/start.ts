// Starts the OpenTelemetry SDK's tracing for this process when the OTEL_* variables ask for it (settings.ts);
// otherwise loads nothing: the SDK is imported only here, and only then. Metrics have their own provider per
// application (src/metrics/), since /metrics is always served.
import { context, diag, DiagLogLevel, propagation, trace, type DiagLogger } from '@opentelemetry/api';
import { SERVER_VERSION } from '../common/server-info.js';
import { exportersFor } from './settings.js';

export const DEFAULT_SERVICE_NAME = 'cleveragents-server';

/** Writes the SDK's own warnings (an exporter that cannot reach its collector) as one line each. */
export type DiagSink = (level: 'warn' | 'error', message: string) => void;

interface Running {
  shutdown(): Promise<void>;
}

let running: Running | undefined;

/** Whether the OTEL_* variables name a resource service name (else the server names itself). */
function serviceNamed(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SERVICE_NAME?.trim()) return true;
  return (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',').some((pair) => pair.trim().startsWith('service.name='));
}

function diagLogger(sink: DiagSink): DiagLogger {
  const line =
    (level: 'warn' | 'error') =>
    (message: string, ...args: unknown[]): void =>
      sink(level, [message, ...args.map((a) => (a instanceof Error ? a.message : String(a)))].join(' ').slice(0, 2000));
  const quiet = (): void => {};
  return { error: line('error'), warn: line('warn'), info: quiet, debug: quiet, verbose: quiet };
}

/**
 * Starts tracing when OTEL_TRACES_EXPORTER or an OTLP endpoint asks for it (docs/operations.md, "Traces"),
 * with the SDK's own reading of every other OTEL_* variable (endpoint, protocol, headers, sampler, resource,
 * batch sizes); resolves to whether it started. Idempotent. `serviceName` is the default `service.name`.
 */
export async function startTracing(
  options: { env?: NodeJS.ProcessEnv; serviceName?: string; diag?: DiagSink } = {},
): Promise<boolean> {
  const env = options.env ?? process.env;
  if (running) return true;
  if (exportersFor('traces', env).length === 0) return false;
  const { startNodeSdk } = await import('@opentelemetry/sdk-node');
  const sdk = startNodeSdk({
    // The SDK's own messages go to the log (below), never to stdout: over stdio that is the protocol's.
    logLevel: 'none',
    resourceAttributes: {
      ...(serviceNamed(env) ? {} : { 'service.name': options.serviceName ?? DEFAULT_SERVICE_NAME }),
      'service.version': SERVER_VERSION,
    },
    // Metrics: each application's own provider (src/metrics/); logs stay JSON lines carrying trace ids.
    metricReaders: [],
    logRecordProcessors: [],
  });
  diag.setLogger(
    diagLogger(options.diag ?? ((level, message) => process.stderr.write(`opentelemetry ${level}: ${message}\n`))),
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  running = sdk;
  return true;
}

/**
 * Exports what is still buffered and stops tracing (the server's shutdown, after its last call). The global
 * providers are released too, so that a test process may start tracing again with other settings.
 */
export async function stopTracing(): Promise<void> {
  const sdk = running;
  if (!sdk) return;
  running = undefined;
  try {
    await sdk.shutdown();
  } finally {
    trace.disable();
    context.disable();
    propagation.disable();
    diag.disable();
  }
}

/** Whether this process exports traces now. */
export function tracingStarted(): boolean {
  return running !== undefined;
}
