/**
 * What the client throws. Every JSON-RPC error an agent answers becomes a `CleverAgentsError` (with the
 * wire's code, ErrorInfo reason and field violations, plus a human hint); failing to reach an agent is an
 * `UnreachableError`; a local server that would not start or died is a `LocalServerError`.
 */
import {
  BAD_REQUEST_TYPE,
  RPC_CODES,
  errorInfoOf,
  fieldViolationsOf,
  EXTENSION_URI,
  type FieldViolationDetail,
} from '@cleveragents/contract';

/** Which credential a request carried: the hint of an authentication failure depends on it. */
export type CredentialKind = 'none' | 'apiKey' | 'bearer' | 'local';

export interface ErrorContext {
  /** The JSON-RPC method that failed. */
  method?: string;
  httpStatus?: number;
  /** Seconds, from a Retry-After header (or the error's metadata). */
  retryAfter?: number;
  credentials?: CredentialKind;
  /** The server's card declares a single sign-on (OpenID Connect or OAuth 2.0): a person signs in there. */
  signIn?: boolean;
  /** What the user can do, when the caller knows better than the code does. */
  hint?: string;
}

/**
 * A JSON-RPC error answered by an agent, as the contract describes it (code + ErrorInfo reason); also a result
 * that does not follow the contract (-32603, its fields as violations: `resultViolation`).
 */
export class CleverAgentsError extends Error {
  readonly code: number;
  /** The ErrorInfo reason (UPPER_SNAKE_CASE), when the error carried one. */
  readonly reason?: string;
  /** The ErrorInfo domain: `cleveragents` or `a2a-protocol.org`. */
  readonly domain?: string;
  /** The ErrorInfo metadata: a key the server did not send reads undefined. */
  readonly metadata: Partial<Record<string, string>>;
  /** The BadRequest field violations of a -32602. */
  readonly fieldViolations: FieldViolationDetail[];
  readonly httpStatus?: number;
  /** Seconds to wait before retrying, when the server said. */
  readonly retryAfter?: number;
  /** What the user can do about it. */
  readonly hint?: string;
  /** Which credential the request carried. */
  readonly credentials: CredentialKind;
  /** The server's card declares a single sign-on: an authentication failure is mended by signing in. */
  readonly signIn: boolean;
  readonly method?: string;
  /** The error's raw `data`. */
  readonly data?: unknown;

  constructor(error: { code: number; message: string; data?: unknown }, context: ErrorContext = {}) {
    super(error.message);
    this.name = 'CleverAgentsError';
    this.code = error.code;
    this.data = error.data;
    const info = errorInfoOf(error);
    this.reason = info?.reason;
    this.domain = info?.domain;
    this.metadata = { ...(info?.metadata ?? {}) };
    this.fieldViolations = fieldViolationsOf(error);
    this.httpStatus = context.httpStatus;
    this.method = context.method;
    const metaRetry = Number(this.metadata.retryAfterSeconds ?? this.metadata.retryAfter);
    this.retryAfter = context.retryAfter ?? (Number.isFinite(metaRetry) && metaRetry > 0 ? metaRetry : undefined);
    this.credentials = context.credentials ?? 'none';
    this.signIn = context.signIn === true;
    this.hint = context.hint ?? hintFor(this, this.credentials);
  }

  /** The message, the field violations and the hint, one per line, as a CLI prints it. */
  describe(): string {
    const lines = [`${this.message} (${this.reason ?? 'code'} ${this.code})`];
    for (const v of this.fieldViolations) lines.push(`  ${v.field}: ${v.description}`);
    if (this.hint) lines.push(`hint: ${this.hint}`);
    return lines.join('\n');
  }
}

function hintFor(err: CleverAgentsError, credentials: CredentialKind): string | undefined {
  const status = err.httpStatus;
  if (err.code === RPC_CODES.AUTHENTICATION_REQUIRED || status === 401) {
    switch (credentials) {
      case 'apiKey':
        return 'the server did not accept the API key (wrong, revoked or expired): check --api-key / CLEVERAGENTS_API_KEY';
      case 'bearer':
        return err.signIn
          ? 'the server did not accept the sign-in (expired, revoked, or made for another server): sign in again with `cleveragents login`'
          : 'the server did not accept the bearer token (wrong or expired): get a new token';
      case 'local':
        return 'this server requires authentication: pass --api-key or set CLEVERAGENTS_API_KEY';
      case 'none':
        return err.signIn
          ? 'this server signs you in with single sign-on: run `cleveragents login` (or pass --api-key)'
          : 'this server requires authentication: pass --api-key or set CLEVERAGENTS_API_KEY';
    }
  }
  if (err.code === RPC_CODES.FORBIDDEN || status === 403) {
    const { requiredRole, heldRole, namespace } = err.metadata;
    if (requiredRole && namespace) {
      return `this needs the ${requiredRole} role in namespace ${namespace}; your credential holds ${heldRole ?? 'none'}`;
    }
    return 'your credential is not allowed to do this: use a key with a higher role';
  }
  if (err.code === RPC_CODES.INVALID_PARAMS && err.fieldViolations.length > 0) {
    return `fix ${err.fieldViolations.map((v) => v.field).join(', ')}`;
  }
  if (err.code === RPC_CODES.RATE_LIMITED || status === 429) {
    return err.retryAfter !== undefined
      ? `rate limited: retry in ${err.retryAfter} s`
      : 'rate limited: wait a little and retry';
  }
  if (err.code === RPC_CODES.UNAVAILABLE || status === 503) {
    return 'the server is unavailable for a moment: retry shortly';
  }
  if (err.code === RPC_CODES.METHOD_NOT_FOUND) {
    return err.method
      ? `the agent does not serve ${err.method}: it may be older than this client, or not a CleverAgents server`
      : 'the agent does not serve this method';
  }
  if (err.code === RPC_CODES.VERSION_MISMATCH) {
    return 'the client and the server speak different versions: upgrade the older one';
  }
  if (err.code === RPC_CODES.NOT_FOUND) {
    return 'it does not exist, or your credential cannot see it';
  }
  return undefined;
}

/**
 * A `_cleveragents/*` result that does not decode with the contract's schema: not handed on. The message names
 * the method and the first offending field; every field is a violation (`result.items[0].createdAt`).
 */
export function resultViolation(
  method: string,
  violations: readonly FieldViolationDetail[],
  context: ErrorContext = {},
): CleverAgentsError {
  const fieldViolations = violations.map((v) => ({ ...v, field: v.field ? `result.${v.field}` : 'result' }));
  const first = fieldViolations.at(0);
  return new CleverAgentsError(
    {
      code: RPC_CODES.INTERNAL_ERROR,
      message: `${method}: the server's result does not follow the contract (${first ? `${first.field}: ${first.description}` : 'result'}); it was not used`,
      data: [{ '@type': BAD_REQUEST_TYPE, fieldViolations }],
    },
    {
      ...context,
      method,
      hint: 'the server speaks another version of the contract than this client, or is not a CleverAgents server: upgrade the older one',
    },
  );
}

/** `call` on an agent whose card does not declare the CleverAgents extension; nothing was sent. */
export class ExtensionNotOfferedError extends Error {
  readonly hint =
    'connect to a CleverAgents server (--server URL or --local) for platform operations; the conversation can still go to this agent';
  constructor(
    readonly method: string,
    readonly agentUrl?: string,
  ) {
    super(
      `this agent does not offer CleverAgents extension methods (its card does not declare ${EXTENSION_URI})` +
        (agentUrl ? `: ${agentUrl}` : '') +
        `; ${method} was not sent`,
    );
    this.name = 'ExtensionNotOfferedError';
  }
}

/**
 * A credential would have gone to another origin (scheme, host, port) than the one it belongs to, the
 * one the user named: through an interface the Agent Card names, a redirect, or a request. Nothing was
 * sent there.
 */
export class CredentialOriginError extends Error {
  /** The origin the refused URL is on. */
  readonly target: string;
  readonly hint: string;
  constructor(
    /** The origin the credentials belong to. */
    readonly origin: string,
    /** The URL they would have gone to. */
    readonly url: string,
    readonly via: 'card' | 'redirect' | 'request',
  ) {
    const target = URL.parse(url)?.origin ?? url;
    const why = `the credentials go only to ${origin}, the origin you named`;
    super(
      via === 'card'
        ? `the Agent Card of ${origin} names its interface at ${url}, on another origin (${target}): ${why}, so nothing was sent there`
        : via === 'redirect'
          ? `${origin} redirected to ${target}, another origin (${url}): ${why}, so the redirect was not followed`
          : `a request to ${url} would carry the credentials to another origin: ${why}, so it was not sent`,
    );
    this.name = 'CredentialOriginError';
    this.target = target;
    this.hint =
      `if you trust ${target}, name it yourself (--server ${target})` +
      (via === 'card' ? "; or have the server's card name the address you use (PUBLIC_URL)" : '');
  }
}

const UNREACHABLE_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found (DNS)',
  EAI_AGAIN: 'DNS lookup failed',
  ETIMEDOUT: 'timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'connection reset',
  UND_ERR_SOCKET: 'connection closed',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
};

/** The system error code under a fetch failure (`TypeError: fetch failed` → cause → code). */
export function networkCodeOf(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) return networkCodeOf(errors[0]);
  }
  return undefined;
}

/** No answer at all from `url`: connection refused, DNS, timeout, TLS. */
export class UnreachableError extends Error {
  readonly code?: string;
  readonly hint: string;
  constructor(
    readonly url: string,
    cause?: unknown,
  ) {
    const code = networkCodeOf(cause);
    const what = (code && UNREACHABLE_CODES[code]) ?? (cause instanceof Error ? cause.message : 'no answer');
    super(`cannot reach ${url}: ${what}${code ? ` (${code})` : ''}`, { cause });
    this.name = 'UnreachableError';
    this.code = code;
    this.hint = 'check the URL and that the server is running (or use --local to run one on this machine)';
  }
}

/** The local server (the stdio subprocess) failed to start, or exited while it was in use. */
export class LocalServerError extends Error {
  readonly hint?: string;
  constructor(
    message: string,
    /** The tail of what the subprocess wrote on stderr (its logs). */
    readonly stderr: string,
    readonly exitCode?: number | null,
    readonly signal?: NodeJS.Signals | null,
  ) {
    super(message);
    this.name = 'LocalServerError';
    if (/in use by process|lock file/i.test(message)) {
      this.hint = 'another cleveragents process uses this data directory: stop it, or pass another data directory';
    }
  }
}

/** A stream dropped and could not be re-joined (within the re-join window). */
export class StreamResumeError extends Error {
  constructor(
    message: string,
    /** The task, when it was named: it may still run at the server. */
    readonly taskId: string | undefined,
    readonly attempts: number,
    cause?: unknown,
  ) {
    super(message, { cause });
    this.name = 'StreamResumeError';
  }
}

/**
 * The server broke the resumable-stream contract (docs/client.md "Streams survive drops"): an event
 * without its sequence number, or one that is not the next (out of order, repeated, not a number).
 * The event was not passed on.
 */
export class StreamProtocolError extends Error {
  constructor(
    message: string,
    readonly taskId: string | undefined,
    /** The sequence number the client expected next, when it knew one. */
    readonly expected: number | undefined,
    /** What the event carried, as it came. */
    readonly received: unknown,
  ) {
    super(message);
    this.name = 'StreamProtocolError';
  }
}

/** A retryable error (ErrorInfo metadata `retryable: "true"`): subscribe to the task again after a back-off. */
export function isRetryable(err: unknown): err is CleverAgentsError {
  return err instanceof CleverAgentsError && err.metadata.retryable === 'true';
}

/** The JSON-RPC error object behind an error thrown by the @a2a-js/sdk client, when there is one. */
function sdkRpcError(err: unknown): { code: number; message: string; data?: unknown } | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (typeof e !== 'object') return undefined;
    const o = e as { envelopeCode?: unknown; data?: unknown; message?: unknown; errorResponse?: unknown };
    if (typeof o.envelopeCode === 'number') {
      const fromEnvelope = (o.errorResponse as { error?: { message?: unknown } } | undefined)?.error?.message;
      return {
        code: o.envelopeCode,
        message: typeof fromEnvelope === 'string' ? fromEnvelope : String(o.message),
        data: o.data,
      };
    }
  }
  return undefined;
}

/** Is this one of the errors this library defines? */
export function isClientError(
  err: unknown,
): err is
  | CleverAgentsError
  | UnreachableError
  | LocalServerError
  | ExtensionNotOfferedError
  | StreamResumeError
  | StreamProtocolError
  | CredentialOriginError {
  return (
    err instanceof CleverAgentsError ||
    err instanceof CredentialOriginError ||
    err instanceof UnreachableError ||
    err instanceof LocalServerError ||
    err instanceof ExtensionNotOfferedError ||
    err instanceof StreamResumeError ||
    err instanceof StreamProtocolError
  );
}

/**
 * Maps whatever an SDK call threw to the client's errors: a JSON-RPC error (the SDK's A2AError
 * subclasses, JsonRpcTransportError, or an SSE error event whose cause is one) becomes a
 * CleverAgentsError; our own errors pass through; anything else is returned as it is.
 */
export function toClientError(err: unknown, context: ErrorContext = {}): Error {
  // Raised below the card (by the transport's fetch): told now that the server signs people in.
  if (err instanceof CleverAgentsError && context.signIn === true && !err.signIn) {
    return new CleverAgentsError(
      { code: err.code, message: err.message, data: err.data },
      {
        method: err.method ?? context.method,
        httpStatus: err.httpStatus,
        retryAfter: err.retryAfter,
        credentials: err.credentials,
        signIn: true,
      },
    );
  }
  if (isClientError(err)) return err;
  const rpc = sdkRpcError(err);
  if (rpc) return new CleverAgentsError(rpc, context);
  return err instanceof Error ? err : new Error(String(err));
}
