/**
 * A real OpenID provider for tests (oidc-provider 9) on a free loopback port, and forgers of attack
 * tokens for the negative cases.
 *
 * Tokens come from the provider itself: the client_credentials grant with a resource indicator,
 * whose resource server is configured for JWT access tokens with audience = the requested audience.
 * The test's choices (subject, extra claims such as groups, lifetime) travel to the provider's
 * hooks in a request header that only this harness sends.
 *
 *   const idp = await startOidcProvider();
 *   const token = await idp.token({ audience: 'cleveragents', subject: 'ada', groups: ['acme-admins'] });
 */
import {
  constants,
  createHmac,
  createPrivateKey,
  createSign,
  generateKeyPairSync,
  randomUUID,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, {
  type AdapterFactory,
  type AdapterPayload,
  type Configuration,
  type KoaContextWithOIDC,
} from 'oidc-provider';

export type ProviderAlgorithm = 'RS256' | 'ES256';

export interface OidcProviderOptions {
  /** Signing algorithm of the provider's key (RS256 unless told). */
  alg?: ProviderAlgorithm;
  /** Lifetime of tokens whose request names none (300 s unless told). */
  defaultTtlSeconds?: number;
}

export interface TokenRequest {
  /** The `aud` of the token (the resource indicator it is requested for). */
  audience: string;
  /** The `sub`; the client id when omitted. */
  subject?: string;
  /** The `groups` claim. */
  groups?: string[] | string;
  /** Further top-level claims (they do not override the provider's registered claims). */
  claims?: Record<string, unknown>;
  ttlSeconds?: number;
}

export interface SigningKey {
  readonly kid: string;
  readonly alg: ProviderAlgorithm;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** The private JWK, as the provider holds it. */
  readonly privateJwk: JsonWebKey & { kid: string; alg: string; use: string };
}

export interface TestOidcProvider {
  /** `http://127.0.0.1:<port>`, exactly the provider's `issuer`. */
  readonly issuer: string;
  readonly jwksUri: string;
  /** The key new tokens are signed with (changes on rotateKeys()). */
  readonly signingKey: SigningKey;
  /** The provider's current private JWKS. */
  readonly privateJwks: { keys: SigningKey['privateJwk'][] };
  /** Requests served so far, by route. */
  readonly requests: { discovery: number; jwks: number; token: number };
  /** A real access token issued by the provider through the client_credentials grant. */
  token(request: TokenRequest): Promise<string>;
  /** Replaces the signing key with a new one (new kid); the JWKS then publishes only the new key. */
  rotateKeys(): void;
  close(): Promise<void>;
}

const CLIENT_ID = 'cleveragents-tests';
const CLIENT_SECRET = 'a-client-secret-only-for-tests';
const REQUEST_HEADER = 'x-test-token-request';

interface EncodedRequest {
  subject?: string;
  claims: Record<string, unknown>;
  ttlSeconds?: number;
}

function generateSigningKey(alg: ProviderAlgorithm): SigningKey {
  const { privateKey, publicKey } =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = `test-${randomUUID()}`;
  const privateJwk = { ...privateKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, privateJwk };
}

/** Resource indicators must be absolute URIs; other audiences travel inside a URN. */
const AUDIENCE_URN = 'urn:x-cleveragents-test:audience:';
const resourceFor = (audience: string): string =>
  URL.parse(audience) && !audience.includes('#') ? audience : `${AUDIENCE_URN}${encodeURIComponent(audience)}`;
const audienceFor = (resource: string): string =>
  resource.startsWith(AUDIENCE_URN) ? decodeURIComponent(resource.slice(AUDIENCE_URN.length)) : resource;

function requestOf(ctx: KoaContextWithOIDC): EncodedRequest {
  const header = ctx.get(REQUEST_HEADER);
  return header ? (JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as EncodedRequest) : { claims: {} };
}

/** A plain in-memory store; passing one keeps the provider from warning about its built-in one. */
function memoryAdapter(): AdapterFactory {
  const store = new Map<string, AdapterPayload>();
  return (model) => ({
    upsert: (id, payload) => {
      store.set(`${model}:${id}`, payload);
      return Promise.resolve();
    },
    find: (id) => Promise.resolve(store.get(`${model}:${id}`)),
    findByUserCode: () => Promise.resolve(undefined),
    findByUid: () => Promise.resolve(undefined),
    consume: (id) => {
      const payload = store.get(`${model}:${id}`);
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      return Promise.resolve();
    },
    destroy: (id) => {
      store.delete(`${model}:${id}`);
      return Promise.resolve();
    },
    revokeByGrantId: () => Promise.resolve(),
  });
}

function buildProvider(issuer: string, key: SigningKey, defaultTtlSeconds: number): Provider {
  const configuration: Configuration = {
    adapter: memoryAdapter(),
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      },
    ],
    jwks: { keys: [key.privateJwk] },
    clientDefaults: { id_token_signed_response_alg: key.alg },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => false,
        getResourceServerInfo: (ctx, resourceIndicator) => ({
          scope: '',
          audience: audienceFor(resourceIndicator),
          accessTokenFormat: 'jwt',
          accessTokenTTL: requestOf(ctx).ttlSeconds ?? defaultTtlSeconds,
          jwt: { sign: { alg: key.alg } },
        }),
      },
    },
    ttl: {
      ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? defaultTtlSeconds,
    },
    extraTokenClaims: (ctx) => requestOf(ctx).claims,
    formats: {
      customizers: {
        jwt: (ctx, _token, parts) => {
          const { subject } = requestOf(ctx);
          if (subject !== undefined) parts.payload.sub = subject;
        },
      },
    },
  };
  return new Provider(issuer, configuration);
}

/** Starts a provider on 127.0.0.1 (a free port). */
export async function startOidcProvider(options: OidcProviderOptions = {}): Promise<TestOidcProvider> {
  const alg = options.alg ?? 'RS256';
  const defaultTtlSeconds = options.defaultTtlSeconds ?? 300;
  const requests = { discovery: 0, jwks: 0, token: 0 };
  // Koa's handler settles its own errors; its promise only says when the response is done.
  let handler: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined;

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/.well-known/openid-configuration') requests.discovery += 1;
    else if (path === '/jwks') requests.jwks += 1;
    else if (path === '/token') requests.token += 1;
    void handler!(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;

  let signingKey = generateSigningKey(alg);
  // The handler is swapped on rotation: the port, and so the issuer, stay the same.
  const install = (): void => {
    handler = buildProvider(issuer, signingKey, defaultTtlSeconds).callback();
  };
  install();

  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    get signingKey() {
      return signingKey;
    },
    get privateJwks() {
      return { keys: [signingKey.privateJwk] };
    },
    requests,
    async token(request) {
      const encoded: EncodedRequest = {
        subject: request.subject,
        claims: { ...request.claims, ...(request.groups !== undefined ? { groups: request.groups } : {}) },
        ttlSeconds: request.ttlSeconds,
      };
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          [REQUEST_HEADER]: Buffer.from(JSON.stringify(encoded)).toString('base64url'),
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource: resourceFor(request.audience) }),
      });
      const body = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!response.ok || !body.access_token) {
        throw new Error(`the test provider refused the token request: ${body.error}: ${body.error_description}`);
      }
      return body.access_token;
    },
    rotateKeys() {
      signingKey = generateSigningKey(alg);
      install();
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// Forged tokens, for the attacks a verifier must refuse. node:crypto only.

export type ForgeSigner =
  | 'none'
  | { hs256Secret: Buffer | string }
  | {
      privateKey: KeyObject;
      alg: 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512' | 'ES256' | 'ES384' | 'ES512';
    };

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The base64url JWS signature of `data` under `alg`. */
function signature(alg: string, key: KeyObject, data: string): string {
  const bits = Number(alg.slice(2));
  const signer = createSign(`sha${bits}`).update(data);
  if (alg.startsWith('PS')) {
    return signer.sign({ key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: bits / 8 }, 'base64url');
  }
  if (alg.startsWith('ES')) return signer.sign({ key, dsaEncoding: 'ieee-p1363' }, 'base64url');
  return signer.sign(key, 'base64url');
}

/**
 * A compact JWS with exactly `header` and `payload` (no `alg` is added for you), signed as told:
 * `'none'` leaves the signature empty, `hs256Secret` signs with HMAC-SHA256 over that secret (e.g.
 * the provider's public key as PEM or JWK text), `privateKey` signs with an asymmetric algorithm.
 */
export function forgeToken(input: {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  signWith: ForgeSigner;
}): string {
  const signingInput = `${b64url(input.header)}.${b64url(input.payload)}`;
  const { signWith } = input;
  if (signWith === 'none') return `${signingInput}.`;
  if ('hs256Secret' in signWith) {
    return `${signingInput}.${createHmac('sha256', signWith.hs256Secret).update(signingInput).digest('base64url')}`;
  }
  return `${signingInput}.${signature(signWith.alg, signWith.privateKey, signingInput)}`;
}

/** A fresh key pair the provider never saw, for tokens signed by an attacker. */
export function attackerKey(alg: 'RS256' | 'ES256' = 'RS256'): { privateKey: KeyObject; publicJwk: JsonWebKey } {
  const { privateKey, publicKey } =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKey, publicJwk: publicKey.export({ format: 'jwk' }) };
}

/** The private key of a private JWK (e.g. one of `privateJwks.keys`). */
export function privateKeyOf(jwk: JsonWebKey): KeyObject {
  return createPrivateKey({ key: jwk, format: 'jwk' });
}

/** Seconds since the epoch. */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);
