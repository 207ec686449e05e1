import 'reflect-metadata';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppConfig, ConfigurationError } from './config/app.config.js';
import { unknownVariables } from './config/unknown-variables.js';
import { DatabaseUnreachableError } from './database/database.errors.js';
import { openEmbeddedEarly, serverPurpose } from './database/embedded-opening.js';
import { causes } from './common/causes.js';
import { createPino, serverLogDestination, written, type LogSink } from './common/logging/pino.js';
import { startTracing } from './telemetry/start.js';
import { exportersFor, otlpProtocol } from './telemetry/settings.js';

let markServing: () => void = () => {};
/**
 * Settles once the server serves (HTTP: listening; stdio: its application ready to read), never after a
 * failed start: dist/main.js then keeps the code this start compiled for the next (src/common/code-cache.ts).
 */
export const serving = new Promise<void>((resolve) => (markServing = resolve));

/** The process's log destination (stderr in stdio mode: stdout is the protocol's), shared with the application. */
let logSink: LogSink | undefined;
let startupLog: ReturnType<typeof createPino> | undefined;

/** One JSON log line on the application's destination; start-up lines are written whatever LOG_LEVEL says. */
function logLine(level: 'info' | 'warn', fields: Record<string, unknown>): void {
  startupLog?.[level](fields);
}

function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/** Server mode: HTTP on HOST:PORT. */
async function runHttp(config: AppConfig): Promise<void> {
  const { announceServing, createHttpApp } = await import('./app.factory.js');
  const app = await createHttpApp(config, { logSink });
  await app.listen(config.port, config.host);
  const bound = (app.getHttpServer() as Server).address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  const address = `http://${host}:${bound.port}`;
  logLine('info', { msg: 'listening', address, url: config.publicUrl, a2a: `${config.publicUrl}/a2a` });
  if (!isLoopback(bound.address)) {
    logLine('warn', {
      msg:
        `listening on ${address}, plain HTTP on a non-loopback address: terminate TLS in front of the server ` +
        '(load balancer, ingress, reverse proxy); API keys and tokens must not cross a network in clear text',
      address,
    });
  }
  // The key's notice (stderr) after these lines (stdout), on a console too.
  if (logSink) await written(logSink);
  // Only now, listening: a start that failed before this point (the port taken) minted no key to lose.
  await announceServing(app);
  markServing();
}

async function main(): Promise<void> {
  // A misspelt setting is otherwise ignored without a word: named once at start, with the closest one.
  const unknown = unknownVariables(process.env);
  let config: AppConfig;
  try {
    config = AppConfig.fromEnv(process.env);
  } catch (err) {
    if (err instanceof ConfigurationError) {
      const hints = unknown.map((u) => `  (${u.message})\n`).join('');
      process.stderr.write(`${err.message}\n${hints}`);
      process.exit(2);
    }
    throw err;
  }
  const stdio = process.argv.includes('--stdio');
  logSink = serverLogDestination(stdio);
  startupLog = createPino('debug', logSink);
  for (const { message, variable, suggestion } of unknown) {
    logLine('warn', { msg: message, variable, ...(suggestion ? { suggestion } : {}) });
  }
  for (const waiver of config.insecureWaivers) {
    logLine('warn', { msg: `CLEVERAGENTS_ALLOW_INSECURE: accepted in production: ${waiver.problem}`, ...waiver });
  }
  // Over stdio, stdout is the protocol's: the console writes to stderr before anything may print (the SDK's
  // console exporter included).
  if (stdio) (await import('./stdio.js')).consoleToStderr();
  // OpenTelemetry tracing, when the OTEL_* variables ask for it (off by default: nothing is loaded then).
  if (
    await startTracing({ diag: (level, message) => logLine('warn', { msg: `opentelemetry ${level}: ${message}` }) })
  ) {
    const exporters = exportersFor('traces');
    logLine('info', {
      msg: 'tracing on',
      exporters,
      ...(exporters.includes('otlp') ? { protocol: otlpProtocol('traces') } : {}),
    });
  }
  // The embedded database starts while the application's modules load (imported below, not above); dist/main.js
  // has started it already, unless the configuration names another database.
  openEmbeddedEarly(config.database, serverPurpose(stdio));
  if (stdio) {
    const { runStdio } = await import('./stdio.js');
    await runStdio(config, { logSink, onServing: markServing });
  } else await runHttp(config);
}

const LISTEN_FAILURES: Readonly<Record<string, { setting: string; what: string }>> = {
  EADDRINUSE: { setting: 'PORT', what: 'address in use' },
  EACCES: { setting: 'PORT', what: 'permission denied (a port below 1024 needs privileges)' },
  EADDRNOTAVAIL: { setting: 'HOST', what: 'no such address on this machine' },
};

/**
 * For a start that failed on a setting an operator must fix (the database, the port), one plain line
 * naming that setting, for a person reading the console; undefined for other failures.
 */
function humanLine(err: unknown): string | undefined {
  for (const e of causes(err)) {
    if (!(e instanceof Error)) break;
    if (e instanceof DatabaseUnreachableError) {
      return `cleveragents-server: cannot reach the database at ${e.url} (DATABASE_URL): ${e.detail}`;
    }
    const { code, syscall, address, port } = e as NodeJS.ErrnoException & { address?: string; port?: number };
    const failure = syscall === 'listen' && code ? LISTEN_FAILURES[code] : undefined;
    if (failure) {
      const host = address?.includes(':') ? `[${address}]` : address;
      return `cleveragents-server: cannot listen on ${host}:${port} (${failure.setting}): ${failure.what}`;
    }
  }
  return undefined;
}

main().catch((err: unknown) => {
  // The last line, written at once; process.exit then flushes what the log destination still holds.
  createPino('error', { write: (line: string) => process.stderr.write(line) }).error({
    msg: 'failed to start',
    error: err instanceof Error ? err.message : String(err),
  });
  const line = humanLine(err);
  if (line) process.stderr.write(`${line}\n`);
  process.exit(1);
});
