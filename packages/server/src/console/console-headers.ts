import type { AppConfig } from '../config/app.config.js';

/** Content types by extension; anything else is served as bytes (and `nosniff` keeps it so). */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
};

export function contentTypeOf(extension: string): string {
  return CONTENT_TYPES[extension.toLowerCase()] ?? 'application/octet-stream';
}

export type SignInSettings = Pick<AppConfig, 'authSchemes' | 'oidc' | 'oauth2'>;

/**
 * The origins besides our own that the console's scripts call to sign people in (discovery, token,
 * revocation): the issuer's, and OAUTH2_TOKEN_URL's when set. Endpoints that only discovery would name
 * are not known here without a request to the issuer; providers serve them on the issuer's origin.
 */
export function signInOrigins(settings: SignInSettings): string[] {
  const oidc = settings.oidc;
  if (!oidc || !settings.authSchemes.some((scheme) => scheme === 'oidc' || scheme === 'oauth2')) return [];
  const origins = [oidc.issuer, settings.oauth2?.tokenUrl]
    .map((url) => (url === undefined ? undefined : URL.parse(url)?.origin))
    .filter((origin): origin is string => origin !== undefined && origin !== 'null');
  return [...new Set(origins)];
}

/** Scripts, styles and calls from our own origin only (and the sign-in's); never framed, no plugins. */
export function contentSecurityPolicy(settings: SignInSettings): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    ["connect-src 'self'", ...signInOrigins(settings)].join(' '),
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

/** The headers every console answer carries, whatever its status (docs/security.md, "The web console"). */
export function consoleHeaders(settings: SignInSettings): Readonly<Record<string, string>> {
  return {
    'Content-Security-Policy': contentSecurityPolicy(settings),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'X-Frame-Options': 'DENY',
  };
}
