import { Console } from 'node:console';
import type { AppConfig } from './config/app.config.js';
import { announceServing, createStdioApp, type AppOptions } from './app.factory.js';
import { StdioTransport } from './a2a/stdio.transport.js';

/**
 * Anything a dependency prints with the console (console.log, console.dir: OpenTelemetry's console
 * exporters) would corrupt the protocol stream on stdout: every console method writes to stderr instead.
 * Called before anything that may print starts (server.ts, before tracing).
 */
export function consoleToStderr(): void {
  globalThis.console = new Console({ stdout: process.stderr, stderr: process.stderr });
}

/** Local mode: JSON-RPC on stdin/stdout until stdin ends; every log line goes to stderr. */
export async function runStdio(
  config: AppConfig,
  options: AppOptions & { onServing?: () => void } = {},
): Promise<void> {
  consoleToStderr();
  const app = await createStdioApp(config, options);
  try {
    await announceServing(app);
    options.onServing?.();
    await app.get(StdioTransport).serve(process.stdin, process.stdout);
  } finally {
    await app.close();
  }
}
