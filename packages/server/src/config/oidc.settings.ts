/**
 * OIDC_* settings of JWT verification (docs/protocol.md §8), each bad value a problem naming its variable;
 * the issuer compares as an exact string (docs/design-notes.md#oidc-issuer).
 */
import { EVERY_NAMESPACE, isRole, ROLES, type Role } from '../common/principal.js';
import { NAMESPACE_SLUG_PATTERN } from '../common/namespace-slug.js';

export interface RoleGrant {
  /** A namespace slug (`acme`, `acme/platform`) or `*` for every namespace. */
  readonly namespace: string;
  readonly role: Role;
}

/** Roles-claim value (e.g. an SSO group name) → the grants it confers. */
export type RoleMap = ReadonlyMap<string, readonly RoleGrant[]>;

export interface OidcSettings {
  /** Exactly the IdP's `issuer`; tokens' `iss` must equal it. */
  issuer: string;
  /** A token's `aud` must contain one of these. */
  audiences: string[];
  subjectClaim: string;
  /** Claims tried in order for a display name; the subject is the fallback. */
  displayNameClaims: string[];
  /** Claim name or dotted path, e.g. `groups` or `realm_access.roles`. */
  rolesClaim: string;
  roleMap: RoleMap;
  clockSkewSeconds: number;
  algorithms: string[];
  /** An unknown `kid` refreshes the JWKS at most once per this many seconds. */
  jwksMinRefreshSeconds: number;
  /** Keys older than this are refreshed before use. */
  jwksMaxAgeSeconds: number;
  /** Timeout of each discovery and JWKS request. */
  httpTimeoutMs: number;
  /**
   * The client id the `cleveragents` terminal client signs people in with (a public client: no
   * secret, device grant and authorization code with PKCE); published in the Agent Card's extension
   * params. Absent: the card names none, and `cleveragents login` needs --client-id.
   */
  cliClientId?: string;
  /** The scopes the terminal client asks for. */
  cliScopes: string[];
  /**
   * The public client id the web console signs people in with (authorization code with PKCE, redirect
   * `<PUBLIC_URL>/console/signed-in`); published in the card's `console` params. Absent: the console names none.
   */
  consoleClientId?: string;
  /** The scopes the web console asks for. */
  consoleScopes: string[];
}

/** DI token under which the auth module provides the parsed OidcSettings. */
export const OIDC_SETTINGS = Symbol('OIDC_SETTINGS');

export const OIDC_ENV_VARS = [
  'OIDC_ISSUER_URL',
  'OIDC_AUDIENCE',
  'OIDC_SUBJECT_CLAIM',
  'OIDC_USERNAME_CLAIMS',
  'OIDC_ROLES_CLAIM',
  'OIDC_ROLE_MAP',
  'OIDC_CLOCK_SKEW_SECONDS',
  'OIDC_ALGORITHMS',
  'OIDC_JWKS_MIN_REFRESH_SECONDS',
  'OIDC_JWKS_MAX_AGE_SECONDS',
  'OIDC_HTTP_TIMEOUT_MS',
  'OIDC_CLI_CLIENT_ID',
  'OIDC_CLI_SCOPES',
  'OIDC_CONSOLE_CLIENT_ID',
  'OIDC_CONSOLE_SCOPES',
] as const;
export type OidcEnvVar = (typeof OIDC_ENV_VARS)[number];

/** Asymmetric JWS algorithms tokens may be signed with (EdDSA is not offered). */
export const SUPPORTED_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
] as const;

const CLAIM_NAME = /^[^\s,]+$/;

type Problems = { variable: string; problem: string }[];

function raw(env: Record<string, string | undefined>, name: OidcEnvVar): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function integer(
  env: Record<string, string | undefined>,
  name: OidcEnvVar,
  fallback: number,
  min: number,
  max: number,
  problems: Problems,
): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    problems.push({ variable: name, problem: `must be an integer from ${min} to ${max}` });
    return fallback;
  }
  return Number(value);
}

function parseIssuer(value: string | undefined, problems: Problems): string {
  if (value === undefined) {
    problems.push({ variable: 'OIDC_ISSUER_URL', problem: 'is required when a JWT scheme is configured' });
    return '';
  }
  const url = URL.parse(value);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.search !== '' || url.hash !== '') {
    problems.push({
      variable: 'OIDC_ISSUER_URL',
      problem: "must be an http(s) URL without query or fragment, exactly the IdP discovery document's issuer",
    });
  } else if (url.username !== '' || url.password !== '') {
    problems.push({ variable: 'OIDC_ISSUER_URL', problem: 'must not carry credentials' });
  }
  return value;
}

function parseClaimList(
  env: Record<string, string | undefined>,
  name: OidcEnvVar,
  fallback: string,
  problems: Problems,
) {
  const values = list(raw(env, name) ?? fallback);
  if (values.length === 0 || !values.every((v) => CLAIM_NAME.test(v))) {
    problems.push({ variable: name, problem: 'must be a comma-separated list of claim names' });
  }
  return values;
}

function parseClaimName(
  env: Record<string, string | undefined>,
  name: OidcEnvVar,
  fallback: string,
  problems: Problems,
) {
  const value = raw(env, name) ?? fallback;
  if (!CLAIM_NAME.test(value)) problems.push({ variable: name, problem: 'must be one claim name' });
  return value;
}

function parseRolesClaim(env: Record<string, string | undefined>, problems: Problems): string {
  const value = raw(env, 'OIDC_ROLES_CLAIM') ?? 'groups';
  if (!CLAIM_NAME.test(value) || value.split('.').some((segment) => segment === '')) {
    problems.push({
      variable: 'OIDC_ROLES_CLAIM',
      problem: 'must be a claim name or a dotted path such as "groups" or "realm_access.roles"',
    });
  }
  return value;
}

function parseGrant(entry: unknown): RoleGrant | string {
  if (typeof entry !== 'string') return 'must map to a "namespace:role" string or an array of them';
  const at = entry.lastIndexOf(':');
  const namespace = entry.slice(0, at);
  const role = entry.slice(at + 1);
  if (at <= 0 || (namespace !== EVERY_NAMESPACE && !NAMESPACE_SLUG_PATTERN.test(namespace))) {
    return 'names a namespace that is neither a slug such as "acme" or "acme/platform" nor "*"';
  }
  if (!isRole(role)) return `names a role other than ${ROLES.join(', ')}`;
  return { namespace, role };
}

function parseRoleMap(value: string | undefined, problems: Problems): RoleMap {
  const map = new Map<string, RoleGrant[]>();
  if (value === undefined) return map;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    problems.push({ variable: 'OIDC_ROLE_MAP', problem: 'must be a JSON object' });
    return map;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    problems.push({ variable: 'OIDC_ROLE_MAP', problem: 'must be a JSON object' });
    return map;
  }
  for (const [claimValue, target] of Object.entries(parsed)) {
    const entries: unknown[] = Array.isArray(target) ? target : [target];
    const grants: RoleGrant[] = [];
    for (const entry of entries) {
      const grant = parseGrant(entry);
      if (typeof grant === 'string') {
        problems.push({ variable: 'OIDC_ROLE_MAP', problem: `entry ${JSON.stringify(claimValue)} ${grant}` });
      } else {
        grants.push(grant);
      }
    }
    if (entries.length === 0) {
      problems.push({ variable: 'OIDC_ROLE_MAP', problem: `entry ${JSON.stringify(claimValue)} maps to no role` });
    }
    map.set(claimValue, grants);
  }
  return map;
}

function parseAlgorithms(value: string | undefined, problems: Problems): string[] {
  if (value === undefined) return [...SUPPORTED_ALGORITHMS];
  const algorithms = [...new Set(list(value))];
  const supported = SUPPORTED_ALGORITHMS as readonly string[];
  const refused = algorithms.filter((alg) => alg.toLowerCase() === 'none' || /^HS/i.test(alg));
  const unknown = algorithms.filter((alg) => !refused.includes(alg) && !supported.includes(alg));
  if (algorithms.length === 0) {
    problems.push({ variable: 'OIDC_ALGORITHMS', problem: 'must list at least one algorithm' });
  }
  if (refused.length > 0) {
    problems.push({
      variable: 'OIDC_ALGORITHMS',
      problem: `must not allow "none" or symmetric (HS*) algorithms: refused ${refused.join(', ')}`,
    });
  }
  if (unknown.length > 0) {
    problems.push({
      variable: 'OIDC_ALGORITHMS',
      problem: `lists algorithms the verifier does not support (${unknown.join(', ')}); supported: ${supported.join(', ')}`,
    });
  }
  return algorithms;
}

/** A client id or scope: printable, no whitespace (RFC 6749 §A.1, §A.4). */
const CLIENT_TOKEN = /^[\x21-\x7e]+$/;

/** The scopes a public client asks for unless its setting names others. */
const DEFAULT_CLIENT_SCOPES = ['openid', 'profile', 'offline_access'];

/** A public client's id and scopes (OIDC_CLI_* or OIDC_CONSOLE_*), each bad value a problem naming its variable. */
function parsePublicClient(
  env: Record<string, string | undefined>,
  variables: { clientId: OidcEnvVar; scopes: OidcEnvVar },
  problems: Problems,
): { clientId?: string; scopes: string[] } {
  const clientId = raw(env, variables.clientId);
  if (clientId !== undefined && !CLIENT_TOKEN.test(clientId)) {
    problems.push({ variable: variables.clientId, problem: 'must be one client id (printable, no spaces)' });
  }
  const scopesValue = raw(env, variables.scopes);
  const scopes = scopesValue === undefined ? [...DEFAULT_CLIENT_SCOPES] : scopesValue.split(/[\s,]+/);
  if (!scopes.every((s) => CLIENT_TOKEN.test(s))) {
    problems.push({ variable: variables.scopes, problem: 'must be scopes separated by spaces or commas' });
  }
  return { ...(clientId !== undefined ? { clientId } : {}), scopes: scopes.filter(Boolean) };
}

function parseClients(
  env: Record<string, string | undefined>,
  problems: Problems,
): Pick<OidcSettings, 'cliClientId' | 'cliScopes' | 'consoleClientId' | 'consoleScopes'> {
  const cli = parsePublicClient(env, { clientId: 'OIDC_CLI_CLIENT_ID', scopes: 'OIDC_CLI_SCOPES' }, problems);
  const web = parsePublicClient(env, { clientId: 'OIDC_CONSOLE_CLIENT_ID', scopes: 'OIDC_CONSOLE_SCOPES' }, problems);
  return {
    ...(cli.clientId !== undefined ? { cliClientId: cli.clientId } : {}),
    cliScopes: cli.scopes,
    ...(web.clientId !== undefined ? { consoleClientId: web.clientId } : {}),
    consoleScopes: web.scopes,
  };
}

/**
 * Reads the OIDC_* variables. Returns undefined (and appends to `problems`) when any is invalid.
 */
export function parseOidcSettings(
  env: Record<string, string | undefined>,
  problems: { variable: string; problem: string }[],
): OidcSettings | undefined {
  const before = problems.length;
  const issuer = parseIssuer(raw(env, 'OIDC_ISSUER_URL'), problems);
  const audienceValue = raw(env, 'OIDC_AUDIENCE');
  const audiences = audienceValue === undefined ? [] : list(audienceValue);
  if (audiences.length === 0) {
    problems.push({ variable: 'OIDC_AUDIENCE', problem: 'is required: the audience(s) tokens must be issued for' });
  }
  const settings: OidcSettings = {
    issuer,
    audiences,
    subjectClaim: parseClaimName(env, 'OIDC_SUBJECT_CLAIM', 'sub', problems),
    displayNameClaims: parseClaimList(env, 'OIDC_USERNAME_CLAIMS', 'preferred_username,email,sub', problems),
    rolesClaim: parseRolesClaim(env, problems),
    roleMap: parseRoleMap(raw(env, 'OIDC_ROLE_MAP'), problems),
    clockSkewSeconds: integer(env, 'OIDC_CLOCK_SKEW_SECONDS', 30, 0, 300, problems),
    algorithms: parseAlgorithms(raw(env, 'OIDC_ALGORITHMS'), problems),
    jwksMinRefreshSeconds: integer(env, 'OIDC_JWKS_MIN_REFRESH_SECONDS', 30, 0, 3600, problems),
    jwksMaxAgeSeconds: integer(env, 'OIDC_JWKS_MAX_AGE_SECONDS', 600, 1, 86400, problems),
    httpTimeoutMs: integer(env, 'OIDC_HTTP_TIMEOUT_MS', 5000, 100, 60000, problems),
    ...parseClients(env, problems),
  };
  if (settings.jwksMinRefreshSeconds > settings.jwksMaxAgeSeconds) {
    problems.push({
      variable: 'OIDC_JWKS_MIN_REFRESH_SECONDS',
      problem: 'must not exceed OIDC_JWKS_MAX_AGE_SECONDS (keys would outlive their maximum age)',
    });
  }
  return problems.length === before ? settings : undefined;
}
