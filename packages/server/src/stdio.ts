import type { AppConfig } from './config/app.config.js';
import { announceServing, createStdioApp, type AppOptions } from './app.factory.js';
import { StdioTransport } from './a2a/stdio.transport.js';

/** Local mode: JSON-RPC on stdin/stdout until stdin ends; every log line goes to stderr. */
export async function runStdio(
  config: AppConfig,
  options: AppOptions & { onServing?: () => void } = {},
): Promise<void> {
  // Anything a dependency prints with console.log would corrupt the protocol stream.
  // eslint-disable-next-line no-console
  console.log = console.error;
  // eslint-disable-next-line no-console
  console.info = console.error;
  const app = await createStdioApp(config, options);
  try {
    await announceServing(app);
    options.onServing?.();
    await app.get(StdioTransport).serve(process.stdin, process.stdout);
  } finally {
    await app.close();
  }
}
