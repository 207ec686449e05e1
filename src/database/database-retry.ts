import { Logger } from '@nestjs/common';
import { DatabaseUnavailableError } from '../common/domain.errors.js';

/** Node socket errors of a database that is away (restarting, failing over, unreachable for a moment). */
const TRANSIENT_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server going away or not yet taking connections: class 08 (connection exception),
 * 57P01 admin_shutdown (pg_ctl stop/restart -m fast), 57P02 crash_shutdown, 57P03 cannot_connect_now
 * (starting up, or a standby being promoted), 53300 too_many_connections.
 */
const TRANSIENT_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** What node-postgres says when its socket closes under it or it cannot get one in time. */
const TRANSIENT_MESSAGE =
  /^(Connection terminated|Client has encountered a connection error|Client was closed|timeout exceeded when trying to connect)/;

/**
 * Whether `error` says the database could not be reached (so the same statement may succeed in a
 * moment), as opposed to an error about the data or the statement, which retrying would only repeat.
 */
export function isTransientDatabaseError(error: unknown, depth = 0): boolean {
  if (depth > 4 || typeof error !== 'object' || error === null) return false;
  if (error instanceof DatabaseUnavailableError) return true;
  const { code, message, driverError, errors, cause } = error as {
    code?: unknown;
    message?: unknown;
    driverError?: unknown;
    errors?: unknown;
    cause?: unknown;
  };
  if (typeof code === 'string') {
    if (TRANSIENT_ERRNOS.has(code) || TRANSIENT_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
    // Any other SQLSTATE is about the statement or the data.
    if (/^[0-9A-Z]{5}$/.test(code)) return false;
  }
  if (typeof message === 'string' && TRANSIENT_MESSAGE.test(message)) return true;
  // TypeORM wraps the driver's error; Node wraps the errors of each address it tried (IPv4 and IPv6).
  if (driverError && isTransientDatabaseError(driverError, depth + 1)) return true;
  if (Array.isArray(errors) && errors.some((e) => isTransientDatabaseError(e, depth + 1))) return true;
  return cause !== undefined && isTransientDatabaseError(cause, depth + 1);
}

/** The first wait between attempts, doubled after each, up to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 1000;

const logger = new Logger('DatabaseRetry');

/**
 * Runs `attempt` until it succeeds, retrying it while the database is unreachable for at most
 * `budgetMs` in all (back-off 100 ms doubling to 1 s); then throws DatabaseUnavailableError. Any other
 * error is thrown at once. Only for statements that may run twice (upserts, idempotent updates, reads):
 * a statement whose connection broke after it committed runs again.
 */
export async function retryWhileUnavailable<T>(what: string, budgetMs: number, attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + budgetMs;
  let backoff = FIRST_BACKOFF_MS;
  let retries = 0;
  for (;;) {
    try {
      const result = await attempt();
      if (retries > 0) logger.log({ msg: 'database reachable again', what, retries });
      return result;
    } catch (error) {
      if (!isTransientDatabaseError(error) || error instanceof DatabaseUnavailableError) throw error;
      const left = deadline - Date.now();
      if (left <= 0) {
        logger.error({ msg: 'database unreachable for longer than the retry budget', what, budgetMs });
        throw new DatabaseUnavailableError(error);
      }
      if (retries === 0) logger.warn({ msg: 'database unreachable: retrying', what, error: String(error) });
      retries += 1;
      await new Promise((resolve) => setTimeout(resolve, Math.min(backoff, left)));
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}
