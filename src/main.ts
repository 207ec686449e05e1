import 'reflect-metadata';
import { AppConfig, ConfigurationError } from './config/app.config.js';
import { openEmbeddedEarly } from './database/embedded-opening.js';

/** Server mode: HTTP on HOST:PORT. */
async function runHttp(config: AppConfig): Promise<void> {
  const { createHttpApp } = await import('./app.factory.js');
  const app = await createHttpApp(config);
  await app.listen(config.port, config.host);
  process.stdout.write(
    `${JSON.stringify({ time: new Date().toISOString(), level: 'info', msg: 'listening', url: config.publicUrl, a2a: `${config.publicUrl}/a2a` })}\n`,
  );
}

async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = AppConfig.fromEnv(process.env);
  } catch (err) {
    if (err instanceof ConfigurationError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const stdio = process.argv.includes('--stdio');
  // The embedded database starts while the application's modules load (imported below, not above).
  openEmbeddedEarly(config, stdio ? 'CleverAgents server (stdio)' : 'CleverAgents server');
  if (stdio) {
    const { runStdio } = await import('./stdio.js');
    await runStdio(config);
  } else await runHttp(config);
}

main().catch((err: unknown) => {
  process.stderr.write(
    `${JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: 'failed to start', error: err instanceof Error ? err.message : String(err) })}\n`,
  );
  process.exit(1);
});
