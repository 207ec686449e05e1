/**
 * JWT bearer verification against a real OpenID provider (test/support/oidc-provider.ts): the
 * JwtBearerStrategy and JwksKeySource, driven through passport's own authenticate middleware with
 * a bare request object, as the HTTP guard will drive them. Every refusal is asserted by reason.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import passport from 'passport';
import { JwksKeySource } from '../../packages/server/src/auth/oidc/jwks-key-source.js';
import { JwtBearerStrategy } from '../../packages/server/src/auth/oidc/jwt-bearer.strategy.js';
import { SystemClock, type Clock } from '../../packages/server/src/common/clock.js';
import { holdWallTime, ManualClock } from '../support/manual-clock.js';
import { parseOidcSettings } from '../../packages/server/src/config/oidc.settings.js';
import {
  TokenRejectedError,
  type TokenFailureReason,
  type TokenIdentity,
} from '../../packages/server/src/auth/oidc/token-identity.js';
import {
  attackerKey,
  forgeToken,
  nowSeconds,
  startOidcProvider,
  type TestOidcProvider,
} from '../support/oidc-provider.js';
import { ifAssigned } from '../support/assigned.js';

const AUDIENCE = 'cleveragents-server';
const ROLE_MAP = {
  'acme-admins': 'acme:admin',
  'acme-viewers': 'acme:viewer',
  platform: ['acme/platform:owner', 'acme:member'],
  auditors: '*:viewer',
};

type Outcome =
  | { kind: 'success'; identity: TokenIdentity }
  | { kind: 'fail'; reason: TokenFailureReason | undefined; status: number | undefined; info: unknown }
  | { kind: 'error'; error: unknown };

interface Verifier {
  keys: JwksKeySource;
  strategy: JwtBearerStrategy;
  /** Passes `Authorization: Bearer <token>` (or `authorization` verbatim when given). */
  verify(token: string, authorization?: string): Promise<Outcome>;
}

/** Runs passport's authenticate middleware over a bare request carrying `authorization`. */
function authenticate(
  strategies: Record<string, passport.Strategy>,
  names: string[],
  authorization: string | undefined,
): Promise<Outcome> {
  const instance = new passport.Passport();
  for (const [name, strategy] of Object.entries(strategies)) instance.use(name, strategy);
  const request = { headers: authorization === undefined ? {} : { authorization } };
  return new Promise((resolve) => {
    const middleware = instance.authenticate(
      names,
      { session: false },
      (error: unknown, user: TokenIdentity | false, info: unknown, status: number | undefined) => {
        if (error) resolve({ kind: 'error', error });
        else if (user) resolve({ kind: 'success', identity: user });
        else {
          const first = Array.isArray(info) ? info[0] : info;
          resolve({
            kind: 'fail',
            reason: first instanceof TokenRejectedError ? first.reason : undefined,
            status: Array.isArray(status) ? status[0] : status,
            info,
          });
        }
      },
    );
    middleware(request, {}, (error?: unknown) => resolve({ kind: 'error', error }));
  });
}

function verifierFor(issuer: string, env: Record<string, string> = {}, clock: Clock = new SystemClock()): Verifier {
  const problems: { variable: string; problem: string }[] = [];
  const settings = parseOidcSettings(
    { OIDC_ISSUER_URL: issuer, OIDC_AUDIENCE: AUDIENCE, OIDC_ROLE_MAP: JSON.stringify(ROLE_MAP), ...env },
    problems,
  );
  expect(problems).toEqual([]);
  const keys = new JwksKeySource(settings!);
  const strategy = new JwtBearerStrategy(settings!, keys, clock);
  return {
    keys,
    strategy,
    verify: (token, authorization) => authenticate({ jwt: strategy }, ['jwt'], authorization ?? `Bearer ${token}`),
  };
}

async function expectRefused(outcome: Promise<Outcome>, reason: TokenFailureReason): Promise<void> {
  const result = await outcome;
  expect(result).toMatchObject({ kind: 'fail', reason, status: 401 });
}

function payloadOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as Record<string, unknown>;
}

describe('JWT bearer verification against a real OpenID provider', () => {
  let idp: TestOidcProvider;
  let verifier: Verifier;
  /** Claims a forged token needs to pass every check but the one under test. */
  let valid: () => Record<string, unknown>;

  beforeAll(async () => {
    if (!process.env.TEST_LOGS) Logger.overrideLogger(false);
    idp = await startOidcProvider();
    verifier = verifierFor(idp.issuer);
    valid = () => ({ iss: idp.issuer, aud: AUDIENCE, sub: 'mallory', iat: nowSeconds(), exp: nowSeconds() + 300 });
  });

  afterAll(async () => {
    await ifAssigned(idp)?.close();
  });

  it('accepts a token the provider issued, with the grants its groups map to', async () => {
    const token = await idp.token({
      audience: AUDIENCE,
      subject: 'ada',
      groups: ['acme-viewers', 'platform', 'acme-admins', 'auditors', 'unmapped'],
      claims: { preferred_username: 'ada.lovelace' },
    });
    const outcome = await verifier.verify(token);
    expect(outcome.kind).toBe('success');
    const { identity } = outcome as { identity: TokenIdentity };
    expect(identity.subject).toBe('oidc:ada');
    expect(identity.displayName).toBe('ada.lovelace');
    expect(Object.fromEntries(identity.grants)).toEqual({ acme: 'admin', 'acme/platform': 'owner', '*': 'viewer' });
    expect(identity.expiresAt.getTime()).toBe((payloadOf(token).exp as number) * 1000);
    expect(identity.claims.iss).toBe(idp.issuer);
    expect(verifier.keys.readiness()).toMatchObject({ ready: true, keyCount: 1, jwksUri: idp.jwksUri });
  });

  it('accepts a token whose aud is one of several configured audiences, without groups (no grants)', async () => {
    const multi = verifierFor(idp.issuer, { OIDC_AUDIENCE: `https://elsewhere.example,${AUDIENCE}` });
    const outcome = await multi.verify(await idp.token({ audience: AUDIENCE, subject: 'bob' }));
    expect(outcome).toMatchObject({ kind: 'success', identity: { subject: 'oidc:bob', displayName: 'bob' } });
    expect((outcome as { identity: TokenIdentity }).identity.grants.size).toBe(0);
  });

  it('accepts ES256 tokens from a provider with an EC key', async () => {
    const ecIdp = await startOidcProvider({ alg: 'ES256' });
    try {
      const outcome = await verifierFor(ecIdp.issuer).verify(
        await ecIdp.token({ audience: AUDIENCE, subject: 'eve', groups: 'acme-viewers' }),
      );
      expect(outcome).toMatchObject({ kind: 'success', identity: { subject: 'oidc:eve' } });
    } finally {
      await ecIdp.close();
    }
  });

  it('refuses a token once it expires, by the server clock (ttl 1 s, no clock skew)', async () => {
    const clock = new ManualClock();
    const strict = verifierFor(idp.issuer, { OIDC_CLOCK_SKEW_SECONDS: '0' }, clock);
    const token = await idp.token({ audience: AUDIENCE, subject: 'ada', ttlSeconds: 1 });
    const exp = payloadOf(token).exp as number;
    // Valid 1 ms before `exp`, expired at `exp` (RFC 7519 §4.1.4: on or after it).
    clock.advance(exp * 1000 - clock.now() - 1);
    expect(await strict.verify(token)).toMatchObject({ kind: 'success' });
    clock.advance(1);
    await expectRefused(strict.verify(token), 'token_expired');
  });

  it('refuses a token not valid yet (nbf beyond the clock skew), signed with the provider key', async () => {
    const { kid, alg, privateKey } = idp.signingKey;
    const token = forgeToken({
      header: { alg, kid, typ: 'at+jwt' },
      payload: { ...valid(), nbf: nowSeconds() + 120 },
      signWith: { privateKey, alg },
    });
    await expectRefused(verifier.verify(token), 'token_not_yet_valid');
    // Within the skew (30 s by default) the same construction passes: the signature path is sound.
    const withinSkew = forgeToken({
      header: { alg, kid },
      payload: { ...valid(), nbf: nowSeconds() + 10 },
      signWith: { privateKey, alg },
    });
    expect((await verifier.verify(withinSkew)).kind).toBe('success');
  });

  it('refuses a token the provider issued for another resource', async () => {
    const token = await idp.token({ audience: 'https://another-service.example/api', subject: 'ada' });
    await expectRefused(verifier.verify(token), 'invalid_audience');
  });

  it('refuses a token from another provider', async () => {
    const other = await startOidcProvider();
    try {
      const token = await other.token({ audience: AUDIENCE, subject: 'ada', groups: ['acme-admins'] });
      const jwksBefore = idp.requests.jwks;
      await expectRefused(verifier.verify(token), 'invalid_issuer');
      expect(idp.requests.jwks).toBe(jwksBefore);
    } finally {
      await other.close();
    }
  });

  it('refuses a token signed with our key but naming another issuer', async () => {
    const { kid, alg, privateKey } = idp.signingKey;
    const token = forgeToken({
      header: { alg, kid },
      payload: { ...valid(), iss: `${idp.issuer}/` },
      signWith: { privateKey, alg },
    });
    await expectRefused(verifier.verify(token), 'invalid_issuer');
  });

  it('refuses a token signed by an unknown key under a kid the JWKS lacks', async () => {
    const token = forgeToken({
      header: { alg: 'RS256', kid: 'attacker-kid' },
      payload: valid(),
      signWith: { privateKey: attackerKey().privateKey, alg: 'RS256' },
    });
    await expectRefused(verifier.verify(token), 'unknown_key');
  });

  it("refuses a token signed by an attacker key under the provider's kid", async () => {
    const token = forgeToken({
      header: { alg: 'RS256', kid: idp.signingKey.kid },
      payload: valid(),
      signWith: { privateKey: attackerKey().privateKey, alg: 'RS256' },
    });
    await expectRefused(verifier.verify(token), 'invalid_signature');
  });

  it('refuses an ES256 token naming the RSA key (key type must fit alg)', async () => {
    const token = forgeToken({
      header: { alg: 'ES256', kid: idp.signingKey.kid },
      payload: valid(),
      signWith: { privateKey: attackerKey('ES256').privateKey, alg: 'ES256' },
    });
    await expectRefused(verifier.verify(token), 'unknown_key');
  });

  it('refuses a provider token whose payload was altered', async () => {
    const token = await idp.token({ audience: AUDIENCE, subject: 'ada', groups: ['acme-viewers'] });
    const [header, , signature] = token.split('.');
    const payload = { ...payloadOf(token), groups: ['acme-admins'] };
    const altered = `${header}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${signature}`;
    await expectRefused(verifier.verify(altered), 'invalid_signature');
  });

  it('refuses alg "none", whatever the casing', async () => {
    for (const alg of ['none', 'None', 'NONE']) {
      const token = forgeToken({ header: { alg, kid: idp.signingKey.kid }, payload: valid(), signWith: 'none' });
      await expectRefused(verifier.verify(token), 'algorithm_not_allowed');
    }
  });

  it("refuses HS256 signed with the provider's public key (PEM and JWK forms)", async () => {
    const publicKey = idp.signingKey.publicKey;
    const secrets = [
      publicKey.export({ type: 'spki', format: 'pem' }),
      JSON.stringify(publicKey.export({ format: 'jwk' })),
      JSON.stringify({ ...publicKey.export({ format: 'jwk' }), kid: idp.signingKey.kid, alg: 'RS256', use: 'sig' }),
    ];
    for (const secret of secrets) {
      const token = forgeToken({
        header: { alg: 'HS256', kid: idp.signingKey.kid },
        payload: valid(),
        signWith: { hs256Secret: secret },
      });
      await expectRefused(verifier.verify(token), 'algorithm_not_allowed');
    }
  });

  it('refuses an algorithm that is allowed in general but not configured', async () => {
    const rsOnly = verifierFor(idp.issuer, { OIDC_ALGORITHMS: 'RS256' });
    const { kid, privateKey } = idp.signingKey;
    const token = forgeToken({
      header: { alg: 'PS256', kid },
      payload: valid(),
      signWith: { privateKey, alg: 'PS256' },
    });
    await expectRefused(rsOnly.verify(token), 'algorithm_not_allowed');
    // The default list allows PS256, but the provider's JWK pins its key to RS256: no key fits.
    await expectRefused(verifier.verify(token), 'unknown_key');
  });

  it('refuses tokens that point at or embed their own key (jku, jwk, x5u, x5c) or carry crit', async () => {
    const attacker = attackerKey();
    const headers: Record<string, unknown>[] = [
      { jku: 'https://attacker.example/jwks.json', kid: 'attacker-kid' },
      { jku: idp.jwksUri, kid: idp.signingKey.kid },
      { jwk: { ...attacker.publicJwk, kid: 'attacker-kid' }, kid: 'attacker-kid' },
      { jwk: attacker.publicJwk },
      { x5u: 'https://attacker.example/cert.pem', kid: 'attacker-kid' },
      { x5c: ['MIIBszCCAVmgAwIBAgIU'], kid: 'attacker-kid' },
      { crit: ['exp'], exp: nowSeconds() + 60, kid: idp.signingKey.kid },
    ];
    for (const extra of headers) {
      const token = forgeToken({
        header: { alg: 'RS256', ...extra },
        payload: valid(),
        signWith: { privateKey: attacker.privateKey, alg: 'RS256' },
      });
      await expectRefused(verifier.verify(token), 'forbidden_header');
    }
    // Even signed with the genuine key, a jku header is refused: we never let a token name its key source.
    const { kid, alg, privateKey } = idp.signingKey;
    const genuine = forgeToken({
      header: { alg, kid, jku: idp.jwksUri },
      payload: valid(),
      signWith: { privateKey, alg },
    });
    await expectRefused(verifier.verify(genuine), 'forbidden_header');
  });

  it('refuses a token without exp, or with a non-numeric one, signed with the provider key', async () => {
    const { kid, alg, privateKey } = idp.signingKey;
    const { exp: _exp, ...withoutExp } = valid();
    const token = forgeToken({ header: { alg, kid }, payload: withoutExp, signWith: { privateKey, alg } });
    await expectRefused(verifier.verify(token), 'missing_exp');
    const stringExp = forgeToken({
      header: { alg, kid },
      payload: { ...valid(), exp: String(nowSeconds() + 60) },
      signWith: { privateKey, alg },
    });
    await expectRefused(verifier.verify(stringExp), 'malformed_token');
  });

  it('refuses a token without a string subject claim', async () => {
    const { kid, alg, privateKey } = idp.signingKey;
    for (const sub of [undefined, 42, '']) {
      const token = forgeToken({ header: { alg, kid }, payload: { ...valid(), sub }, signWith: { privateKey, alg } });
      await expectRefused(verifier.verify(token), 'missing_subject');
    }
  });

  it('refuses malformed tokens', async () => {
    const parts = (await idp.token({ audience: AUDIENCE, subject: 'ada' })).split('.');
    for (const token of [
      'abc.def',
      'a.b.c.d',
      `${parts[0]}.${parts[1]}`,
      `${parts[0]}..${parts[2]}`,
      `not-base64!.${parts[1]}.${parts[2]}`,
      `${Buffer.from('not json').toString('base64url')}.${parts[1]}.${parts[2]}`,
      `${parts[0]}.${Buffer.from('"a string payload"').toString('base64url')}.${parts[2]}`,
    ]) {
      await expectRefused(verifier.verify(token), 'malformed_token');
    }
  });

  it('fails (does not error) on no token or an API key, so a strategy tried next can succeed', async () => {
    await expectRefused(verifier.verify('', ''), 'missing_token');
    await expectRefused(verifier.verify('', 'Basic dXNlcjpwYXNz'), 'missing_token');
    await expectRefused(verifier.verify('ca_01J0ABCDEFGHJKMNPQRSTVWXYZ_s3cr3t'), 'malformed_token');

    const apiKey: passport.Strategy = {
      authenticate(this: passport.StrategyCreated<passport.Strategy>, request: { headers: Record<string, string> }) {
        if (request.headers.authorization === 'Bearer ca_live_key') this.success({ apiKey: true });
        else this.fail('no api key', 401);
      },
    } as passport.Strategy;
    const chained = await authenticate({ jwt: verifier.strategy, apiKey }, ['jwt', 'apiKey'], 'Bearer ca_live_key');
    expect(chained).toEqual({ kind: 'success', identity: { apiKey: true } });
  });

  describe('keys and their refresh', () => {
    // jose's key set goes by the wall time: held still, no refresh is due until the test moves it past
    // the rate limit, however long the calls in between take.
    let time: ReturnType<typeof holdWallTime>;
    beforeEach(() => {
      time = holdWallTime();
    });
    afterEach(() => {
      time.release();
    });

    it('follows a key rotation through a refresh, and drops the old key', async () => {
      const rotating = await startOidcProvider();
      try {
        const keys = verifierFor(rotating.issuer, { OIDC_JWKS_MIN_REFRESH_SECONDS: '1' });
        const before = await rotating.token({ audience: AUDIENCE, subject: 'ada' });
        expect((await keys.verify(before)).kind).toBe('success');
        const oldKid = rotating.signingKey.kid;
        rotating.rotateKeys();
        expect(rotating.signingKey.kid).not.toBe(oldKid);
        const after = await rotating.token({ audience: AUDIENCE, subject: 'ada' });
        const fetchesBefore = rotating.requests.jwks;
        time.advance(1001); // past the refresh rate limit
        expect((await keys.verify(after)).kind).toBe('success');
        expect(rotating.requests.jwks).toBe(fetchesBefore + 1);
        // The old key is gone from the JWKS; the old token's kid is unknown now.
        await expectRefused(keys.verify(before), 'unknown_key');
      } finally {
        await rotating.close();
      }
    });

    it('refreshes at most once per OIDC_JWKS_MIN_REFRESH_SECONDS, whatever the flood of unknown kids', async () => {
      const flooded = await startOidcProvider();
      try {
        const keys = verifierFor(flooded.issuer, { OIDC_JWKS_MIN_REFRESH_SECONDS: '1' });
        const attacker = attackerKey();
        const tokens = Array.from({ length: 100 }, (_, i) =>
          forgeToken({
            header: { alg: 'RS256', kid: `bogus-${i}` },
            payload: { ...valid(), iss: flooded.issuer },
            signWith: { privateKey: attacker.privateKey, alg: 'RS256' },
          }),
        );
        const genuine = await flooded.token({ audience: AUDIENCE, subject: 'ada' });
        expect((await keys.verify(genuine)).kind).toBe('success');
        expect(flooded.requests).toMatchObject({ discovery: 1, jwks: 1 });

        // Right after a load, a flood costs nothing.
        for (const token of tokens) await expectRefused(keys.verify(token), 'unknown_key');
        expect(flooded.requests.jwks).toBe(1);

        // Once the window has passed, 100 bogus kids in a row cost one fetch...
        time.advance(1001);
        for (const token of tokens) await expectRefused(keys.verify(token), 'unknown_key');
        expect(flooded.requests.jwks).toBe(2);

        // ... and so do 100 at once.
        time.advance(1001);
        const outcomes = await Promise.all(tokens.map((token) => keys.verify(token)));
        expect(outcomes.every((o) => o.kind === 'fail' && o.reason === 'unknown_key')).toBe(true);
        expect(flooded.requests.jwks).toBe(3);
        expect(flooded.requests.discovery).toBe(1);
      } finally {
        await flooded.close();
      }
    });

    it('concurrent misses share one fetch even without a rate limit', async () => {
      const shared = await startOidcProvider();
      try {
        const keys = verifierFor(shared.issuer, { OIDC_JWKS_MIN_REFRESH_SECONDS: '0' });
        const tokens = await Promise.all(
          Array.from({ length: 20 }, () => shared.token({ audience: AUDIENCE, subject: 'ada' })),
        );
        const outcomes = await Promise.all(tokens.map((token) => keys.verify(token)));
        expect(outcomes.every((o) => o.kind === 'success')).toBe(true);
        expect(shared.requests).toMatchObject({ discovery: 1, jwks: 1 });
      } finally {
        await shared.close();
      }
    });

    it('accepts 50 concurrent valid tokens on the first fetch and after a rotation, one fetch each', async () => {
      const busy = await startOidcProvider();
      try {
        const keys = verifierFor(busy.issuer, { OIDC_JWKS_MIN_REFRESH_SECONDS: '1' });
        const issue = () =>
          Promise.all(Array.from({ length: 50 }, (_, i) => busy.token({ audience: AUDIENCE, subject: `user-${i}` })));
        const accepted = async (tokens: string[]) =>
          (await Promise.all(tokens.map((token) => keys.verify(token)))).filter((o) => o.kind === 'success').length;

        // Nothing loaded yet: the first 50 requests arrive together and share one discovery and one fetch.
        expect(await accepted(await issue())).toBe(50);
        expect(busy.requests).toMatchObject({ discovery: 1, jwks: 1 });

        // A freshly rotated key, past the refresh rate limit: 50 at once, one fetch for all of them.
        busy.rotateKeys();
        const rotated = await issue();
        time.advance(1001);
        expect(await accepted(rotated)).toBe(50);
        expect(busy.requests.jwks).toBe(2);

        // Unknown kids right after do not reach the provider.
        const attacker = attackerKey();
        const bogus = Array.from({ length: 50 }, (_, i) =>
          forgeToken({
            header: { alg: 'RS256', kid: `rotated-${i}` },
            payload: { ...valid(), iss: busy.issuer },
            signWith: { privateKey: attacker.privateKey, alg: 'RS256' },
          }),
        );
        const outcomes = await Promise.all(bogus.map((token) => keys.verify(token)));
        expect(outcomes.every((o) => o.kind === 'fail' && o.reason === 'unknown_key')).toBe(true);
        expect(busy.requests).toMatchObject({ discovery: 1, jwks: 2 });
        expect(await accepted(rotated.slice(0, 5))).toBe(5);
      } finally {
        await busy.close();
      }
    });

    it('keeps the last good keys when the provider goes away', async () => {
      const fleeting = await startOidcProvider();
      const keys = verifierFor(fleeting.issuer, {
        OIDC_JWKS_MAX_AGE_SECONDS: '1',
        OIDC_JWKS_MIN_REFRESH_SECONDS: '0',
        OIDC_HTTP_TIMEOUT_MS: '1000',
      });
      const first = await fleeting.token({ audience: AUDIENCE, subject: 'ada' });
      const second = await fleeting.token({ audience: AUDIENCE, subject: 'ada' });
      expect((await keys.verify(first)).kind).toBe('success');
      await fleeting.close();
      time.advance(1001); // the keys are now older than their max age
      expect((await keys.verify(second)).kind).toBe('success');
      expect(keys.keys.readiness()).toMatchObject({ ready: true, keyCount: 1 });
      expect(keys.keys.readiness().lastError).toMatch(/fetching the (discovery document|JWKS) failed/);
    });

    describe('what a JWKS may contribute', () => {
      let jwksServer: Server;
      let jwksIssuer: string;
      let jwks: { keys: Record<string, unknown>[] } = { keys: [] };

      beforeAll(async () => {
        jwksServer = createServer((req, res) => {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(req.url === '/jwks' ? jwks : { issuer: jwksIssuer, jwks_uri: `${jwksIssuer}/jwks` }));
        });
        await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
        jwksIssuer = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}`;
      });

      afterAll(async () => {
        jwksServer.closeAllConnections();
        await new Promise((resolve) => jwksServer.close(resolve));
      });

      const rsa = (bits = 2048) => generateKeyPairSync('rsa', { modulusLength: bits });
      const publicJwk = (key: KeyObject, extra: Record<string, unknown>) => ({
        ...key.export({ format: 'jwk' }),
        ...extra,
      });

      it('imports only the public part of signature keys that fit the algorithm', async () => {
        const leaked = rsa();
        const enc = rsa();
        const wrap = rsa();
        const small = rsa(1024);
        const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
        jwks = {
          keys: [
            // A private JWK published by mistake: only its public members are imported.
            publicJwk(leaked.privateKey, { kid: 'leaked', use: 'sig' }),
            { kty: 'oct', k: Buffer.from('a-shared-secret').toString('base64url'), kid: 'oct' },
            publicJwk(enc.publicKey, { kid: 'enc', use: 'enc' }),
            publicJwk(wrap.publicKey, { kid: 'wrap', key_ops: ['wrapKey'] }),
            publicJwk(small.publicKey, { kid: 'small' }),
            publicJwk(ec.publicKey, { kid: 'ec' }),
            { kty: 'EC', crv: 'P-256', kid: 'broken', x: 'AAAA', y: 'AAAA' },
          ],
        };
        const source = verifierFor(jwksIssuer);
        const payload = { ...valid(), iss: jwksIssuer };
        const signed = (kid: string, alg: 'RS256' | 'ES256' | 'ES384', privateKey: KeyObject) =>
          forgeToken({ header: { alg, kid }, payload, signWith: { privateKey, alg } });
        expect((await source.verify(signed('leaked', 'RS256', leaked.privateKey))).kind).toBe('success');
        expect(source.keys.readiness()).toMatchObject({ ready: true, keyCount: 2 }); // leaked and ec
        const refused: [string, 'RS256' | 'ES256' | 'ES384', KeyObject][] = [
          ['oct', 'RS256', leaked.privateKey],
          ['enc', 'RS256', enc.privateKey],
          ['wrap', 'RS256', wrap.privateKey],
          ['small', 'RS256', small.privateKey],
          ['ec', 'ES384', generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey],
          ['ec', 'RS256', leaked.privateKey],
          ['broken', 'ES256', ec.privateKey],
        ];
        for (const [kid, alg, privateKey] of refused) {
          await expectRefused(source.verify(signed(kid, alg, privateKey)), 'unknown_key');
        }
        expect((await source.verify(signed('ec', 'ES256', ec.privateKey))).kind).toBe('success');
      });

      it('accepts a token without kid only when exactly one published key fits its alg', async () => {
        const only = rsa();
        const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
        jwks = { keys: [publicJwk(only.publicKey, { kid: 'only', use: 'sig' }), publicJwk(ec.publicKey, {})] };
        const payload = { ...valid(), iss: jwksIssuer };
        const kidless = forgeToken({
          header: { alg: 'RS256' },
          payload,
          signWith: { privateKey: only.privateKey, alg: 'RS256' },
        });
        expect((await verifierFor(jwksIssuer).verify(kidless)).kind).toBe('success');

        jwks = { keys: [...jwks.keys, publicJwk(rsa().publicKey, { kid: 'second' })] };
        await expectRefused(verifierFor(jwksIssuer).verify(kidless), 'unknown_key');
      });
    });

    describe('when no keys can be loaded', () => {
      let stub: Server;
      let stubUrl: string;
      const hanging: Server[] = [];

      beforeAll(async () => {
        // A discovery document naming another issuer than the one it is served for.
        stub = createServer((_req, res) => {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ issuer: 'https://impostor.example', jwks_uri: idp.jwksUri }));
        });
        await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
        stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
      });

      afterAll(async () => {
        for (const server of [stub, ...hanging]) {
          server.closeAllConnections();
          await new Promise((resolve) => server.close(resolve));
        }
      });

      const forgedFor = (issuer: string): string => {
        const { kid, alg, privateKey } = idp.signingKey;
        return forgeToken({
          header: { alg, kid },
          payload: { ...valid(), iss: issuer },
          signWith: { privateKey, alg },
        });
      };

      it('refuses a discovery document whose issuer differs from the configured one', async () => {
        const keys = verifierFor(stubUrl);
        await expectRefused(keys.verify(forgedFor(stubUrl)), 'keys_unavailable');
        expect(keys.keys.readiness()).toMatchObject({ ready: false, keyCount: 0 });
        expect(keys.keys.readiness().lastError).toMatch(/another issuer/);
      });

      it('gives up on an unreachable provider, and does not retry within the rate limit', async () => {
        const gone = await startOidcProvider();
        await gone.close();
        const keys = verifierFor(gone.issuer);
        await expectRefused(keys.verify(forgedFor(gone.issuer)), 'keys_unavailable');
        await expectRefused(keys.verify(forgedFor(gone.issuer)), 'keys_unavailable');
        expect(keys.keys.readiness()).toMatchObject({ ready: false, fetches: 1 });
      });

      // Without the timeout the call would hang: the test's own bound fails it then.
      it('times out on a provider that never answers', async () => {
        const silent = createServer(() => undefined);
        hanging.push(silent);
        await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
        const issuer = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
        const keys = verifierFor(issuer, { OIDC_HTTP_TIMEOUT_MS: '200' });
        await expectRefused(keys.verify(forgedFor(issuer)), 'keys_unavailable');
        expect(keys.keys.readiness().lastError).toMatch(/timed out after 200 ms/);
      }, 30_000);
    });
  });
});
