/**
 * Domain exceptions (docs/protocol.md §7). Domain code throws these and nothing else; the protocol boundary
 * (src/rpc/rpc-error.mapper.ts) alone turns them into JSON-RPC errors. `kind` is the discriminant
 * the mapper switches on exhaustively. Every `reason` is one of the contract's (src/contract/reasons.ts),
 * so a new reason cannot reach a client without being declared there.
 */
import type { Reason } from '@cleveragents/contract';

export type { Reason };
export type DomainErrorKind =
  | 'operation-not-found'
  | 'validation'
  | 'not-found'
  | 'authentication'
  | 'authorization'
  | 'business-rule'
  | 'duplicate'
  | 'budget-exceeded'
  | 'version-mismatch'
  | 'plan'
  | 'rate-limited'
  | 'unavailable';

export type ErrorMetadata = Record<string, string>;

export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;

  protected constructor(
    message: string,
    readonly reason: Reason,
    readonly metadata: ErrorMetadata = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class A2aOperationNotFoundError extends DomainError {
  readonly kind = 'operation-not-found';
  /** `hint`, when given, follows the name: what to call instead (a method of the other A2A version). */
  constructor(method: string, hint?: string) {
    super(hint ? `Method not found: ${hint}` : `Method not found: ${method}`, 'METHOD_NOT_FOUND', { method });
  }
}

export interface FieldViolation {
  field: string;
  description: string;
}

export class ValidationError extends DomainError {
  readonly kind = 'validation';
  constructor(
    readonly violations: FieldViolation[],
    reason: Reason = 'INVALID_PARAMS',
  ) {
    super(`Invalid params: ${violations.map((v) => `${v.field}: ${v.description}`).join('; ')}`, reason, {
      fields: violations.map((v) => v.field).join(','),
    });
  }
}

export class ResourceNotFoundError extends DomainError {
  readonly kind = 'not-found';
  constructor(message: string, reason: Reason, metadata: ErrorMetadata = {}) {
    super(message, reason, metadata);
  }
}

/** A resumed stream (SubscribeToTask `lastSequence`) whose next events the log no longer holds. */
export class EventsExpiredError extends ResourceNotFoundError {
  constructor(taskId: string, lastSequence: number, oldestSequence: number) {
    super(
      `The events of task ${taskId} after ${lastSequence} are no longer stored (the oldest kept is ` +
        `${oldestSequence}); subscribe without lastSequence to get the task as it stands.`,
      'EVENTS_EXPIRED',
      { taskId, lastSequence: String(lastSequence), oldestSequence: String(oldestSequence) },
    );
  }
}

export class AuthenticationError extends DomainError {
  readonly kind = 'authentication';
  constructor(
    message = 'Authentication required',
    reason: Reason = 'AUTHENTICATION_REQUIRED',
    metadata: ErrorMetadata = {},
  ) {
    super(message, reason, metadata);
  }
}

export class AuthorizationError extends DomainError {
  readonly kind = 'authorization';
  constructor(message = 'Forbidden', reason: Reason = 'FORBIDDEN', metadata: ErrorMetadata = {}) {
    super(message, reason, metadata);
  }
}

export class BusinessRuleViolation extends DomainError {
  readonly kind = 'business-rule';
  constructor(message: string, reason: Reason, metadata: ErrorMetadata = {}) {
    super(message, reason, metadata);
  }
}

export class DuplicateEntityError extends DomainError {
  readonly kind = 'duplicate';
  constructor(message: string, reason: Reason = 'ALREADY_EXISTS', metadata: ErrorMetadata = {}) {
    super(message, reason, metadata);
  }
}

export class BudgetExceededError extends DomainError {
  readonly kind = 'budget-exceeded';
  constructor(message: string, limit: number, used: number, unit: string) {
    super(message, 'BUDGET_EXCEEDED', { limit: String(limit), used: String(used), unit });
  }
}

export class A2aVersionMismatchError extends DomainError {
  readonly kind = 'version-mismatch';
  constructor(message: string, supported: readonly string[], metadata: ErrorMetadata = {}) {
    super(message, 'VERSION_MISMATCH', { ...metadata, supportedVersions: supported.join(',') });
  }
}

export class PlanError extends DomainError {
  readonly kind = 'plan';
  constructor(message: string, reason: Reason = 'PLAN_ERROR', metadata: ErrorMetadata = {}) {
    super(message, reason, metadata);
  }
}

/** Too many calls from one principal (docs/protocol.md §8): HTTP 429 with Retry-After. */
/** A principal already holds as many open streams as it may; ending one frees a slot. */
export class StreamLimitError extends DomainError {
  readonly kind = 'rate-limited';
  constructor(limit: number) {
    super(`Too many open streams: at most ${limit} per principal; close one first`, 'STREAM_LIMIT_EXCEEDED', {
      limit: String(limit),
    });
  }
}

export class RateLimitedError extends DomainError {
  readonly kind = 'rate-limited';
  constructor(
    readonly retryAfterSeconds: number,
    limitPerMinute: number,
  ) {
    super(`Rate limit exceeded: retry after ${retryAfterSeconds} s`, 'RATE_LIMIT_EXCEEDED', {
      retryAfterSeconds: String(retryAfterSeconds),
      limitPerMinute: String(limitPerMinute),
    });
  }
}

/** Its message, also how the boundary knows it again after the SDK's handler kept only the message. */
export const DATABASE_UNAVAILABLE_MESSAGE = 'The database is unavailable; retry the call shortly.';

/** Seconds a client is told to wait before it retries a call the database could not answer. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * The database could not be reached (failover, restart, network) for longer than the server waits for
 * it: the call may succeed when retried (HTTP 503 with Retry-After).
 */
export class DatabaseUnavailableError extends DomainError {
  readonly kind = 'unavailable';
  readonly retryAfterSeconds = DATABASE_RETRY_AFTER_SECONDS;
  constructor(cause?: unknown) {
    super(DATABASE_UNAVAILABLE_MESSAGE, 'DATABASE_UNAVAILABLE', {
      retryable: 'true',
      retryAfterSeconds: String(DATABASE_RETRY_AFTER_SECONDS),
    });
    if (cause !== undefined) this.cause = cause;
  }
}

/** Its message, as DATABASE_UNAVAILABLE_MESSAGE is for DatabaseUnavailableError. */
export const STORAGE_UNAVAILABLE_MESSAGE =
  'The database cannot store data (its storage is full, read-only or failing); retry the call later.';

/**
 * The database's storage cannot take writes: disk full, a read-only or failing file system (SQLSTATE 53100,
 * 58030; ENOSPC, EROFS, EIO). Retryable once an operator has made room (HTTP 503 with Retry-After); what
 * was stored before is untouched. The database's own words stay in the server's log.
 */
export class StorageUnavailableError extends DomainError {
  readonly kind = 'unavailable';
  readonly retryAfterSeconds = DATABASE_RETRY_AFTER_SECONDS;
  constructor(cause?: unknown) {
    super(STORAGE_UNAVAILABLE_MESSAGE, 'STORAGE_UNAVAILABLE', {
      retryable: 'true',
      retryAfterSeconds: String(DATABASE_RETRY_AFTER_SECONDS),
    });
    if (cause !== undefined) this.cause = cause;
  }
}

/**
 * A SubscribeToTask relayed from another replica lost that replica, and no replica took the task over
 * within the wait (two lease periods and more): subscribe again (the task goes on, or has ended).
 */
export class TaskHandoverPendingError extends DomainError {
  readonly kind = 'unavailable';
  constructor(taskId: string, waitedMs: number) {
    super(
      `The replica running task ${taskId} went away and no replica has taken it over yet; subscribe again.`,
      'TASK_HANDOVER_PENDING',
      { retryable: 'true', taskId, waitedMs: String(waitedMs) },
    );
  }
}
