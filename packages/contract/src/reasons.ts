/**
 * Every `ErrorInfo.reason` the server puts in an error of domain `cleveragents` (ERROR_DOMAIN), and the
 * reasons of domain `a2a-protocol.org` (A2A_ERROR_DOMAIN) its standard A2A methods answer with. A
 * client branches on `code` and `reason`; the server can send no `cleveragents` reason not listed here.
 */
export const REASONS = [
  // Protocol (-32700, -32600, -32601, -32602, -32603)
  /** -32700: the body is not JSON. */
  'PARSE_ERROR',
  /** -32700: the body cannot be read (bad charset, broken encoding); HTTP 400. */
  'UNREADABLE_BODY',
  /** -32600: not a JSON-RPC 2.0 request object. */
  'INVALID_REQUEST',
  /** -32600: a batch (JSON array). */
  'BATCH_NOT_SUPPORTED',
  /** -32600: the body is over the size limit; HTTP 413. */
  'REQUEST_TOO_LARGE',
  /** -32600: JSON nested deeper than the limit. */
  'JSON_TOO_DEEP',
  /** -32600: a `__proto__` or `constructor` key. */
  'FORBIDDEN_KEY',
  /** -32601: no such method. */
  'METHOD_NOT_FOUND',
  /** -32602: params fail validation (a BadRequest lists the fields). */
  'INVALID_PARAMS',
  /** -32602: a `pageToken` this list did not issue. */
  'INVALID_PAGE_TOKEN',
  /** -32602: `sync/pull` with a cursor past the namespace's latest change: pull from 0. */
  'CURSOR_AHEAD',
  /** -32602: a string holds U+0000. */
  'NUL_CHARACTER',
  /** -32602: a string or key holds a lone UTF-16 surrogate. */
  'LONE_SURROGATE',
  /** -32602: an actor's `model.baseUrl` names a host the operator does not admit. */
  'MODEL_ENDPOINT_NOT_ALLOWED',
  /** -32602: an actor's `a2a.url` names a host the operator does not admit. */
  'A2A_AGENT_NOT_ALLOWED',
  /** -32603: an unexpected failure; the metadata carries a correlation id. */
  'INTERNAL',
  /** -32603: last event of an open stream when the server stops; resubscribe. */
  'SERVER_SHUTTING_DOWN',
  /** Any other JSON-RPC error code the A2A SDK answered without an ErrorInfo of its own. */
  'ERROR',

  // Authentication (-32002, HTTP 401)
  /** No credential the configured schemes accept was presented. */
  'AUTHENTICATION_REQUIRED',
  /** An API key that is unknown, wrong, revoked or expired. */
  'INVALID_API_KEY',
  /** The bearer value is not a well-formed JWT. */
  'TOKEN_MALFORMED',
  /** The token's `alg` is not accepted. */
  'TOKEN_ALGORITHM_NOT_ALLOWED',
  /** The token header carries `jku`, `jwk`, `x5u`, `x5c` or `crit`. */
  'TOKEN_FORBIDDEN_HEADER',
  /** No published signing key matches the token. */
  'TOKEN_UNKNOWN_KEY',
  /** The issuer's signing keys could never be loaded. */
  'TOKEN_KEYS_UNAVAILABLE',
  /** The token's signature does not verify. */
  'TOKEN_INVALID_SIGNATURE',
  /** The token's `iss` is not the configured issuer. */
  'TOKEN_INVALID_ISSUER',
  /** The token's `aud` names none of the accepted audiences. */
  'TOKEN_INVALID_AUDIENCE',
  /** The token's `exp` is past. */
  'TOKEN_EXPIRED',
  /** The token's `nbf` is in the future. */
  'TOKEN_NOT_YET_VALID',
  /** The token has no numeric `exp`. */
  'TOKEN_MISSING_EXP',
  /** The token has no subject claim. */
  'TOKEN_MISSING_SUBJECT',
  /** Any other token verification failure. */
  'TOKEN_INVALID',

  // Not found (-32001)
  /** The namespace does not exist, or the caller holds no role in it. */
  'NAMESPACE_NOT_FOUND',
  /** `namespace/members/remove` of a subject that is not a member. */
  'MEMBER_NOT_FOUND',
  /** `auth/apikey/revoke` of an id with no key (in the namespace named), or of a key the caller may not manage. */
  'KEY_NOT_FOUND',
  /** No live registry entry of that kind and name. */
  'REGISTRY_ENTRY_NOT_FOUND',
  /** No session of the caller with that id. */
  'SESSION_NOT_FOUND',
  /** No plan of the caller with that id. */
  'PLAN_NOT_FOUND',
  /** No approval with that id that the caller may see. */
  'APPROVAL_NOT_FOUND',
  /** `approval/webhook/delete` of an id the namespace holds no approval webhook under. */
  'WEBHOOK_NOT_FOUND',
  /** SubscribeToTask `lastSequence`: the events after it are no longer stored (retention); subscribe without it. */
  'EVENTS_EXPIRED',

  // Authorization (-32003, HTTP 403)
  /** Forbidden, without a more precise reason. */
  'FORBIDDEN',
  /** The caller's role in the namespace is lower than the call needs. */
  'ROLE_REQUIRED',
  /** Only an owner may grant, change or remove an owner, or revoke an owner's key. */
  'OWNER_REQUIRED',
  /** An API key with a role stronger than the caller's own. */
  'ROLE_ESCALATION',

  // Invalid state (-32004)
  /** `expectedRevision` is stale. */
  'REVISION_CONFLICT',
  /** `namespace/delete` of a namespace that still holds something. */
  'NAMESPACE_NOT_EMPTY',
  /** `namespace/delete` of the configured default namespace. */
  'DEFAULT_NAMESPACE',
  /** Demoting or removing the last owner of a top-level namespace. */
  'LAST_OWNER',
  /** Revoking a key already revoked. */
  'ALREADY_REVOKED',
  /** A plan or session state change its current state does not allow. */
  'INVALID_TRANSITION',
  /** A message to a closed session. */
  'SESSION_CLOSED',
  /** `session/close` while the session has unfinished tasks. */
  'SESSION_BUSY',
  /** A message to the task of a paused plan: resume the plan first. */
  'PLAN_PAUSED',
  /** An answer to an approval another answer (from any client) settled first, or that ended unanswered. */
  'ALREADY_ANSWERED',
  /** `context/assemble` on a server whose actor calls no model. */
  'NO_MODEL_CONTEXT',
  /** `context/assemble` when the actor's backend cannot run it here; any message on a server without actors. */
  'ACTOR_BACKEND_UNAVAILABLE',

  // Already exists (-32005)
  /** Already exists, without a more precise reason. */
  'ALREADY_EXISTS',
  /** `namespace/create` of an existing slug. */
  'NAMESPACE_EXISTS',
  /** An unrevoked key of the namespace already has that name. */
  'KEY_NAME_TAKEN',
  /** `registry/create` of a kind and name the namespace already holds. */
  'REGISTRY_ENTRY_EXISTS',

  // Rate limit (-32000, HTTP 429)
  /** Too many calls: retry after `retryAfterSeconds`. */
  'RATE_LIMIT_EXCEEDED',
  /** Too many open streams for the principal: end one first. */
  'STREAM_LIMIT_EXCEEDED',

  // Unavailable for a moment (-32010, HTTP 503)
  /** The database could not be reached: retry shortly. */
  'DATABASE_UNAVAILABLE',
  /** The database's storage is full, read-only or failing: retry once an operator has made room. */
  'STORAGE_UNAVAILABLE',
  /** The replica running a relayed task went away and none took it over yet: subscribe again. */
  'TASK_HANDOVER_PENDING',

  // Budgets, versions, plans (-32006, -32007, -32008)
  /** A session's or plan's budget is used up. */
  'BUDGET_EXCEEDED',
  /** The requested A2A or extension version is not served. */
  'VERSION_MISMATCH',
  /** A plan cannot proceed, without a more precise reason. */
  'PLAN_ERROR',
  /** `plan/execute` on a server running the conformance actor, or none: no plan runs there. */
  'NO_ORCHESTRATOR',
  /** `plan/execute` of a plan whose session is closed or gone. */
  'SESSION_NOT_OPEN',
  /** `plan/execute` could not start the plan's task. */
  'PLAN_NOT_STARTED',
  /** `plan/resume` of a plan whose task ended, or could not go on, while paused: the plan failed. */
  'PLAN_FAILED',
] as const;

/** A reason of domain `cleveragents`. */
export type Reason = (typeof REASONS)[number];

/** Whether `value` is a reason of domain `cleveragents`. */
export function isReason(value: unknown): value is Reason {
  return (REASONS as readonly unknown[]).includes(value);
}

/** The reasons of domain `a2a-protocol.org` that standard A2A methods answer with (the A2A SDK's). */
export const A2A_REASONS = [
  /** -32001: no such task, or not the caller's. */
  'TASK_NOT_FOUND',
  /** -32002: the task has ended and cannot be canceled. */
  'TASK_NOT_CANCELABLE',
  /** -32003: push notifications are not supported. */
  'PUSH_NOTIFICATION_NOT_SUPPORTED',
  /** -32004: the operation is not supported. */
  'UNSUPPORTED_OPERATION',
  /** -32005: a content type the agent does not take. */
  'CONTENT_TYPE_NOT_SUPPORTED',
  /** -32006: the agent answered something that is not a valid response. */
  'INVALID_AGENT_RESPONSE',
  /** -32007: no extended Agent Card is configured. */
  'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
  /** -32008: a required extension was not activated. */
  'EXTENSION_SUPPORT_REQUIRED',
  /** -32009: the requested A2A version is not supported. */
  'VERSION_NOT_SUPPORTED',
  /** -32602: invalid params of a standard method. */
  'INVALID_PARAMS',
] as const;

/** A reason of domain `a2a-protocol.org`. */
export type A2aReason = (typeof A2A_REASONS)[number];
