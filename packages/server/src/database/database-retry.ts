import { Logger } from '@nestjs/common';
import { trace } from '@opentelemetry/api';
import { DatabaseUnavailableError, StorageUnavailableError } from '../common/domain.errors.js';
import {
  CA_DB_OPERATION,
  CA_DB_RETRY_ATTEMPT,
  CA_DB_RETRY_DELAY_MS,
  CA_DB_RETRY_KIND,
  DB_RETRY_EVENT,
  ERROR_TYPE,
} from '../telemetry/attributes.js';

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
export function isTransientDatabaseError(error: unknown): boolean {
  return someInChain(error, (link) => {
    if (link instanceof DatabaseUnavailableError) return true;
    const { code, message } = link as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (TRANSIENT_ERRNOS.has(code) || TRANSIENT_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
      // Any other SQLSTATE is about the statement or the data.
      if (/^[0-9A-Z]{5}$/.test(code)) return false;
    }
    return typeof message === 'string' && TRANSIENT_MESSAGE.test(message);
  });
}

/**
 * SQLSTATEs of storage that fails: 53100 disk_full, 58030 io_error, and 25006 read_only_sql_transaction
 * (a PostgreSQL that refuses writes: default_transaction_read_only, a standby reached after a failover).
 */
const STORAGE_SQLSTATES = new Set(['53100', '58030', '25006']);

/** Node's errnos for the same (a file the server writes itself, the embedded database's own). */
const STORAGE_ERRNOS = new Set(['ENOSPC', 'EROFS', 'EIO', 'EDQUOT']);

/**
 * PostgreSQL reports a read-only file system as 42501 insufficient_privilege (as for EACCES): what
 * tells it apart is the operating system's text it ends with, e.g. `could not extend file "base/5/16427":
 * Read-only file system`.
 */
const STORAGE_MESSAGE = /: (No space left on device|Read-only file system|Input\/output error|Disk quota exceeded)$/;

/**
 * Whether `error` says the database's storage cannot take writes (disk full, read-only, failing): the
 * statement fails again at once, and succeeds once an operator has made room or mended the disk.
 */
export function isStorageFailure(error: unknown): boolean {
  return someInChain(error, (link) => {
    if (link instanceof StorageUnavailableError) return true;
    const { code, message } = link as { code?: unknown; message?: unknown };
    if (typeof code !== 'string') return false;
    if (STORAGE_SQLSTATES.has(code) || STORAGE_ERRNOS.has(code)) return true;
    return /^[0-9A-Z]{5}$/.test(code) && typeof message === 'string' && STORAGE_MESSAGE.test(message);
  });
}

/**
 * The retryable domain error a database failure is answered with, or undefined for any other error:
 * StorageUnavailableError for storage that fails, DatabaseUnavailableError for a database away. A
 * storage failure is remembered for readiness (lastStorageFailure).
 */
export function unavailableErrorOf(error: unknown): DatabaseUnavailableError | StorageUnavailableError | undefined {
  if (error instanceof DatabaseUnavailableError || error instanceof StorageUnavailableError) return error;
  if (isStorageFailure(error)) {
    noteStorageFailure(error);
    return new StorageUnavailableError(error);
  }
  return isTransientDatabaseError(error) ? new DatabaseUnavailableError(error) : undefined;
}

/**
 * A bounded name for why a statement could not reach the database, for a retry's telemetry: the errno or
 * SQLSTATE that said so (`ECONNREFUSED`, `57P01`, `08006`), `connection_lost` for node-postgres's own
 * words, `unavailable` otherwise. Never the statement, its values or the error's text.
 */
export function transientErrorClass(error: unknown): string {
  let found = 'unavailable';
  someInChain(error, (link) => {
    const { code, message } = link as { code?: unknown; message?: unknown };
    if (
      typeof code === 'string' &&
      (TRANSIENT_ERRNOS.has(code) || TRANSIENT_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))
    ) {
      found = code;
      return true;
    }
    if (typeof message === 'string' && TRANSIENT_MESSAGE.test(message)) {
      found = 'connection_lost';
      return true;
    }
    return false;
  });
  return found;
}

/** One retry of a statement, as its observers are told of it: bounded facts only. */
export interface DatabaseRetry {
  /** A read a caller waits for (`readWhileAvailable`), or a write (`retryWhileUnavailable`). */
  operation: 'read' | 'write';
  /** What the statement does, as its caller names it (a fixed phrase of the code, e.g. "save a task"). */
  what: string;
  /** 1 for the first retry. */
  attempt: number;
  /** transientErrorClass() of the failure. */
  errorClass: string;
  /** The wait before the retry. */
  delayMs: number;
}

export type DatabaseRetryObserver = (retry: DatabaseRetry) => void;

/**
 * Who is told of each retry: the application's metrics (DatabaseRetryMetrics) while it runs. The retries
 * are plain functions called from many stores, so an observer registers here rather than being handed
 * to each call; as `seen` below, this is the process's.
 */
const observers = new Set<DatabaseRetryObserver>();

/** Tells `observer` of every retry from now on; the returned function stops it. */
export function observeDatabaseRetries(observer: DatabaseRetryObserver): () => void {
  observers.add(observer);
  return () => observers.delete(observer);
}

/** A retry recorded: an event on the active span (when one records) and each observer told. */
function noteRetry(retry: DatabaseRetry): void {
  const span = trace.getActiveSpan();
  if (span?.isRecording()) {
    span.addEvent(DB_RETRY_EVENT, {
      [CA_DB_OPERATION]: retry.what,
      [CA_DB_RETRY_ATTEMPT]: retry.attempt,
      [CA_DB_RETRY_DELAY_MS]: retry.delayMs,
      [ERROR_TYPE]: retry.errorClass,
      [CA_DB_RETRY_KIND]: retry.operation,
    });
  }
  for (const observer of observers) {
    try {
      observer(retry);
    } catch {
      // Telemetry never fails a statement.
    }
  }
}

/**
 * Whether `test` holds for `error` or an error it wraps: TypeORM wraps the driver's error (`driverError`),
 * Node the errors of each address it tried (`errors`, IPv4 and IPv6), others their `cause`.
 */
function someInChain(error: unknown, test: (link: object) => boolean, depth = 0): boolean {
  if (depth > 4 || typeof error !== 'object' || error === null) return false;
  if (test(error)) return true;
  const { driverError, errors, cause } = error as { driverError?: unknown; errors?: unknown; cause?: unknown };
  if (driverError && someInChain(driverError, test, depth + 1)) return true;
  if (Array.isArray(errors) && errors.some((e) => someInChain(e, test, depth + 1))) return true;
  return cause !== undefined && someInChain(cause, test, depth + 1);
}

/**
 * What this process last learnt of its database from the statements that went through this file: away
 * since a statement failed to reach it and none succeeded since (reads then try once and do not wait),
 * and when a statement last met storage that fails (/readyz).
 */
const seen = { away: false, storageFailure: undefined as { at: number; detail: string } | undefined };

function noteStorageFailure(error: unknown): void {
  seen.storageFailure = { at: Date.now(), detail: storageDetail(error) };
}

/** When a statement last failed for storage (ms since the epoch) and what the database said, if ever. */
export function lastStorageFailure(): { at: number; detail: string } | undefined {
  return seen.storageFailure;
}

/** The innermost message of a storage failure: the database's own words, without TypeORM's wrapper. */
function storageDetail(error: unknown): string {
  const { driverError } = (error ?? {}) as { driverError?: unknown };
  if (driverError instanceof Error) return driverError.message;
  return error instanceof Error ? error.message : String(error);
}

/** The first wait between attempts, doubled after each, up to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 1000;

const logger = new Logger('DatabaseRetry');

/**
 * Runs `attempt` until it succeeds, retrying it while the database is unreachable for at most
 * `budgetMs` in all (back-off 100 ms doubling to 1 s); then throws DatabaseUnavailableError. Storage that
 * fails (disk full, read-only, I/O error) throws StorageUnavailableError at once; any other error is
 * thrown at once as it is. Only for statements that may run twice (upserts, idempotent updates, reads):
 * a statement whose connection broke after it committed runs again. For the writes of a running turn.
 */
export function retryWhileUnavailable<T>(what: string, budgetMs: number, attempt: () => Promise<T>): Promise<T> {
  return retrying(what, budgetMs, attempt, false);
}

/**
 * A read for a caller who waits for its answer: as retryWhileUnavailable within `budgetMs`
 * (CLEVERAGENTS_DATABASE_READ_RETRY_SECONDS, a couple of seconds: a restart's broken connections), but
 * while the database is known to be away (a statement failed to reach it, none succeeded since) it is
 * tried once, so that the caller is told DATABASE_UNAVAILABLE at once instead of after the write budget.
 */
export function readWhileAvailable<T>(what: string, budgetMs: number, attempt: () => Promise<T>): Promise<T> {
  return retrying(what, seen.away ? 0 : budgetMs, attempt, true);
}

async function retrying<T>(what: string, budgetMs: number, attempt: () => Promise<T>, read: boolean): Promise<T> {
  const deadline = Date.now() + budgetMs;
  let backoff = FIRST_BACKOFF_MS;
  let retries = 0;
  for (;;) {
    try {
      const result = await attempt();
      seen.away = false;
      if (retries > 0) logger.log({ msg: 'database reachable again', what, retries });
      return result;
    } catch (error) {
      if (error instanceof DatabaseUnavailableError || error instanceof StorageUnavailableError) throw error;
      const unavailable = unavailableErrorOf(error);
      if (unavailable === undefined) throw error;
      if (unavailable instanceof StorageUnavailableError) {
        logger.error({ msg: 'the database cannot store data', what, error: String(error) });
        throw unavailable;
      }
      seen.away = true;
      const left = deadline - Date.now();
      if (left <= 0) {
        // A read during an outage is one of many: the write that gives up is what an operator needs to see.
        if (read) logger.warn({ msg: 'database unreachable: read not answered', what, budgetMs });
        else logger.error({ msg: 'database unreachable for longer than the retry budget', what, budgetMs });
        throw unavailable;
      }
      if (retries === 0) logger.warn({ msg: 'database unreachable: retrying', what, error: String(error) });
      retries += 1;
      const delayMs = Math.min(backoff, left);
      noteRetry({
        operation: read ? 'read' : 'write',
        what,
        attempt: retries,
        errorClass: transientErrorClass(error),
        delayMs,
      });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}
