import { describe, expect, it } from '@jest/globals';
import { AppConfig } from '../config/app.config.js';
import { contentSecurityPolicy, contentTypeOf, signInOrigins } from './console-headers.js';

const issuer = 'https://sso.acme.example/realms/acme';

describe('the console’s Content-Security-Policy', () => {
  it('allows calls to this origin alone without single sign-on', () => {
    expect(contentSecurityPolicy(AppConfig.fromEnv({}))).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
        "connect-src 'self'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
    );
  });

  it("adds the issuer's origin for oidc, and a token endpoint on another origin for oauth2, each once", () => {
    expect(
      signInOrigins(
        AppConfig.fromEnv({ CLEVERAGENTS_AUTH_SCHEMES: 'oidc', OIDC_ISSUER_URL: issuer, OIDC_AUDIENCE: 'a' }),
      ),
    ).toEqual(['https://sso.acme.example']);
    const oauth2 = AppConfig.fromEnv({
      CLEVERAGENTS_AUTH_SCHEMES: 'oauth2',
      OAUTH2_FLOWS: 'authorizationCode',
      OAUTH2_AUTHORIZATION_URL: 'https://login.acme.example/authorize',
      OAUTH2_TOKEN_URL: 'https://tokens.acme.example:8443/token',
      OIDC_ISSUER_URL: issuer,
      OIDC_AUDIENCE: 'a',
    });
    expect(contentSecurityPolicy(oauth2)).toContain(
      "connect-src 'self' https://sso.acme.example https://tokens.acme.example:8443; ",
    );
    const sameOrigin = AppConfig.fromEnv({
      CLEVERAGENTS_AUTH_SCHEMES: 'oauth2',
      OAUTH2_FLOWS: 'authorizationCode',
      OAUTH2_AUTHORIZATION_URL: `${issuer}/protocol/openid-connect/auth`,
      OAUTH2_TOKEN_URL: `${issuer}/protocol/openid-connect/token`,
      OIDC_ISSUER_URL: issuer,
      OIDC_AUDIENCE: 'a',
    });
    expect(signInOrigins(sameOrigin)).toEqual(['https://sso.acme.example']);
  });

  it('adds no issuer when only bearer takes its JWTs: the console signs in through oidc or oauth2', () => {
    const bearer = AppConfig.fromEnv({
      CLEVERAGENTS_AUTH_SCHEMES: 'bearer',
      OIDC_ISSUER_URL: issuer,
      OIDC_AUDIENCE: 'a',
    });
    expect(bearer.oidc).toBeDefined();
    expect(signInOrigins(bearer)).toEqual([]);
  });
});

describe('content types', () => {
  it.each([
    ['.js', 'text/javascript; charset=utf-8'],
    ['.CSS', 'text/css; charset=utf-8'],
    ['.html', 'text/html; charset=utf-8'],
    ['.json', 'application/json; charset=utf-8'],
    ['.svg', 'image/svg+xml'],
    ['.png', 'image/png'],
    ['.ico', 'image/x-icon'],
    ['.woff2', 'font/woff2'],
    ['.exe', 'application/octet-stream'],
  ])('%s is %s', (extension, type) => {
    expect(contentTypeOf(extension)).toBe(type);
  });
});
