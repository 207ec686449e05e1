/**
 * The checks across variables that the schema alone cannot make: the authentication schemes' own
 * settings, the secret keys, and what production refuses. Each returns problems naming the variable.
 */
import { parseSecretKey } from '../common/secret-box.js';
import { parseOidcSettings, type OidcSettings } from './oidc.settings.js';
import { blankToUndefined, OAUTH2_FLOWS, type EnvironmentVariables, type OAuth2FlowName } from './environment.js';

/**
 * The schemes' own settings: `none` stands alone; `oidc` and `oauth2` need the issuer's settings
 * (OIDC_*), which `bearer` uses too when they are given (a JWT or an API key then passes); `oauth2`
 * needs each declared flow's URLs. Returns the OIDC settings when an issuer is configured.
 */
export function authProblems(
  env: EnvironmentVariables,
  source: Record<string, string | undefined>,
  problems: { variable: string; problem: string }[],
): OidcSettings | undefined {
  const schemes = env.CLEVERAGENTS_AUTH_SCHEMES;
  if (schemes.length === 0) {
    problems.push({ variable: 'CLEVERAGENTS_AUTH_SCHEMES', problem: 'at least one scheme is required' });
    return undefined;
  }
  if (schemes.includes('none') && new Set(schemes).size > 1) {
    problems.push({
      variable: 'CLEVERAGENTS_AUTH_SCHEMES',
      problem: '"none" turns authentication off and cannot be combined with other schemes',
    });
  }
  const needsIssuer = schemes.includes('oidc') || schemes.includes('oauth2');
  const issuerGiven = blankToUndefined({ value: source.OIDC_ISSUER_URL }) !== undefined;
  let oidc: OidcSettings | undefined;
  if (needsIssuer || (schemes.includes('bearer') && issuerGiven)) {
    oidc = parseOidcSettings(source, problems);
  } else if (issuerGiven) {
    problems.push({
      variable: 'OIDC_ISSUER_URL',
      problem: 'set, but no scheme that validates tokens (oidc, oauth2 or bearer) is in CLEVERAGENTS_AUTH_SCHEMES',
    });
  }
  if (schemes.includes('oauth2')) {
    if (env.OAUTH2_FLOWS.length === 0) {
      problems.push({
        variable: 'OAUTH2_FLOWS',
        problem: `the oauth2 scheme declares its flows: one or more of ${OAUTH2_FLOWS.join(', ')}`,
      });
    }
    const needs: Record<OAuth2FlowName, (keyof EnvironmentVariables)[]> = {
      authorizationCode: ['OAUTH2_AUTHORIZATION_URL', 'OAUTH2_TOKEN_URL'],
      clientCredentials: ['OAUTH2_TOKEN_URL'],
      deviceCode: ['OAUTH2_DEVICE_AUTHORIZATION_URL', 'OAUTH2_TOKEN_URL'],
    };
    const missing = new Set(env.OAUTH2_FLOWS.flatMap((flow) => needs[flow].filter((name) => env[name] === undefined)));
    for (const variable of missing) {
      const flows = env.OAUTH2_FLOWS.filter((flow) => needs[flow].includes(variable));
      problems.push({ variable, problem: `required by the oauth2 flow(s) ${flows.join(', ')}` });
    }
  }
  return oidc;
}

/** A random 32-byte key has about 28 distinct byte values; fewer than 16 means a pattern (zeros, a word). */
const MIN_DISTINCT_KEY_BYTES = 16;

/** What production refuses unless CLEVERAGENTS_ALLOW_INSECURE: a guessable key, an issuer without TLS. */
export function productionWeaknesses(
  keys: readonly Buffer[],
  oidc: OidcSettings | undefined,
): { variable: string; problem: string }[] {
  const out: { variable: string; problem: string }[] = [];
  const weak = keys.flatMap((key, index) => (new Set(key).size < MIN_DISTINCT_KEY_BYTES ? [index + 1] : []));
  if (weak.length > 0) {
    const which =
      keys.length === 1
        ? 'the value is'
        : `${weak.length === 1 ? 'entry' : 'entries'} ${weak.join(', ')} of ${keys.length} ${weak.length === 1 ? 'is' : 'are'}`;
    out.push({
      variable: 'CLEVERAGENTS_SECRET_KEY',
      problem:
        `${which} not random (too few distinct bytes, e.g. all zeros): with NODE_ENV=production give ` +
        '32 random bytes (`openssl rand -base64 32`), or set CLEVERAGENTS_ALLOW_INSECURE=true in a lab',
    });
  }
  if (oidc && new URL(oidc.issuer).protocol !== 'https:') {
    out.push({
      variable: 'OIDC_ISSUER_URL',
      problem:
        'must be an https URL with NODE_ENV=production: the keys that verify tokens are fetched from it, ' +
        'and over plain http anyone on the path can replace them; set CLEVERAGENTS_ALLOW_INSECURE=true in a lab',
    });
  }
  return out;
}

/** Variables whose value may hold a credential: a problem never quotes them whole. */
const SENSITIVE_VARIABLES = new Set([
  'DATABASE_URL',
  'CLEVERAGENTS_SECRET_KEY',
  'CLEVERAGENTS_LANGGRAPH_API_KEY',
  'CLEVERAGENTS_MODEL_API_KEY',
]);

/** The offending value as a problem quotes it: credentials in a URL masked, secrets not at all. */
export function quoteSafely(variable: string, value: string | undefined): string {
  if (value === undefined || !SENSITIVE_VARIABLES.has(variable)) return JSON.stringify(value);
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^@/]*@)?(.*)$/i.exec(value);
  if (variable === 'DATABASE_URL' && m) return JSON.stringify(`${m[1]}${m[2] ? '***@' : ''}${m[3]}`);
  return '(value withheld)';
}

/** CLEVERAGENTS_SECRET_KEY as keys; a problem (never quoting the value) for an entry that is no key. */
export function parseSecretKeys(
  value: string | undefined,
  problems: { variable: string; problem: string }[],
): Buffer[] {
  if (value === undefined) return [];
  const entries = value.split(',').map((entry) => entry.trim());
  const keys = entries.map((entry) => parseSecretKey(entry));
  const bad = keys.flatMap((key, index) => (key ? [] : [index + 1]));
  if (bad.length > 0) {
    const which =
      entries.length === 1
        ? 'the value is'
        : `${bad.length === 1 ? 'entry' : 'entries'} ${bad.join(', ')} of ${entries.length} ${bad.length === 1 ? 'is' : 'are'}`;
    problems.push({
      variable: 'CLEVERAGENTS_SECRET_KEY',
      problem:
        `${which} not a 32-byte key: ` +
        'give base64 of 32 random bytes (`openssl rand -base64 32`) or 64 hex characters, ' +
        'comma-separated to list older keys after the current one',
    });
    return [];
  }
  return keys as Buffer[];
}
