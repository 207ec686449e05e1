// Whether this run exports its trace, from `--trace` and the standard OTEL_* variables alone (docs/client.md,
// "Tracing"). Light on purpose: read on every command, while the OpenTelemetry SDK is loaded only when on.
import { CliError, EXIT } from '../exit-codes.js';

export const CAPTURE_CONTENT_VARIABLE = 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT';

/** The exporters the CLI can send to: spans on stdout (`console`) would mix with the command's output. */
const EXPORTERS = new Set(['otlp', 'zipkin', 'none']);
const PROTOCOLS = new Set(['http/protobuf', 'http/json', 'grpc']);
const ENDPOINTS = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] as const;

/** OTEL_SDK_DISABLED=true: nothing is exported, whatever else asks. */
export function telemetryDisabled(env: NodeJS.ProcessEnv): boolean {
  return env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
}

/** The exporters OTEL_TRACES_EXPORTER names, lower case, blanks left out; undefined when unset. */
function namedExporters(env: NodeJS.ProcessEnv): string[] | undefined {
  const raw = env.OTEL_TRACES_EXPORTER;
  if (raw === undefined || raw.trim() === '') return undefined;
  return raw
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
}

/**
 * Whether to export: `--trace`, or OTEL_TRACES_EXPORTER naming an exporter other than none, or (with it
 * unset) an OTLP endpoint; never with OTEL_SDK_DISABLED=true.
 */
export function tracingWanted(flag: boolean, env: NodeJS.ProcessEnv): boolean {
  if (telemetryDisabled(env)) return false;
  if (flag) return true;
  const named = namedExporters(env);
  if (named !== undefined) return named.some((name) => name !== 'none');
  return ENDPOINTS.some((name) => Boolean(env[name]?.trim()));
}

/** Refuses, naming the setting, a value the SDK would only warn about and then export nothing. */
export function checkTraceSettings(env: NodeJS.ProcessEnv): void {
  const bad = (name: string, why: string, hint: string): never => {
    throw new CliError(`${name} ${why}`, EXIT.USAGE, hint);
  };
  for (const name of namedExporters(env) ?? []) {
    if (!EXPORTERS.has(name)) {
      bad(
        'OTEL_TRACES_EXPORTER',
        `names "${name.slice(0, 40)}", which the cleveragents CLI cannot export to`,
        'use otlp (or zipkin, or none); console would write spans into the command output',
      );
    }
  }
  for (const name of ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']) {
    const value = env[name]?.trim().toLowerCase();
    if (value && !PROTOCOLS.has(value)) {
      bad(
        name,
        `is "${value.slice(0, 40)}", not a protocol of OTLP`,
        'use http/protobuf (the default), http/json or grpc',
      );
    }
  }
  for (const name of ENDPOINTS) {
    const value = env[name]?.trim();
    if (value && !/^https?:$/.test(URL.parse(value)?.protocol ?? '')) {
      bad(name, `is not an http(s) URL: "${value.slice(0, 80)}"`, 'e.g. http://localhost:4318');
    }
  }
}

/** Whether spans may record content (paths, command lines, server messages): the GenAI variable says so. */
export function captureContent(env: NodeJS.ProcessEnv): boolean {
  const value = env[CAPTURE_CONTENT_VARIABLE]?.trim().toLowerCase();
  return value === 'true' || value === 'span_only' || value === 'span_and_event';
}

/**
 * What the local server is given besides the user's environment: with `--trace`, an exporter (otlp) when the
 * user's variables name none, so that its spans join the command's trace. Its service name stays its own.
 */
export function localServerTraceEnv(flag: boolean, env: NodeJS.ProcessEnv): Record<string, string> {
  if (!flag || telemetryDisabled(env)) return {};
  const named = namedExporters(env);
  return named !== undefined && named.some((name) => name !== 'none') ? {} : { OTEL_TRACES_EXPORTER: 'otlp' };
}
