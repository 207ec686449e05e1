import type { LoggerService } from '@nestjs/common';
import { RequestContext } from './request-context.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET_KEY = /(authorization|password|secret|token|api[-_]?key)/i;

export interface LogSink {
  write(line: string): unknown;
}

/** Structured JSON lines; one object per line, request context attached, secret-looking keys redacted. */
export class JsonLogger implements LoggerService {
  constructor(
    private readonly level: LogLevel = 'info',
    private readonly sink: LogSink = process.stdout,
  ) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.emit('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.emit('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.emit('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.emit('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.emit('debug', message, rest);
  }

  private emit(level: LogLevel, message: unknown, rest: unknown[]): void {
    if (RANK[level] < RANK[this.level]) return;
    // Nest passes the logger context (class name) as the last string argument.
    const args = [...rest];
    const context = typeof args[args.length - 1] === 'string' ? (args.pop() as string) : undefined;
    const line: Record<string, unknown> = { time: new Date().toISOString(), level };
    if (context) line.logger = context;
    const call = RequestContext.current();
    if (call) Object.assign(line, call);
    if (message instanceof Error) {
      line.msg = message.message;
      line.err = { name: message.name, stack: message.stack };
    } else if (typeof message === 'object' && message !== null) {
      Object.assign(line, redact(message as Record<string, unknown>));
    } else {
      line.msg = String(message);
    }
    for (const extra of args) {
      if (typeof extra === 'string' && level === 'error' && !line.stack) line.stack = extra;
      else if (extra instanceof Error) line.err = { name: extra.name, message: extra.message, stack: extra.stack };
      else if (typeof extra === 'object' && extra !== null)
        Object.assign(line, redact(extra as Record<string, unknown>));
    }
    this.sink.write(`${JSON.stringify(line)}\n`);
  }
}

function redact(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) out[k] = SECRET_KEY.test(k) ? '[redacted]' : v;
  return out;
}
