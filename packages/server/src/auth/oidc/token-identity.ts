/**
 * What a verified JWT bearer token stands for, why a token was refused, and the pure mapping from
 * claims to namespace grants (docs/protocol.md §8). The strategy (jwt-bearer.strategy.ts) produces a
 * TokenIdentity on success and fails with a TokenRejectedError otherwise; the guard turns the
 * rejection's `reason` into an RFC 6750 `error_description` and a log field.
 */
import { strongerRole, type Role } from '../../common/principal.js';
import type { RoleMap } from '../../config/oidc.settings.js';

export interface TokenIdentity {
  /** `oidc:` + the subject claim's value. */
  readonly subject: string;
  readonly displayName: string;
  /** Role per namespace slug or `*`, the strongest mapped role per namespace. */
  readonly grants: Map<string, Role>;
  /** The verified payload, for diagnostics and audit; never logged whole. */
  readonly claims: Record<string, unknown>;
  readonly expiresAt: Date;
}

/** Machine-readable reasons a bearer token was refused; stable, safe to log and to send. */
export const TOKEN_FAILURE_REASONS = [
  'missing_token',
  'malformed_token',
  'algorithm_not_allowed',
  'forbidden_header',
  'unknown_key',
  'keys_unavailable',
  'invalid_signature',
  'invalid_issuer',
  'invalid_audience',
  'token_expired',
  'token_not_yet_valid',
  'missing_exp',
  'missing_subject',
  'invalid_token',
] as const;
export type TokenFailureReason = (typeof TOKEN_FAILURE_REASONS)[number];

/** Human text for RFC 6750 `error_description`; fixed strings, so no token content can leak. */
export const TOKEN_FAILURE_DESCRIPTIONS: Readonly<Record<TokenFailureReason, string>> = {
  missing_token: 'No bearer token was presented',
  malformed_token: 'The bearer token is not a well-formed JWT',
  algorithm_not_allowed: 'The token is signed with an algorithm that is not accepted',
  forbidden_header: 'The token header carries a parameter that is not accepted (jku, jwk, x5u, x5c or crit)',
  unknown_key: "The token's signing key is not among the issuer's published keys",
  keys_unavailable: "The issuer's signing keys could not be loaded",
  invalid_signature: 'The token signature is invalid',
  invalid_issuer: 'The token was issued by another issuer',
  invalid_audience: 'The token is not meant for this server',
  token_expired: 'The token has expired',
  token_not_yet_valid: 'The token is not valid yet',
  missing_exp: 'The token has no expiry (exp)',
  missing_subject: 'The token has no subject claim',
  invalid_token: 'The token is invalid',
};

/** Why a bearer token was refused. Handed to passport's `fail`, so other strategies may still succeed. */
export class TokenRejectedError extends Error {
  constructor(
    readonly reason: TokenFailureReason,
    message: string = TOKEN_FAILURE_DESCRIPTIONS[reason],
  ) {
    super(message);
    this.name = 'TokenRejectedError';
  }

  get description(): string {
    return TOKEN_FAILURE_DESCRIPTIONS[this.reason];
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The claim at `path`: the claim named exactly `path` when there is one (namespaced claims such as
 * `https://acme.example/groups` contain dots), else the dotted path (`realm_access.roles`). Own
 * properties only, so `__proto__` or `constructor` never reach the prototype.
 */
export function claimAt(claims: Record<string, unknown>, path: string): unknown {
  if (Object.hasOwn(claims, path)) return claims[path];
  let at: unknown = claims;
  for (const segment of path.split('.')) {
    if (!isRecord(at) || !Object.hasOwn(at, segment)) return undefined;
    at = at[segment];
  }
  return at;
}

/** The claim's values when it is a string or an array of strings (other entries are ignored). */
function stringValues(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/** Grants conferred by the roles claim through the role map; per namespace the strongest role wins. */
export function grantsFromClaims(
  claims: Record<string, unknown>,
  rolesClaim: string,
  roleMap: RoleMap,
): Map<string, Role> {
  const grants = new Map<string, Role>();
  for (const value of stringValues(claimAt(claims, rolesClaim))) {
    for (const grant of roleMap.get(value) ?? []) {
      grants.set(grant.namespace, strongerRole(grants.get(grant.namespace), grant.role)!);
    }
  }
  return grants;
}

/** The first of `claimNames` holding a non-empty string, else `fallback`. */
export function displayNameFromClaims(
  claims: Record<string, unknown>,
  claimNames: readonly string[],
  fallback: string,
): string {
  for (const name of claimNames) {
    const value = claimAt(claims, name);
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return fallback;
}
