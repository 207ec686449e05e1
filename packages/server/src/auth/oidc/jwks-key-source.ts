/**
 * The issuer's signing keys (docs/protocol.md §8.1: keys rotate): the `jwks_uri` of its discovery document,
 * cached, refreshed and rate limited by jose's remote JWKS set. What jose leaves to us: discovery,
 * keeping the last good keys through an IdP outage, and which published keys may verify at all.
 */
import { createPublicKey } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWK,
  type JWTHeaderParameters,
} from 'jose';
import { OIDC_SETTINGS, type OidcSettings } from '../../config/oidc.settings.js';
import { TokenRejectedError } from './token-identity.js';

export type JwksKeySourceSettings = Pick<
  OidcSettings,
  'issuer' | 'jwksMinRefreshSeconds' | 'jwksMaxAgeSeconds' | 'httpTimeoutMs'
>;

export interface JwksReadiness {
  /** True once keys have been loaded at least once. */
  readonly ready: boolean;
  readonly keyCount: number;
  readonly jwksUri: string | undefined;
  readonly loadedAt: Date | undefined;
  /** Message of the last failed refresh, cleared by a successful one. */
  readonly lastError: string | undefined;
  /** Discovery and JWKS requests attempted so far. */
  readonly fetches: number;
}

type RemoteKeySet = ReturnType<typeof createRemoteJWKSet>;
type LocalKeySet = ReturnType<typeof createLocalJWKSet>;
type VerifyKey = Awaited<ReturnType<LocalKeySet>>;

/** Discovery documents and key sets are small; anything larger is refused. */
const MAX_DOCUMENT_BYTES = 512 * 1024;
const MIN_RSA_BITS = 2048;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The public members of a JWK, or undefined for key types that cannot verify a signature. */
function publicMembers(jwk: Record<string, unknown>): Record<string, unknown> | undefined {
  switch (jwk.kty) {
    case 'RSA':
      return { kty: 'RSA', n: jwk.n, e: jwk.e };
    case 'EC':
      return { kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y };
    case 'OKP':
      return { kty: 'OKP', crv: jwk.crv, x: jwk.x };
    default:
      return undefined;
  }
}

/**
 * The JWK as jose may see it: public members plus `kid`, `alg`, `use`, `key_ops`; undefined for a
 * symmetric key, a key not meant for signatures, an RSA key under 2048 bits or one that does not import.
 */
export function verificationJwk(jwk: unknown): JWK | undefined {
  if (!isRecord(jwk)) return undefined;
  const members = publicMembers(jwk);
  const forSignatures =
    (jwk.use === undefined || jwk.use === 'sig') &&
    (jwk.key_ops === undefined || (Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify')));
  if (!members || !forSignatures || (jwk.kid !== undefined && typeof jwk.kid !== 'string')) return undefined;
  try {
    const key = createPublicKey({ key: members as never, format: 'jwk' });
    if (key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) {
      return undefined;
    }
  } catch {
    return undefined;
  }
  const extra = { kid: jwk.kid, alg: typeof jwk.alg === 'string' ? jwk.alg : undefined, use: jwk.use };
  return Object.fromEntries(Object.entries({ ...members, ...extra }).filter(([, v]) => v !== undefined));
}

@Injectable()
export class JwksKeySource {
  private readonly logger = new Logger(JwksKeySource.name);
  private readonly discoveryUrl: string;
  private remote: RemoteKeySet | undefined;
  private discovering: Promise<void> | undefined;
  private lastGood: { keys: JSONWebKeySet; local: LocalKeySet; loadedAt: number } | undefined;
  private jwksUri: string | undefined;
  private failedAt: number | undefined;
  private lastError: string | undefined;
  private fetches = 0;

  constructor(@Inject(OIDC_SETTINGS) private readonly settings: JwksKeySourceSettings) {
    // OIDC Discovery §4: a terminating "/" of the issuer is removed before appending the well-known path.
    this.discoveryUrl = `${settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  }

  /**
   * jose's key resolver for jwtVerify. jose picks the key by `kid`, `alg`, key type, curve, `use` and
   * `key_ops`, refetches on an unknown key at most once per jwksMinRefreshSeconds and shares one fetch
   * among concurrent misses. After a failed load the last good keys serve until the next attempt.
   */
  readonly resolve = async (header: JWTHeaderParameters, token: FlattenedJWSInput): Promise<VerifyKey> => {
    const remote = await this.remoteSet();
    if (remote) {
      try {
        return await remote(header, token);
      } catch (error) {
        if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) throw error;
        this.noteFailure(error);
      }
    }
    if (!this.lastGood) {
      throw new TokenRejectedError('keys_unavailable', "The issuer's signing keys could not be loaded");
    }
    return this.lastGood.local(header, token);
  };

  /** Loads the keys now unless an attempt failed within jwksMinRefreshSeconds; for a warm-up at boot. */
  async refreshIfDue(): Promise<void> {
    const remote = await this.remoteSet();
    if (!remote || remote.coolingDown) return;
    await remote.reload().catch((error: unknown) => this.noteFailure(error));
  }

  /** For diagnostics: did we ever load keys, how many, from where, and the last error. */
  readiness(): JwksReadiness {
    return {
      ready: this.lastGood !== undefined,
      keyCount: this.lastGood?.keys.keys.length ?? 0,
      jwksUri: this.jwksUri,
      loadedAt: this.lastGood === undefined ? undefined : new Date(this.lastGood.loadedAt),
      lastError: this.lastError,
      fetches: this.fetches,
    };
  }

  /** jose's key set for the discovered jwks_uri; undefined while the last failure is recent. */
  private async remoteSet(): Promise<RemoteKeySet | undefined> {
    if (this.remote) return this.remote;
    if (this.failedAt !== undefined && Date.now() - this.failedAt < this.settings.jwksMinRefreshSeconds * 1000) {
      return undefined;
    }
    this.discovering ??= this.discover().finally(() => {
      this.discovering = undefined;
    });
    await this.discovering;
    return this.remote;
  }

  /** Never rejects: a failure is noted and retried after jwksMinRefreshSeconds. */
  private async discover(): Promise<void> {
    try {
      const document = await this.fetchJson(this.discoveryUrl, 'discovery document');
      if (!isRecord(document)) throw new Error('the discovery document is not a JSON object');
      if (document.issuer !== this.settings.issuer) {
        throw new Error(`the discovery document names another issuer than the configured OIDC_ISSUER_URL`);
      }
      const url = typeof document.jwks_uri === 'string' ? URL.parse(document.jwks_uri) : null;
      if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
        throw new Error('the discovery document has no http(s) jwks_uri');
      }
      this.jwksUri = url.href;
      this.remote = createRemoteJWKSet(url, {
        cooldownDuration: this.settings.jwksMinRefreshSeconds * 1000,
        cacheMaxAge: this.settings.jwksMaxAgeSeconds * 1000,
        timeoutDuration: this.settings.httpTimeoutMs,
        [customFetch]: (href: string, init: RequestInit) => this.fetchKeySet(href, init),
      });
    } catch (error) {
      this.noteFailure(error);
    }
  }

  /** jose's fetch: our size limit and redirect refusal, and only keys fit to verify reach jose. */
  private async fetchKeySet(url: string, init: RequestInit): Promise<Response> {
    const document = await this.fetchJson(url, 'JWKS', init.signal ?? undefined);
    if (!isRecord(document) || !Array.isArray(document.keys)) throw new Error('the JWKS has no "keys" array');
    const keys: JWK[] = [];
    for (const jwk of document.keys as unknown[]) {
      const usable = verificationJwk(jwk);
      if (usable) keys.push(usable);
    }
    const skipped = document.keys.length - keys.length;
    if (skipped > 0) this.logger.debug(`Skipped ${skipped} JWKS entr(y/ies) not usable for signature verification`);
    const keySet = { keys };
    this.lastGood = { keys: keySet, local: createLocalJWKSet(keySet), loadedAt: Date.now() };
    this.failedAt = undefined;
    this.lastError = undefined;
    this.logger.log(`Loaded ${keys.length} signing key(s) from ${url}`);
    return Response.json(keySet);
  }

  private noteFailure(error: unknown): void {
    this.failedAt = Date.now();
    this.lastError = (error as Error).message;
    // The jwks_uri may have moved: discover it again at the next attempt.
    this.remote = undefined;
    this.logger.warn(
      `Could not refresh the signing keys of ${this.settings.issuer} (${this.lastError}); ` +
        `${this.lastGood?.keys.keys.length ?? 0} previously loaded key(s) stay in use`,
    );
  }

  private async fetchJson(url: string, what: string, signal?: AbortSignal): Promise<unknown> {
    this.fetches += 1;
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { accept: 'application/json' },
        redirect: 'error',
        signal: signal ?? AbortSignal.timeout(this.settings.httpTimeoutMs),
      });
    } catch (error) {
      const cause =
        (error as Error).name === 'TimeoutError'
          ? `timed out after ${this.settings.httpTimeoutMs} ms`
          : (error as Error).message;
      throw new Error(`fetching the ${what} failed: ${cause}`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`fetching the ${what} answered HTTP ${response.status}`);
    }
    const declared = Number(response.headers.get('content-length') ?? 0);
    if (declared > MAX_DOCUMENT_BYTES) {
      await response.body?.cancel();
      throw new Error(`the ${what} is larger than ${MAX_DOCUMENT_BYTES} bytes`);
    }
    const text = await response.text();
    if (text.length > MAX_DOCUMENT_BYTES) throw new Error(`the ${what} is larger than ${MAX_DOCUMENT_BYTES} bytes`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new Error(`the ${what} is not JSON`);
    }
  }
}
