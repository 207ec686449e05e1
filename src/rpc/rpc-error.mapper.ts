import { randomUUID } from 'node:crypto';
import { DomainError, type DomainErrorKind, type FieldViolation, ValidationError } from '../common/domain.errors.js';

import {
  BAD_REQUEST_TYPE,
  ERROR_DOMAIN,
  ERROR_INFO_TYPE,
  RPC_CODES,
  type ErrorInfoDetail,
  type JsonRpcErrorObject,
} from '../contract/errors.js';
import type { Reason } from '../contract/reasons.js';

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
 * The HTTP status a domain exception is answered with on HTTP (SPEC.md §7, §8): 401 for missing or
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
