import { Logger as NestPinoLogger, PinoLogger } from 'nestjs-pino';
import type { Logger as Pino } from 'pino';
import type { LogLevel } from './log-levels.js';
import { createPino, type LogSink } from './pino.js';

export { asyncDestination, serverLogDestination, type LogSink } from './pino.js';

/** nestjs-pino's PinoLogger on one pino instance of our own (its default is one root logger per process). */
class InstancePinoLogger extends PinoLogger {
  constructor(private readonly instance: Pino) {
    super({ pinoHttp: { logger: instance, autoLogging: false } });
  }

  override get logger(): Pino {
    return this.instance;
  }
}

/**
 * Nest's LoggerService on pino (nestjs-pino), named after the class that logs (`logger`). The call
 * sites' shapes are kept: a message object's fields, then an Error (`err`) or more fields, the class
 * name last; a string after an error message is its stack.
 */
export class AppLogger extends NestPinoLogger {
  constructor(readonly pino: Pino) {
    super(new InstancePinoLogger(pino), { renameContext: 'logger' });
  }

  static create(level: LogLevel, sink: LogSink): AppLogger {
    return new AppLogger(createPino(level, sink));
  }

  override verbose(message: unknown, ...rest: unknown[]): void {
    super.debug(...shape(message, rest, false));
  }
  override debug(message: unknown, ...rest: unknown[]): void {
    super.debug(...shape(message, rest, false));
  }
  override log(message: unknown, ...rest: unknown[]): void {
    super.log(...shape(message, rest, false));
  }
  override warn(message: unknown, ...rest: unknown[]): void {
    super.warn(...shape(message, rest, false));
  }
  override error(message: unknown, ...rest: unknown[]): void {
    super.error(...shape(message, rest, true));
  }
  override fatal(message: unknown, ...rest: unknown[]): void {
    super.fatal(...shape(message, rest, true));
  }

  /** Writes what the destination still buffers (the process's exit does it too). */
  flush(): void {
    this.pino.flush();
  }
}

function shape(message: unknown, rest: unknown[], isError: boolean): [Record<string, unknown>, ...string[]] {
  const extras = [...rest];
  // Nest passes the logger's context (the class name) last.
  const context = typeof extras.at(-1) === 'string' ? (extras.pop() as string) : undefined;
  const fields: Record<string, unknown> =
    message instanceof Error
      ? { err: message }
      : typeof message === 'object' && message !== null
        ? { ...message }
        : { msg: String(message) };
  for (const extra of extras) {
    if (extra instanceof Error) fields.err = extra;
    else if (typeof extra === 'string' && isError) fields.stack ??= extra;
    else if (typeof extra === 'object' && extra !== null) Object.assign(fields, extra);
  }
  return context === undefined ? [fields] : [fields, context];
}
