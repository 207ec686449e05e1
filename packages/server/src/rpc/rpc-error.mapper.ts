import { randomUUID } from 'node:crypto';
import type { Logger } from '@nestjs/common';
import {
  ContentTypeNotSupportedError,
  ExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequiredError,
  InvalidAgentResponseError,
  PushNotificationNotSupportedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  toJsonRpcError,
  UnsupportedOperationError,
  VersionNotSupportedError,
} from '@a2a-js/sdk/errors';
import { DomainError, type DomainErrorKind, type FieldViolation, ValidationError } from '../common/domain.errors.js';
import { unavailableErrorOf } from '../database/database-retry.js';

import {
  BAD_REQUEST_TYPE,
  ERROR_DOMAIN,
  ERROR_INFO_TYPE,
  RPC_CODES,
  type ErrorInfoDetail,
  type JsonRpcErrorObject,
} from '@cleveragents/contract';
import type { Reason } from '@cleveragents/contract';

// The codes and error details are the wire contract both sides share.
export { BAD_REQUEST_TYPE, ERROR_DOMAIN, ERROR_INFO_TYPE, RPC_CODES, type ErrorInfoDetail, type JsonRpcErrorObject };

export function errorInfo(reason: Reason, metadata: Record<string, string> = {}): ErrorInfoDetail {
  return { '@type': ERROR_INFO_TYPE, reason, domain: ERROR_DOMAIN, metadata };
}

/** A protocol-level error of ours (not a domain exception): parse errors, bad envelopes, limits. */
export function protocolError(
  code: number,
  message: string,
  reason: Reason,
  metadata: Record<string, string> = {},
): JsonRpcErrorObject {
  return { code, message, data: [errorInfo(reason, metadata)] };
}

function codeFor(kind: DomainErrorKind): number {
  switch (kind) {
    case 'operation-not-found':
      return RPC_CODES.METHOD_NOT_FOUND;
    case 'validation':
      return RPC_CODES.INVALID_PARAMS;
    case 'not-found':
      return RPC_CODES.NOT_FOUND;
    case 'authentication':
      return RPC_CODES.AUTHENTICATION_REQUIRED;
    case 'authorization':
      return RPC_CODES.FORBIDDEN;
    case 'business-rule':
      return RPC_CODES.INVALID_STATE;
    case 'duplicate':
      return RPC_CODES.ALREADY_EXISTS;
    case 'budget-exceeded':
      return RPC_CODES.BUDGET_EXCEEDED;
    case 'version-mismatch':
      return RPC_CODES.VERSION_MISMATCH;
    case 'plan':
      return RPC_CODES.PLAN_ERROR;
    case 'rate-limited':
      return RPC_CODES.RATE_LIMITED;
    case 'unavailable':
      return RPC_CODES.UNAVAILABLE;
    default: {
      const unreachable: never = kind;
      throw new Error(`Unmapped domain error kind ${String(unreachable)}`);
    }
  }
}

/**
 * The HTTP status a domain exception is answered with on HTTP (docs/protocol.md §7, §8): 401 for missing or
 * invalid credentials, 403 for a role too low, 429 for the rate limit, 503 for a database away; every other JSON-RPC error is
 * a 200 as A2A's JSON-RPC binding answers it.
 */
export function httpStatusFor(error: DomainError): number {
  switch (error.kind) {
    case 'authentication':
      return 401;
    case 'authorization':
      return 403;
    case 'rate-limited':
      return 429;
    case 'unavailable':
      return 503;
    default:
      return 200;
  }
}

/** A `google.rpc.BadRequest` detail listing the offending fields. */
export function badRequest(violations: readonly FieldViolation[]): {
  '@type': string;
  fieldViolations: FieldViolation[];
} {
  return {
    '@type': BAD_REQUEST_TYPE,
    fieldViolations: violations.map((v) => ({ field: v.field, description: v.description })),
  };
}

/** Maps a domain exception to its JSON-RPC error; the single place that knows the code table. */
export function domainErrorToRpc(error: DomainError): JsonRpcErrorObject {
  const data: unknown[] = [errorInfo(error.reason, error.metadata)];
  if (error instanceof ValidationError) data.push(badRequest(error.violations));
  return { code: codeFor(error.kind), message: error.message, data };
}

/** An unexpected failure: the client gets a correlation id, never the message or stack. */
export function internalError(correlationId: string = randomUUID()): JsonRpcErrorObject {
  return protocolError(RPC_CODES.INTERNAL_ERROR, `Internal error (correlation id ${correlationId})`, 'INTERNAL', {
    correlationId,
  });
}

/**
 * Any error thrown while answering a call, as the JSON-RPC error the client gets: a domain exception
 * by the code table, a database away as -32010 DATABASE_UNAVAILABLE, its storage full, read-only or
 * failing as -32010 STORAGE_UNAVAILABLE, an A2A error of the SDK as the SDK maps it, anything else -32603
 * with a correlation id (logged with its cause, never sent).
 */
export function rpcErrorOf(err: unknown, logger: Logger): JsonRpcErrorObject {
  if (err instanceof DomainError) return domainErrorToRpc(err);
  const unavailable = unavailableErrorOf(err);
  if (unavailable) return domainErrorToRpc(unavailable);
  const sdk = toJsonRpcError(err);
  if (sdk.code !== RPC_CODES.INTERNAL_ERROR) return sdk;
  const error = internalError();
  logger.error({ msg: 'unhandled error', correlationId: correlationOf(error) }, err instanceof Error ? err : undefined);
  return error;
}

/** The HTTP status an error is answered with when it is not the JSON-RPC binding's 200. */
export function rpcHttpStatusOf(err: unknown): number | undefined {
  const domain = err instanceof DomainError ? err : unavailableErrorOf(err);
  const status = domain ? httpStatusFor(domain) : undefined;
  return status === 200 ? undefined : status;
}

/**
 * The ErrorInfo the SDK attaches to each A2A error in v1.0 answers, by code: its v0.3 layer sends the
 * same errors without one, and gets this one added, so that a v0.3 and a v1.0 TaskNotFound say the
 * same (docs/protocol.md §4: domain a2a-protocol.org).
 */
const A2A_ERROR_INFO_BY_CODE: ReadonlyMap<number, unknown> = new Map(
  [
    TaskNotFoundError,
    TaskNotCancelableError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
    ContentTypeNotSupportedError,
    InvalidAgentResponseError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    VersionNotSupportedError,
  ].map((ErrorClass) => {
    const { code, data } = toJsonRpcError(new ErrorClass()) as JsonRpcErrorObject;
    return [code, data![0]];
  }),
);

/** Reasons for the generic JSON-RPC codes the SDK sends without an ErrorInfo. */
const REASON_BY_CODE: Record<number, Reason> = {
  [RPC_CODES.PARSE_ERROR]: 'PARSE_ERROR',
  [RPC_CODES.INVALID_REQUEST]: 'INVALID_REQUEST',
  [RPC_CODES.METHOD_NOT_FOUND]: 'METHOD_NOT_FOUND',
  [RPC_CODES.INVALID_PARAMS]: 'INVALID_PARAMS',
};

/**
 * An error the SDK answered, with an ErrorInfo first in its `data` when it carries none (its v0.3
 * layer and its generic JSON-RPC errors): every error of ours carries one (docs/protocol.md §7).
 */
export function withErrorInfo<E extends { code: number; data?: unknown }>(error: E): E {
  const data = error.data;
  const hasInfo = Array.isArray(data) && data.some((d) => isObject(d) && d['@type'] === ERROR_INFO_TYPE);
  if (hasInfo) return error;
  const extra: unknown[] = data === undefined ? [] : Array.isArray(data) ? data : [data];
  const info = A2A_ERROR_INFO_BY_CODE.get(error.code) ?? errorInfo(REASON_BY_CODE[error.code] ?? 'ERROR');
  return { ...error, data: [info, ...extra] };
}

/** The correlation id an internal error carries ('' for none). */
export function correlationOf(error: JsonRpcErrorObject): string {
  const info = error.data?.[0] as { metadata?: { correlationId?: string } } | undefined;
  return info?.metadata?.correlationId ?? '';
}

/** Whether an error's `data` carries a correlation id, as an internal error of ours does. */
export function hasCorrelation(data: unknown): boolean {
  return (
    Array.isArray(data) &&
    data.some((d: unknown) => isObject(d) && isObject(d.metadata) && 'correlationId' in d.metadata)
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
