// The command's trace, exported: loaded (with the OpenTelemetry SDK under it) only when settings.ts says a run
// exports. The SDK starts from the OTEL_* variables (endpoint, protocol, headers, sampler, resource); its own
// messages never reach stdout, and the first of its warnings reaches stderr as one short line.
import {
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  diag,
  trace,
  type DiagLogger,
  type Span,
} from '@opentelemetry/api';
import { checkTraceSettings } from './settings.js';

export const DEFAULT_SERVICE_NAME = 'cleveragents';
export const TRACER_NAME = 'cleveragents';
/** Longest wait for the last spans to leave at exit (an unreachable collector costs no more). */
const FLUSH_MS = 5_000;
/** The exporter's own time limit per request, unless an OTEL_EXPORTER_OTLP_*TIMEOUT says otherwise. */
const EXPORT_TIMEOUT_MS = '3000';

export interface CommandTraceOptions {
  /** The command's words (`send`, `tasks list`): never its arguments. */
  command: string;
  mode: 'local' | 'server' | 'agent';
  /** `--trace` was given: its trace id is printed at the end, and it exports even if the variables say none. */
  flag: boolean;
  version: string;
  env: NodeJS.ProcessEnv;
  stderr: Pick<NodeJS.WriteStream, 'write'>;
}

export interface CommandTrace {
  /** Runs the command inside its root span (the context its requests and tool calls take as parent). */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** Ends the root span with the exit code and exports what is left (bounded); idempotent. */
  finish(exitCode: number): Promise<void>;
}

/** The first line of the SDK's first warning or error (an export that failed), once. */
function onceLogger(stderr: CommandTraceOptions['stderr']): DiagLogger {
  let said = false;
  const say = (message: string, ...args: unknown[]): void => {
    if (said) return;
    said = true;
    const detail = args.map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : '')).join(' ');
    const text = `${message} ${detail}`.replace(/\s+/g, ' ').trim().slice(0, 200);
    stderr.write(`cleveragents: trace export: ${text}\n`);
  };
  const quiet = (): void => {};
  return { error: say, warn: say, info: quiet, debug: quiet, verbose: quiet };
}

/** Whether the OTEL_* variables name the service (else the CLI names itself). */
function serviceNamed(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SERVICE_NAME?.trim()) return true;
  return (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',').some((pair) => pair.trim().startsWith('service.name='));
}

/** Runs `work` with `overrides` in process.env (the SDK reads its settings from there), then puts it back. */
function withEnv<T>(overrides: Record<string, string>, work: () => T): T {
  const before = Object.fromEntries(Object.keys(overrides).map((name) => [name, process.env[name]]));
  Object.assign(process.env, overrides);
  try {
    return work();
  } finally {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** What the SDK is started with beside the user's variables. */
function sdkOverrides(options: CommandTraceOptions): Record<string, string> {
  const env = options.env;
  const overrides: Record<string, string> = {};
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((n) => n.trim().toLowerCase());
  const noExporter = exporters.every((name) => name === '' || name === 'none');
  if (options.flag && noExporter) overrides.OTEL_TRACES_EXPORTER = 'otlp';
  if (!env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT && !env.OTEL_EXPORTER_OTLP_TIMEOUT) {
    overrides.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT = EXPORT_TIMEOUT_MS;
  }
  return overrides;
}

/** Starts the SDK and the command's root span `cleveragents <command>`. Throws a CliError on a bad setting. */
export async function startCommandTrace(options: CommandTraceOptions): Promise<CommandTrace> {
  checkTraceSettings(options.env);
  const { startNodeSdk } = await import('@opentelemetry/sdk-node');
  const sdk = withEnv(sdkOverrides(options), () =>
    startNodeSdk({
      logLevel: 'none',
      // No detectors: the process detector would record the command line, API keys and prompts with it.
      resourceDetectors: [],
      resourceAttributes: {
        ...(options.env.OTEL_SERVICE_NAME?.trim()
          ? { 'service.name': options.env.OTEL_SERVICE_NAME.trim() }
          : serviceNamed(options.env)
            ? {}
            : { 'service.name': DEFAULT_SERVICE_NAME }),
        'service.version': options.version,
      },
      metricReaders: [],
      logRecordProcessors: [],
    }),
  );
  diag.setLogger(onceLogger(options.stderr), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  const root: Span = trace.getTracer(TRACER_NAME, options.version).startSpan(
    `cleveragents ${options.command}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: { 'cleveragents.command': options.command, 'cleveragents.mode': options.mode },
    },
    ROOT_CONTEXT,
  );
  let finished: Promise<void> | undefined;
  const finish = (exitCode: number): Promise<void> =>
    (finished ??= (async () => {
      process.off('SIGINT', onSigint);
      root.setAttribute('process.exit.code', exitCode);
      if (exitCode !== 0) root.setStatus({ code: SpanStatusCode.ERROR, message: `exit code ${exitCode}` });
      root.end();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        sdk.shutdown().catch(() => undefined),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_MS).unref())),
      ]);
      clearTimeout(timer);
      if (options.flag) options.stderr.write(`trace ${root.spanContext().traceId}\n`);
    })());
  // Ctrl-C where the command does not handle it (the default would end the process at once): the trace is
  // exported first, then the process ends by the signal as it would have.
  const onSigint = (): void => {
    if (process.listenerCount('SIGINT') > 1) return;
    void finish(130).finally(() => process.kill(process.pid, 'SIGINT'));
  };
  process.on('SIGINT', onSigint);
  return {
    run: (work) =>
      context.with(trace.setSpan(ROOT_CONTEXT, root), async () => {
        try {
          return await work();
        } catch (err) {
          root.setAttribute('error.type', err instanceof Error ? err.name : 'Error');
          throw err;
        }
      }),
    finish,
  };
}
