/**
 * Errors on the wire: every error is a JSON-RPC 2.0 error object whose `data` holds a
 * `google.rpc.ErrorInfo` with a machine-readable `reason`. Clients branch on `code` and `reason`,
 * never on `message`.
 */

export const ERROR_DOMAIN = 'cleveragents';
/** The domain standard A2A errors carry (the SDK's). */
export const A2A_ERROR_DOMAIN = 'a2a-protocol.org';
export const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
export const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest';

/** The JSON-RPC codes of `_cleveragents/*` methods and of protocol-level failures. */
export const RPC_CODES = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  NOT_FOUND: -32001,
  AUTHENTICATION_REQUIRED: -32002,
  FORBIDDEN: -32003,
  INVALID_STATE: -32004,
  ALREADY_EXISTS: -32005,
  BUDGET_EXCEEDED: -32006,
  VERSION_MISMATCH: -32007,
  PLAN_ERROR: -32008,
  /** JSON-RPC's generic server error; HTTP 429 and the ErrorInfo reason RATE_LIMIT_EXCEEDED say what it is. */
  RATE_LIMITED: -32000,
  /** Unavailable for a moment (database away, task not yet taken over): retry (retryable; HTTP 503). */
  UNAVAILABLE: -32010,
} as const;
export type RpcCode = (typeof RPC_CODES)[keyof typeof RPC_CODES];

export interface ErrorInfoDetail {
  '@type': typeof ERROR_INFO_TYPE;
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

export interface FieldViolationDetail {
  field: string;
  description: string;
}

export interface BadRequestDetail {
  '@type': typeof BAD_REQUEST_TYPE;
  fieldViolations: FieldViolationDetail[];
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown[];
}

/** The ErrorInfo of an error's `data`, when it carries one. */
export function errorInfoOf(error: { data?: unknown }): ErrorInfoDetail | undefined {
  const data = Array.isArray(error.data) ? (error.data as unknown[]) : [];
  return data.find(
    (d): d is ErrorInfoDetail =>
      typeof d === 'object' && d !== null && (d as { '@type'?: unknown })['@type'] === ERROR_INFO_TYPE,
  );
}

/** The field violations of an error's `data`, when it carries a BadRequest. */
export function fieldViolationsOf(error: { data?: unknown }): FieldViolationDetail[] {
  const data = Array.isArray(error.data) ? (error.data as unknown[]) : [];
  const bad = data.find(
    (d): d is BadRequestDetail =>
      typeof d === 'object' && d !== null && (d as { '@type'?: unknown })['@type'] === BAD_REQUEST_TYPE,
  );
  return bad?.fieldViolations ?? [];
}
