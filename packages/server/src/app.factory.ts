import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { INestApplication, INestApplicationContext } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Clock } from './common/clock.js';
import type { AppConfig } from './config/app.config.js';
import { AppLogger, serverLogDestination, type LogSink } from './common/logging/app.logger.js';
import { AppModule } from './app.module.js';
import { SharedShapeExpressAdapter } from './a2a/express-adapter.js';
import { BootstrapService } from './namespace/bootstrap.service.js';

export interface AppOptions {
  /** Where logs go: stdout for HTTP, stderr for stdio (stdout is the protocol there); see serverLogDestination. */
  logSink?: LogSink;
  /** The clock budgets and waits run by (tests move theirs on); the machine's clock by default. */
  clock?: Clock;
}

/** The HTTP application, not yet listening. Shared by main.ts and the e2e tests. */
export async function createHttpApp(config: AppConfig, options: AppOptions = {}): Promise<INestApplication> {
  const adapter = new SharedShapeExpressAdapter();
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, options.clock), adapter, {
    bodyParser: false,
    logger: AppLogger.create(config.logLevel, options.logSink ?? serverLogDestination(false)),
    abortOnError: false,
  });
  app.disable('x-powered-by');
  // JSON-RPC answers POSTs: a hash of every body would be wasted work. The Agent Card sets its own ETag.
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);
  // Exit 0 after a clean drain (container runtimes and systemd read it), not by the re-raised signal.
  app.enableShutdownHooks([], { useProcessExit: true });
  return app;
}

/**
 * What waits until the application serves (HTTP: listening; stdio: about to read stdin): the bootstrap
 * API key, minted and printed then, so that a start that fails before (the port taken) loses no key.
 */
export async function announceServing(app: INestApplicationContext): Promise<void> {
  await app.get(BootstrapService).announceBootstrapKey();
}

/** The application without HTTP, for local mode over stdio. */
export async function createStdioApp(config: AppConfig, options: AppOptions = {}): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, options.clock), {
    logger: AppLogger.create(config.logLevel, options.logSink ?? serverLogDestination(true)),
    abortOnError: false,
  });
  // SIGTERM is a normal end here too: exit 0 after the drain, as when the client closes stdin.
  app.enableShutdownHooks([], { useProcessExit: true });
  return app;
}
