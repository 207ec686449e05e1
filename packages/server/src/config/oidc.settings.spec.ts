import { describe, expect, it } from '@jest/globals';
import { OIDC_ENV_VARS, parseOidcSettings, SUPPORTED_ALGORITHMS, type OidcSettings } from './oidc.settings.js';

const required = { OIDC_ISSUER_URL: 'https://sso.example.com/realms/acme', OIDC_AUDIENCE: 'cleveragents' };

function parse(env: Record<string, string | undefined>): {
  settings: OidcSettings | undefined;
  problems: { variable: string; problem: string }[];
} {
  const problems: { variable: string; problem: string }[] = [];
  return { settings: parseOidcSettings(env, problems), problems };
}

describe('parseOidcSettings', () => {
  it('applies the defaults when only the issuer and audience are set', () => {
    const { settings, problems } = parse(required);
    expect(problems).toEqual([]);
    expect(settings).toEqual({
      issuer: 'https://sso.example.com/realms/acme',
      audiences: ['cleveragents'],
      subjectClaim: 'sub',
      displayNameClaims: ['preferred_username', 'email', 'sub'],
      rolesClaim: 'groups',
      roleMap: new Map(),
      clockSkewSeconds: 30,
      algorithms: [...SUPPORTED_ALGORITHMS],
      jwksMinRefreshSeconds: 30,
      jwksMaxAgeSeconds: 600,
      httpTimeoutMs: 5000,
      cliScopes: ['openid', 'profile', 'offline_access'],
      consoleScopes: ['openid', 'profile', 'offline_access'],
    });
    expect(settings!.algorithms).not.toContain('none');
    expect(settings!.algorithms.some((a) => a.startsWith('HS'))).toBe(false);
  });

  it('reads every variable', () => {
    const { settings, problems } = parse({
      OIDC_ISSUER_URL: 'https://tenant.auth0.example/',
      OIDC_AUDIENCE: ' https://api.example.com , cleveragents ',
      OIDC_SUBJECT_CLAIM: 'oid',
      OIDC_USERNAME_CLAIMS: 'name,upn',
      OIDC_ROLES_CLAIM: 'realm_access.roles',
      OIDC_ROLE_MAP: JSON.stringify({
        'acme-admins': 'acme:admin',
        'platform-team': ['acme/platform:owner', 'acme:viewer'],
        'sre:oncall': '*:viewer',
      }),
      OIDC_CLOCK_SKEW_SECONDS: '0',
      OIDC_ALGORITHMS: 'RS256,ES256',
      OIDC_JWKS_MIN_REFRESH_SECONDS: '5',
      OIDC_JWKS_MAX_AGE_SECONDS: '3600',
      OIDC_HTTP_TIMEOUT_MS: '2500',
    });
    expect(problems).toEqual([]);
    // No trailing-slash normalisation: the issuer is kept exactly as configured.
    expect(settings!.issuer).toBe('https://tenant.auth0.example/');
    expect(settings!.audiences).toEqual(['https://api.example.com', 'cleveragents']);
    expect(settings!.subjectClaim).toBe('oid');
    expect(settings!.displayNameClaims).toEqual(['name', 'upn']);
    expect(settings!.rolesClaim).toBe('realm_access.roles');
    expect([...settings!.roleMap]).toEqual([
      ['acme-admins', [{ namespace: 'acme', role: 'admin' }]],
      [
        'platform-team',
        [
          { namespace: 'acme/platform', role: 'owner' },
          { namespace: 'acme', role: 'viewer' },
        ],
      ],
      ['sre:oncall', [{ namespace: '*', role: 'viewer' }]],
    ]);
    expect(settings!.clockSkewSeconds).toBe(0);
    expect(settings!.algorithms).toEqual(['RS256', 'ES256']);
    expect(settings!.jwksMinRefreshSeconds).toBe(5);
    expect(settings!.jwksMaxAgeSeconds).toBe(3600);
    expect(settings!.httpTimeoutMs).toBe(2500);
  });

  it("reads the terminal client's id and scopes (spaces or commas), and names a bad one", () => {
    const { settings, problems } = parse({
      ...required,
      OIDC_CLI_CLIENT_ID: 'cleveragents-cli',
      OIDC_CLI_SCOPES: 'openid, offline_access api://agents/use',
    });
    expect(problems).toEqual([]);
    expect(settings!.cliClientId).toBe('cleveragents-cli');
    expect(settings!.cliScopes).toEqual(['openid', 'offline_access', 'api://agents/use']);
    const bad = parse({ ...required, OIDC_CLI_CLIENT_ID: 'two words', OIDC_CLI_SCOPES: 'openid café' });
    expect(bad.settings).toBeUndefined();
    expect(bad.problems.map((p) => p.variable)).toEqual(['OIDC_CLI_CLIENT_ID', 'OIDC_CLI_SCOPES']);
  });

  it("reads the web console's id and scopes, the CLI's defaults otherwise, and names a bad one", () => {
    const unset = parse(required);
    expect(unset.settings!.consoleClientId).toBeUndefined();
    expect(unset.settings!.consoleScopes).toEqual(['openid', 'profile', 'offline_access']);
    const { settings, problems } = parse({
      ...required,
      OIDC_CONSOLE_CLIENT_ID: 'cleveragents-console',
      OIDC_CONSOLE_SCOPES: 'openid,agents',
    });
    expect(problems).toEqual([]);
    expect([settings!.consoleClientId, settings!.consoleScopes]).toEqual([
      'cleveragents-console',
      ['openid', 'agents'],
    ]);
    expect(settings!.cliClientId).toBeUndefined();
    const bad = parse({ ...required, OIDC_CONSOLE_CLIENT_ID: 'two words', OIDC_CONSOLE_SCOPES: 'openid café' });
    expect(bad.settings).toBeUndefined();
    expect(bad.problems.map((p) => p.variable)).toEqual(['OIDC_CONSOLE_CLIENT_ID', 'OIDC_CONSOLE_SCOPES']);
  });

  it('treats blank optional variables as unset', () => {
    const { settings, problems } = parse({ ...required, OIDC_ROLE_MAP: ' ', OIDC_CLOCK_SKEW_SECONDS: '' });
    expect(problems).toEqual([]);
    expect(settings!.clockSkewSeconds).toBe(30);
  });

  it('requires the issuer and the audience', () => {
    const { settings, problems } = parse({ OIDC_AUDIENCE: ' , ' });
    expect(settings).toBeUndefined();
    expect(problems.map((p) => p.variable)).toEqual(['OIDC_ISSUER_URL', 'OIDC_AUDIENCE']);
  });

  describe('names each bad variable', () => {
    it.each([
      ['OIDC_ISSUER_URL', 'sso.example.com'],
      ['OIDC_ISSUER_URL', 'ftp://sso.example.com'],
      ['OIDC_ISSUER_URL', 'https://sso.example.com/?tenant=1'],
      ['OIDC_ISSUER_URL', 'https://sso.example.com/#x'],
      ['OIDC_ISSUER_URL', 'https://user:hunter2@sso.example.com'],
      ['OIDC_SUBJECT_CLAIM', 'two words'],
      ['OIDC_SUBJECT_CLAIM', 'sub,email'],
      ['OIDC_USERNAME_CLAIMS', 'email, bad claim'],
      ['OIDC_USERNAME_CLAIMS', ' , '],
      ['OIDC_ROLES_CLAIM', 'realm_access..roles'],
      ['OIDC_ROLES_CLAIM', 'has space'],
      ['OIDC_ROLE_MAP', '{not json'],
      ['OIDC_ROLE_MAP', '["acme:admin"]'],
      ['OIDC_ROLE_MAP', '"acme:admin"'],
      ['OIDC_ROLE_MAP', '{"g":"acme"}'],
      ['OIDC_ROLE_MAP', '{"g":"acme:superuser"}'],
      ['OIDC_ROLE_MAP', '{"g":"Acme:admin"}'],
      ['OIDC_ROLE_MAP', '{"g":"acme/:admin"}'],
      ['OIDC_ROLE_MAP', '{"g":":admin"}'],
      ['OIDC_ROLE_MAP', '{"g":"**:admin"}'],
      ['OIDC_ROLE_MAP', '{"g":["acme:admin", 3]}'],
      ['OIDC_ROLE_MAP', '{"g":[]}'],
      ['OIDC_ROLE_MAP', '{"g":{"acme":"admin"}}'],
      ['OIDC_CLOCK_SKEW_SECONDS', '301'],
      ['OIDC_CLOCK_SKEW_SECONDS', '-1'],
      ['OIDC_CLOCK_SKEW_SECONDS', '1.5'],
      ['OIDC_CLOCK_SKEW_SECONDS', 'thirty'],
      ['OIDC_ALGORITHMS', 'none'],
      ['OIDC_ALGORITHMS', 'RS256,HS256'],
      ['OIDC_ALGORITHMS', 'hs512'],
      ['OIDC_ALGORITHMS', 'RS256,XS999'],
      ['OIDC_ALGORITHMS', 'EdDSA'],
      ['OIDC_ALGORITHMS', ','],
      ['OIDC_JWKS_MIN_REFRESH_SECONDS', '3601'],
      ['OIDC_JWKS_MAX_AGE_SECONDS', '0'],
      ['OIDC_JWKS_MAX_AGE_SECONDS', '86401'],
      ['OIDC_HTTP_TIMEOUT_MS', '99'],
      ['OIDC_HTTP_TIMEOUT_MS', '60001'],
    ])('%s=%s', (variable, value) => {
      const { settings, problems } = parse({ ...required, [variable]: value });
      expect(settings).toBeUndefined();
      expect(problems.length).toBeGreaterThan(0);
      expect(problems.every((p) => p.variable === variable)).toBe(true);
    });
  });

  it("refuses a refresh rate limit longer than the keys' maximum age", () => {
    const { settings, problems } = parse({
      ...required,
      OIDC_JWKS_MIN_REFRESH_SECONDS: '120',
      OIDC_JWKS_MAX_AGE_SECONDS: '60',
    });
    expect(settings).toBeUndefined();
    expect(problems.map((p) => p.variable)).toEqual(['OIDC_JWKS_MIN_REFRESH_SECONDS']);
  });

  it('never echoes a credential found in the issuer URL', () => {
    const { problems } = parse({ ...required, OIDC_ISSUER_URL: 'https://user:hunter2@sso.example.com' });
    expect(JSON.stringify(problems)).not.toContain('hunter2');
  });

  it('collects every problem at once and appends to the caller’s list', () => {
    const problems = [{ variable: 'PORT', problem: 'earlier' }];
    const settings = parseOidcSettings(
      { OIDC_ISSUER_URL: 'nope', OIDC_AUDIENCE: 'a', OIDC_ALGORITHMS: 'none', OIDC_HTTP_TIMEOUT_MS: 'x' },
      problems,
    );
    expect(settings).toBeUndefined();
    expect(problems.map((p) => p.variable)).toEqual([
      'PORT',
      'OIDC_ISSUER_URL',
      'OIDC_ALGORITHMS',
      'OIDC_HTTP_TIMEOUT_MS',
    ]);
  });

  it('lists every variable it reads in OIDC_ENV_VARS', () => {
    const read = new Set<string>();
    const env = new Proxy(
      {},
      {
        get: (_target, name) => {
          read.add(String(name));
          return undefined;
        },
      },
    );
    parseOidcSettings(env, []);
    expect([...read].sort()).toEqual([...OIDC_ENV_VARS].sort());
  });
});
