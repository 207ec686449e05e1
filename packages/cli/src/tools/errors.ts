/**
 * How a client tool call fails: a JSON-RPC-style code, a message written for the model and the user,
 * and a stable `data.reason` a program may branch on (never on the message).
 */

/** The codes a client-side call fails with. */
export const CLIENT_TOOL_CODES = {
  /** The call's params are malformed (a field missing, of the wrong type, out of range). */
  INVALID_PARAMS: -32602,
  /** The method is not one this client runs (or the user turned it off). */
  METHOD_NOT_SUPPORTED: -32601,
  /** What the call names does not exist: a file, a terminal. */
  NOT_FOUND: -32001,
  /** Refused: outside the workspace, declined by the user, not allowed by policy, too large. */
  REFUSED: -32003,
  /** Something failed on this machine while doing what was asked (an I/O error, a spawn failure). */
  INTERNAL: -32603,
} as const;

/** Every `data.reason` a client tool error carries. */
export const CLIENT_TOOL_REASONS = [
  'INVALID_PARAMS',
  'METHOD_NOT_SUPPORTED',
  'OUTSIDE_WORKSPACE',
  'SYMLINK_ESCAPES_WORKSPACE',
  'NOT_A_REGULAR_FILE',
  'NOT_A_DIRECTORY',
  'NOT_TEXT',
  'NOT_FOUND',
  'TOO_LARGE',
  'WRITE_DECLINED',
  'COMMAND_DECLINED',
  'COMMAND_NOT_FOUND',
  'READ_DECLINED',
  'ENV_NOT_ALLOWED',
  'SANDBOX_REQUIRED',
  'TOO_MANY_TERMINALS',
  'UNKNOWN_TERMINAL',
  'ABORTED',
  'DISPOSED',
  'IO_ERROR',
] as const;
export type ClientToolReason = (typeof CLIENT_TOOL_REASONS)[number];

/** What a failed call's `error.data` holds: the reason, and details such as the offending field or path. */
export interface ClientToolErrorData {
  reason: ClientToolReason;
  /** The params field at fault (INVALID_PARAMS). */
  field?: string;
  /** The path concerned, as resolved on this machine. */
  path?: string;
  [detail: string]: unknown;
}

/** A failure inside the tools; the runner turns it into a call's error. */
export class ClientToolError extends Error {
  constructor(
    readonly code: number,
    readonly reason: ClientToolReason,
    message: string,
    readonly details: Omit<ClientToolErrorData, 'reason'> = {},
  ) {
    super(message);
    this.name = 'ClientToolError';
  }

  /** The `error` object of a client-response entry. */
  toCallError(): { code: number; message: string; data: ClientToolErrorData } {
    return { code: this.code, message: this.message, data: { reason: this.reason, ...this.details } };
  }
}

export function invalidParams(field: string, problem: string): ClientToolError {
  return new ClientToolError(CLIENT_TOOL_CODES.INVALID_PARAMS, 'INVALID_PARAMS', `params.${field} ${problem}`, {
    field,
  });
}

export function refused(reason: ClientToolReason, message: string, details?: Omit<ClientToolErrorData, 'reason'>) {
  return new ClientToolError(CLIENT_TOOL_CODES.REFUSED, reason, message, details);
}

export function notFound(reason: ClientToolReason, message: string, details?: Omit<ClientToolErrorData, 'reason'>) {
  return new ClientToolError(CLIENT_TOOL_CODES.NOT_FOUND, reason, message, details);
}

/** A Node error's `code` (ENOENT, EACCES, ...), when it has one. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** An unexpected I/O failure, with the system's words. */
export function ioError(what: string, error: unknown, path?: string): ClientToolError {
  const detail = error instanceof Error ? error.message : String(error);
  return new ClientToolError(CLIENT_TOOL_CODES.INTERNAL, 'IO_ERROR', `${what}: ${detail}`, {
    ...(path !== undefined ? { path } : {}),
    ...(errnoOf(error) ? { errno: errnoOf(error) } : {}),
  });
}
