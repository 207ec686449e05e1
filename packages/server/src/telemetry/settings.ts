// When the server exports telemetry. Only the standard OTEL_* variables configure it, and it is off unless
// one of them asks: unlike the SDK's own default (`otlp`), an unset OTEL_TRACES_EXPORTER exports nothing
// unless an OTLP endpoint is set. docs/operations.md, "Traces".

export type Signal = 'traces' | 'metrics';

/** The exporters a signal's OTEL_*_EXPORTER lists, lower case, `none` and blanks left out. */
function exportersOf(env: NodeJS.ProcessEnv, signal: Signal): string[] | undefined {
  const raw = env[signal === 'traces' ? 'OTEL_TRACES_EXPORTER' : 'OTEL_METRICS_EXPORTER'];
  if (raw === undefined || raw.trim() === '') return undefined;
  return raw
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
}

/** Whether an OTLP endpoint is set for the signal or for every signal. */
function otlpEndpointSet(env: NodeJS.ProcessEnv, signal: Signal): boolean {
  const own = signal === 'traces' ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT';
  return Boolean(env[own]?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

/** Whether OTEL_SDK_DISABLED turns every signal off. */
export function telemetryDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
}

/**
 * The exporters a signal is sent to: those its OTEL_*_EXPORTER names (`none` alone: none), or `otlp` when it
 * names none and an OTLP endpoint is set; [] when the signal is off (the default).
 */
export function exportersFor(signal: Signal, env: NodeJS.ProcessEnv = process.env): string[] {
  if (telemetryDisabled(env)) return [];
  const named = exportersOf(env, signal);
  if (named === undefined) return otlpEndpointSet(env, signal) ? ['otlp'] : [];
  return named.filter((name) => name !== 'none');
}

/** The OTLP protocol for a signal (OTEL_EXPORTER_OTLP_{TRACES,METRICS}_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL). */
export function otlpProtocol(signal: Signal, env: NodeJS.ProcessEnv = process.env): string {
  const own = signal === 'traces' ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL';
  return (env[own] ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim().toLowerCase() || 'http/protobuf';
}
