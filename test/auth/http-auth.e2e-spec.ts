/**
 * Authentication over real HTTP: the Agent Card's declared security and the guards agree (for every
 * scheme the card declares, its credential passes and its absence fails), API keys end to end,
 * 401/403/429 answers with their headers, and JWT bearer tokens from a real OpenID provider, attack
 * cases included — each asserting the HTTP status and the JSON-RPC code.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiKeyService, type CreatedApiKey } from '../../packages/server/src/auth/apikey/api-key.service.js';
import { operatorActor } from '../../packages/server/src/common/actor.js';
import type { Role } from '../../packages/server/src/common/principal.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import {
  attackerKey,
  forgeToken,
  nowSeconds,
  startOidcProvider,
  type TestOidcProvider,
} from '../support/oidc-provider.js';
import { rawCall, startServer, type TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';
import { holdWallTime } from '../support/manual-clock.js';

const AUDIENCE = 'https://agents.acme.example';
const WHOAMI = { jsonrpc: '2.0', id: 'who', method: '_cleveragents/auth/whoami' };

const operator = { actor: operatorActor('cli:tests'), requestId: 'http-auth-tests' };

async function mintKey(
  server: TestServer,
  role: Role,
  namespace = 'default',
  expiresAt?: Date,
): Promise<CreatedApiKey> {
  return server.app
    .get(ApiKeyService)
    .create({ namespace, name: `k-${role}-${Math.random().toString(36).slice(2, 8)}`, role, expiresAt }, operator);
}

function whoami(server: TestServer, headers: Record<string, string> = {}) {
  return rawCall(server.endpoint, WHOAMI, headers);
}

function expectUnauthenticated(res: Awaited<ReturnType<typeof rawCall>>, reason?: string): void {
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toBeTruthy();
  expect(res.headers.get('x-request-id')).toBeTruthy();
  expect(res.json).toMatchObject({ jsonrpc: '2.0', id: 'who', error: { code: -32002 } });
  expect(res.json.error.data[0]).toMatchObject({ domain: 'cleveragents' });
  if (reason) expect(res.json.error.data[0].reason).toBe(reason);
}

type SchemeJson = Record<string, Record<string, unknown>>;

describe.each(databaseTargets())('authentication over HTTP on $kind', (target) => {
  let db: TestDatabase;
  let idp: TestOidcProvider;

  beforeAll(async () => {
    db = await target.create();
    idp = await startOidcProvider();
  });

  afterAll(async () => {
    await ifAssigned(idp)?.close();
    await ifAssigned(db)?.cleanup();
  });

  describe('API keys (the default scheme)', () => {
    let server: TestServer;
    const logLines: Record<string, unknown>[] = [];

    beforeAll(async () => {
      const logSink = {
        write: (line: string): boolean => {
          for (const l of line.split('\n').filter(Boolean)) logLines.push(JSON.parse(l) as Record<string, unknown>);
          return true;
        },
      };
      server = await startServer(db, { CLEVERAGENTS_AUTH_SCHEMES: 'apiKey' }, { logSink });
    });

    afterAll(async () => {
      await ifAssigned(server)?.close();
    });

    it('answers a call without credentials with 401, a challenge naming the header, -32002 and the request id', async () => {
      const res = await whoami(server);
      expectUnauthenticated(res, 'AUTHENTICATION_REQUIRED');
      expect(res.headers.get('www-authenticate')).toBe('ApiKey realm="cleveragents", header="X-API-Key"');
    });

    it('logs a refused call and an accepted one with the request id (and the principal once known)', async () => {
      await whoami(server, { 'x-request-id': 'req-refused-1', 'x-api-key': 'not-a-key' });
      const key = await mintKey(server, 'viewer');
      await whoami(server, { 'x-request-id': 'req-accepted-1', 'x-api-key': key.key });
      expect(logLines).toContainEqual(
        expect.objectContaining({
          msg: 'authentication failed',
          reason: 'INVALID_API_KEY',
          requestId: 'req-refused-1',
        }),
      );
      expect(logLines).toContainEqual(
        expect.objectContaining({
          msg: 'rpc call',
          requestId: 'req-accepted-1',
          principal: `apikey:${key.id}`,
          method: '_cleveragents/auth/whoami',
        }),
      );
      expect(JSON.stringify(logLines)).not.toContain(key.key);
    });

    it('the public card stays readable without credentials', async () => {
      const res = await fetch(`${server.baseUrl}/.well-known/agent-card.json`);
      expect(res.status).toBe(200);
    });

    it('a key passes, shows who it is, and is refused once revoked or for a wrong secret', async () => {
      const key = await mintKey(server, 'member');
      const ok = await whoami(server, { 'x-api-key': key.key });
      expect(ok.status).toBe(200);
      expect(ok.json.result).toMatchObject({
        subject: `apikey:${key.id}`,
        scheme: 'apiKey',
        defaultNamespace: 'default',
        grants: [{ namespace: 'default', role: 'member' }],
      });

      const forged = `${key.key.slice(0, -4)}AAAA`;
      expectUnauthenticated(await whoami(server, { 'x-api-key': forged }), 'INVALID_API_KEY');
      expectUnauthenticated(await whoami(server, { 'x-api-key': 'not-a-key' }), 'INVALID_API_KEY');

      await server.app.get(ApiKeyService).revoke({ namespace: 'default', id: key.id }, operator);
      expectUnauthenticated(await whoami(server, { 'x-api-key': key.key }), 'INVALID_API_KEY');
    });

    it('an expired key is refused', async () => {
      // Held still, the wall time reaches the key's expiry when the test moves it there, not before.
      const time = holdWallTime();
      try {
        const key = await mintKey(server, 'viewer', 'default', new Date(Date.now() + 1500));
        expect((await whoami(server, { 'x-api-key': key.key })).status).toBe(200);
        time.advance(1500);
        expectUnauthenticated(await whoami(server, { 'x-api-key': key.key }), 'INVALID_API_KEY');
      } finally {
        time.release();
      }
    });

    it('a key in Authorization: Bearer is not accepted while the bearer scheme is off', async () => {
      const key = await mintKey(server, 'member');
      const res = await whoami(server, { authorization: `Bearer ${key.key}` });
      expectUnauthenticated(res, 'AUTHENTICATION_REQUIRED');
      expect(res.json.error.message).toContain('X-API-Key');
      expect(res.json.error.message).toContain('CLEVERAGENTS_AUTH_SCHEMES');
      // without any credential the message stays the generic one
      expect((await whoami(server)).json.error.message).not.toContain('X-API-Key');
    });

    it('a role too low is HTTP 403 and -32003 naming the role', async () => {
      const viewer = await mintKey(server, 'viewer');
      const res = await rawCall(
        server.endpoint,
        {
          jsonrpc: '2.0',
          id: 1,
          method: '_cleveragents/auth/apikey/create',
          params: { name: 'escalate', role: 'viewer' },
        },
        { 'x-api-key': viewer.key },
      );
      expect(res.status).toBe(403);
      expect(res.json.error.code).toBe(-32003);
      expect(res.json.error.data[0]).toMatchObject({
        reason: 'ROLE_REQUIRED',
        metadata: { requiredRole: 'admin', heldRole: 'viewer', namespace: 'default' },
      });
    });
  });

  describe('rate limit per principal', () => {
    let server: TestServer;

    beforeAll(async () => {
      server = await startServer(db, {
        CLEVERAGENTS_AUTH_SCHEMES: 'apiKey',
        CLEVERAGENTS_RATE_LIMIT_PER_MINUTE: '60',
        CLEVERAGENTS_RATE_LIMIT_BURST: '3',
      });
    });

    afterAll(async () => {
      await ifAssigned(server)?.close();
    });

    it('allows the burst, then answers 429 with Retry-After; another principal is not affected', async () => {
      const a = await mintKey(server, 'viewer');
      const b = await mintKey(server, 'viewer');
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await whoami(server, { 'x-api-key': a.key })).status);
      expect(statuses).toEqual([200, 200, 200]);
      const limited = await whoami(server, { 'x-api-key': a.key });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(limited.json).toMatchObject({ id: 'who', error: { code: -32000 } });
      expect(limited.json.error.data[0]).toMatchObject({ reason: 'RATE_LIMIT_EXCEEDED' });
      expect((await whoami(server, { 'x-api-key': b.key })).status).toBe(200);
    });

    it('limits failed authentication per client address, so keys cannot be guessed at full speed', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await whoami(server, { 'x-api-key': `wrong-${i}` })).status);
      expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
      expect(statuses.slice(3)).toEqual([429, 429]);
    });
  });

  describe('the card and the guards agree', () => {
    const configurations: Record<string, () => Record<string, string>> = {
      apiKey: () => ({ CLEVERAGENTS_AUTH_SCHEMES: 'apiKey' }),
      'bearer (API keys only)': () => ({ CLEVERAGENTS_AUTH_SCHEMES: 'bearer' }),
      'oidc + oauth2 + bearer + apiKey': () => ({
        CLEVERAGENTS_AUTH_SCHEMES: 'oidc,oauth2,bearer,apiKey',
        OIDC_ISSUER_URL: idp.issuer,
        OIDC_AUDIENCE: AUDIENCE,
        OIDC_ROLE_MAP: JSON.stringify({ 'agents-users': 'default:member' }),
        OAUTH2_FLOWS: 'clientCredentials',
        OAUTH2_TOKEN_URL: `${idp.issuer}/token`,
      }),
    };

    it.each(Object.keys(configurations))(
      'for %s: each declared scheme passes with its credential; none and undeclared ones fail',
      async (name) => {
        const server = await startServer(db, configurations[name]());
        try {
          const card = (await (await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).json()) as {
            securitySchemes: SchemeJson;
            securityRequirements: { schemes: Record<string, unknown> }[];
          };
          const declared = Object.entries(card.securitySchemes);
          expect(declared.length).toBeGreaterThan(0);
          // Every requirement is a single declared scheme: any one of them authenticates.
          for (const requirement of card.securityRequirements) {
            expect(Object.keys(requirement.schemes).every((s) => s in card.securitySchemes)).toBe(true);
          }
          const key = await mintKey(server, 'member');
          const token = await idp.token({ audience: AUDIENCE, subject: 'alice', groups: ['agents-users'] });
          const kinds = new Set<string>();
          for (const [schemeName, scheme] of declared) {
            const credentials = await credentialsFor(scheme, key.key, token);
            expect(credentials.length).toBeGreaterThan(0);
            for (const headers of credentials) {
              const res = await whoami(server, headers);
              expect({ schemeName, headers: Object.keys(headers), status: res.status }).toEqual({
                schemeName,
                headers: Object.keys(headers),
                status: 200,
              });
              kinds.add(Object.keys(headers)[0]);
            }
          }
          expectUnauthenticated(await whoami(server));
          // A credential of a kind the card does not declare is refused.
          if (!kinds.has('x-api-key')) expectUnauthenticated(await whoami(server, { 'x-api-key': key.key }));
          if (!kinds.has('authorization')) {
            expectUnauthenticated(await whoami(server, { authorization: `Bearer ${key.key}` }));
          }
          const jwtDeclared = declared.some(
            ([, s]) => 'openIdConnectSecurityScheme' in s || 'oauth2SecurityScheme' in s,
          );
          if (!jwtDeclared) expectUnauthenticated(await whoami(server, { authorization: `Bearer ${token}` }));
        } finally {
          await server.close();
        }
      },
    );

    /** What a client reading this scheme from the card would send. */
    async function credentialsFor(scheme: Record<string, unknown>, apiKey: string, jwt: string) {
      if ('apiKeySecurityScheme' in scheme) {
        const s = scheme.apiKeySecurityScheme as { location: string; name: string };
        expect(s.location).toBe('header');
        return [{ [s.name.toLowerCase()]: apiKey }];
      }
      if ('httpAuthSecurityScheme' in scheme) {
        const s = scheme.httpAuthSecurityScheme as { scheme: string; bearerFormat: string };
        expect(s.scheme).toBe('Bearer');
        const out = [{ authorization: `Bearer ${apiKey}` }];
        if (s.bearerFormat.includes('JWT')) out.push({ authorization: `Bearer ${jwt}` });
        return out;
      }
      if ('openIdConnectSecurityScheme' in scheme) {
        const s = scheme.openIdConnectSecurityScheme as { openIdConnectUrl: string };
        const discovery = (await (await fetch(s.openIdConnectUrl)).json()) as { issuer: string };
        expect(discovery.issuer).toBe(idp.issuer);
        return [{ authorization: `Bearer ${jwt}` }];
      }
      if ('oauth2SecurityScheme' in scheme) {
        const s = scheme.oauth2SecurityScheme as { flows: { clientCredentials?: { tokenUrl: string } } };
        expect(s.flows.clientCredentials?.tokenUrl).toBe(`${idp.issuer}/token`);
        return [{ authorization: `Bearer ${jwt}` }];
      }
      throw new Error(`the card declares a scheme this test cannot satisfy: ${JSON.stringify(scheme)}`);
    }
  });

  describe('JWT bearer tokens from the corporate SSO (a real OpenID provider)', () => {
    let server: TestServer;

    beforeAll(async () => {
      server = await startServer(db, {
        CLEVERAGENTS_AUTH_SCHEMES: 'oidc',
        OIDC_ISSUER_URL: idp.issuer,
        OIDC_AUDIENCE: AUDIENCE,
        OIDC_ROLE_MAP: JSON.stringify({ 'agents-admins': 'default:admin', 'agents-readers': ['default:viewer'] }),
        OIDC_CLOCK_SKEW_SECONDS: '0',
        OIDC_JWKS_MIN_REFRESH_SECONDS: '0',
      });
    });

    afterAll(async () => {
      await ifAssigned(server)?.close();
    });

    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

    function expectRejected(res: Awaited<ReturnType<typeof rawCall>>, reason: string): void {
      expectUnauthenticated(res, reason);
      expect(res.headers.get('www-authenticate')).toMatch(
        /^Bearer realm="cleveragents", error="invalid_token", error_description="[^"]+"$/,
      );
    }

    it('a valid token passes: subject from sub, roles from the groups claim', async () => {
      const token = await idp.token({ audience: AUDIENCE, subject: 'alice', groups: ['agents-admins', 'other'] });
      const res = await whoami(server, bearer(token));
      expect(res.status).toBe(200);
      expect(res.json.result).toMatchObject({
        subject: 'oidc:alice',
        scheme: 'oidc',
        defaultNamespace: 'default',
        defaultNamespaceRole: 'admin',
      });
    });

    it('diagnostics report the issuer keys loaded (fetched at start, before any token)', async () => {
      const token = await idp.token({ audience: AUDIENCE, subject: 'alice', groups: ['agents-readers'] });
      const res = await rawCall(
        server.endpoint,
        { jsonrpc: '2.0', id: 1, method: '_cleveragents/diagnostics/health' },
        bearer(token),
      );
      expect(res.json.result.checks.identityProvider).toMatchObject({ ok: true, keyCount: 1 });
    });

    it('a token whose groups map to no role authenticates but may do nothing in the namespace', async () => {
      const token = await idp.token({ audience: AUDIENCE, subject: 'bob', groups: ['unrelated'] });
      expect((await whoami(server, bearer(token))).status).toBe(200);
      const res = await rawCall(
        server.endpoint,
        { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'some-task' } },
        bearer(token),
      );
      expect(res.status).toBe(200);
      expect(res.json.error.code).toBe(-32001);
    });

    it('refuses an expired token', async () => {
      // The server's clock reads the wall time, held still here: the token expires when the test says.
      const time = holdWallTime();
      try {
        const token = await idp.token({ audience: AUDIENCE, subject: 'alice', ttlSeconds: 1 });
        expect((await whoami(server, bearer(token))).status).toBe(200);
        time.advance(1000);
        expectRejected(await whoami(server, bearer(token)), 'TOKEN_EXPIRED');
      } finally {
        time.release();
      }
    });

    it('refuses a token not valid yet (nbf in the future)', async () => {
      const k = idp.signingKey;
      const token = forgeToken({
        header: { alg: k.alg, kid: k.kid, typ: 'JWT' },
        payload: { iss: idp.issuer, aud: AUDIENCE, sub: 'alice', nbf: nowSeconds() + 600, exp: nowSeconds() + 900 },
        signWith: { privateKey: k.privateKey, alg: k.alg },
      });
      expectRejected(await whoami(server, bearer(token)), 'TOKEN_NOT_YET_VALID');
    });

    it('refuses a token for another audience', async () => {
      const token = await idp.token({ audience: 'https://another-service.example', subject: 'alice' });
      expectRejected(await whoami(server, bearer(token)), 'TOKEN_INVALID_AUDIENCE');
    });

    it('refuses a token from another issuer', async () => {
      const other = await startOidcProvider();
      try {
        const token = await other.token({ audience: AUDIENCE, subject: 'alice' });
        const res = await whoami(server, bearer(token));
        expect(res.status).toBe(401);
        expect(res.json.error.code).toBe(-32002);
        // Its key is not in our issuer's JWKS either; which check fires first is the verifier's business.
        expect(['TOKEN_INVALID_ISSUER', 'TOKEN_UNKNOWN_KEY']).toContain(res.json.error.data[0].reason);
        const sameKeyOtherIssuer = forgeToken({
          header: { alg: idp.signingKey.alg, kid: idp.signingKey.kid },
          payload: { iss: other.issuer, aud: AUDIENCE, sub: 'alice', exp: nowSeconds() + 300 },
          signWith: { privateKey: idp.signingKey.privateKey, alg: idp.signingKey.alg },
        });
        expectRejected(await whoami(server, bearer(sameKeyOtherIssuer)), 'TOKEN_INVALID_ISSUER');
      } finally {
        await other.close();
      }
    });

    it('refuses a token signed by a key the issuer does not publish (unknown kid)', async () => {
      const attacker = attackerKey();
      const token = forgeToken({
        header: { alg: 'RS256', kid: 'attacker-key' },
        payload: { iss: idp.issuer, aud: AUDIENCE, sub: 'mallory', exp: nowSeconds() + 300 },
        signWith: { privateKey: attacker.privateKey, alg: 'RS256' },
      });
      expectRejected(await whoami(server, bearer(token)), 'TOKEN_UNKNOWN_KEY');
    });

    it('refuses alg none, HS256 signed with the public key, jku/jwk headers and a missing exp', async () => {
      const payload = { iss: idp.issuer, aud: AUDIENCE, sub: 'mallory', exp: nowSeconds() + 300 };
      const k = idp.signingKey;
      const none = forgeToken({ header: { alg: 'none', typ: 'JWT' }, payload, signWith: 'none' });
      expectRejected(await whoami(server, bearer(none)), 'TOKEN_ALGORITHM_NOT_ALLOWED');

      const pem = k.publicKey.export({ format: 'pem', type: 'spki' });
      const hs = forgeToken({ header: { alg: 'HS256', kid: k.kid }, payload, signWith: { hs256Secret: pem } });
      expectRejected(await whoami(server, bearer(hs)), 'TOKEN_ALGORITHM_NOT_ALLOWED');

      const attacker = attackerKey();
      for (const header of [
        { alg: 'RS256', kid: k.kid, jku: 'https://attacker.example/jwks.json' },
        { alg: 'RS256', kid: k.kid, jwk: attacker.publicJwk },
      ]) {
        const token = forgeToken({ header, payload, signWith: { privateKey: attacker.privateKey, alg: 'RS256' } });
        expectRejected(await whoami(server, bearer(token)), 'TOKEN_FORBIDDEN_HEADER');
      }

      const { exp: _exp, ...noExp } = payload;
      const eternal = forgeToken({
        header: { alg: k.alg, kid: k.kid },
        payload: noExp,
        signWith: { privateKey: k.privateKey, alg: k.alg },
      });
      expectRejected(await whoami(server, bearer(eternal)), 'TOKEN_MISSING_EXP');

      const tampered = (await idp.token({ audience: AUDIENCE, subject: 'alice', groups: ['agents-readers'] })).split(
        '.',
      );
      const claims = JSON.parse(Buffer.from(tampered[1], 'base64url').toString()) as Record<string, unknown>;
      claims.groups = ['agents-admins'];
      tampered[1] = Buffer.from(JSON.stringify(claims)).toString('base64url');
      expectRejected(await whoami(server, bearer(tampered.join('.'))), 'TOKEN_INVALID_SIGNATURE');
    });

    it('follows a key rotation: a token signed by the new key passes after one JWKS refresh', async () => {
      const before = idp.requests.jwks;
      idp.rotateKeys();
      const token = await idp.token({ audience: AUDIENCE, subject: 'alice', groups: ['agents-readers'] });
      const res = await whoami(server, bearer(token));
      expect(res.status).toBe(200);
      expect(res.json.result.defaultNamespaceRole).toBe('viewer');
      expect(idp.requests.jwks).toBe(before + 1);
    });
  });
});
