import type { AuthSchemeName } from '../../config/app.config.js';

/** The realm every challenge names. */
export const AUTH_REALM = 'cleveragents';

/** What went wrong with the credentials, for RFC 6750's `error`/`error_description`. */
export interface ChallengeFailure {
  /** Set when a credential was presented and refused (absent credentials carry no error, per RFC 6750 §3.1). */
  invalid: boolean;
  description?: string;
}

function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&').replace(/[^\x20-\x7e]/g, '')}"`;
}

/**
 * The `WWW-Authenticate` challenges for a 401, one per configured kind of credential: `Bearer` for
 * the JWT and bearer schemes, `ApiKey` (naming the header) for the apiKey scheme.
 */
export function wwwAuthenticate(schemes: readonly AuthSchemeName[], failure: ChallengeFailure): string[] {
  const out: string[] = [];
  const error = failure.invalid
    ? `, error="invalid_token"${failure.description ? `, error_description=${quoted(failure.description)}` : ''}`
    : '';
  if (schemes.some((s) => s === 'oidc' || s === 'oauth2' || s === 'bearer')) {
    out.push(`Bearer realm="${AUTH_REALM}"${error}`);
  }
  if (schemes.includes('apiKey')) out.push(`ApiKey realm="${AUTH_REALM}", header="X-API-Key"`);
  return out;
}
