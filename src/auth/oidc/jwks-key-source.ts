/**
 * The issuer's signing keys, from its discovery document's `jwks_uri` (SPEC.md §8: rotation handled).
 *
 * jose's remote key set holds them: it picks the key for a token's `kid` and `alg` (kty, curve, `use`
 * and `key_ops` must fit; without `kid`, exactly one key may fit), refreshes keys older than
 * jwksMaxAgeSeconds, refreshes on an unknown `kid` at most once per jwksMinRefreshSeconds after a
 * successful fetch, and lets concurrent misses share one fetch. This class adds what jose leaves to
 * its caller:
 * - discovery: the `jwks_uri` comes from `<issuer>/.well-known/openid-configuration`, whose `issuer`
 *   must be the configured one exactly, and is discovered again after a failed fetch;
 * - the fetch itself (jose's `customFetch`): no redirects, a timeout, a size cap, JSON only, and only
 *   the public members of keys usable for signatures handed on (private members such as `d` dropped;
 *   `oct` keys, RSA keys under 2048 bits, keys not for signatures and keys that do not import skipped);
 * - failures: a failed fetch keeps the last good keys, and after one no fetch is attempted for
 *   jwksMinRefreshSeconds (jose would try again on every token), so an IdP outage costs it one
 *   request per interval and a token one lookup in the kept keys;
 * - the product's reasons (`unknown_key`, `keys_unavailable`) and readiness for diagnostics.
 */
import { createPublicKey } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  type CryptoKey,
  type JSONWebKeySet,
  type JWK,
  type RemoteJWKSet,
} from 'jose';
import { OIDC_SETTINGS, type OidcSettings } from './oidc.settings.js';
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

/** Discovery documents and key sets are small; anything larger is refused. */
const MAX_DOCUMENT_BYTES = 512 * 1024;
const MIN_RSA_BITS = 2048;

/** A discovery or JWKS request that failed (network, status, size, content): the IdP's problem, not the token's. */
class KeyFetchFailure extends Error {
  override readonly name = 'KeyFetchFailure';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The public members of a JWK, or undefined for key types that cannot verify a signature. */
function publicMembers(jwk: Record<string, unknown>): JWK | undefined {
  switch (jwk.kty) {
    case 'RSA':
      return { kty: 'RSA', n: jwk.n, e: jwk.e } as JWK;
    case 'EC':
      return { kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y } as JWK;
    case 'OKP':
      return { kty: 'OKP', crv: jwk.crv, x: jwk.x } as JWK;
    default:
      return undefined;
  }
}

/**
 * The keys of a JWKS document that may verify signatures, reduced to their public members plus the
 * `kid`, `alg`, `use` and `key_ops` jose selects by. Throws when the document is no JWKS.
 */
function signatureKeys(document: unknown): { keys: JWK[]; skipped: number } {
  if (!isRecord(document) || !Array.isArray(document.keys)) throw new KeyFetchFailure('the JWKS has no "keys" array');
  const keys: JWK[] = [];
  let skipped = 0;
  for (const jwk of document.keys as unknown[]) {
    if (!isRecord(jwk)) {
      skipped += 1;
      continue;
    }
    const forSignatures =
      (jwk.use === undefined || jwk.use === 'sig') &&
      (jwk.key_ops === undefined || (Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify')));
    const members = publicMembers(jwk);
    if (!forSignatures || !members || (jwk.kid !== undefined && typeof jwk.kid !== 'string')) {
      skipped += 1;
      continue;
    }
    try {
      const key = createPublicKey({ key: members as never, format: 'jwk' });
      if (key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) {
        skipped += 1;
        continue;
      }
    } catch {
      skipped += 1;
      continue;
    }
    keys.push({
      ...members,
      ...(typeof jwk.kid === 'string' ? { kid: jwk.kid } : {}),
      ...(typeof jwk.alg === 'string' ? { alg: jwk.alg } : {}),
      ...(jwk.use === 'sig' ? { use: 'sig' } : {}),
      ...(jwk.key_ops !== undefined ? { key_ops: ['verify'] } : {}),
    });
  }
  return { keys, skipped };
}

/**
 * The product's reason for what jose's key lookup threw: no key fits (JWKSNoMatchingKey), or several
 * fit a token without `kid` (JWKSMultipleMatchingKeys, never tried one by one), or a key fits but
 * does not import.
 */
function lookupRejection(error: unknown): TokenRejectedError {
  if (error instanceof TokenRejectedError) return error;
  return new TokenRejectedError('unknown_key', 'No published signing key matches the token header');
}

@Injectable()
export class JwksKeySource {
  private readonly logger = new Logger(JwksKeySource.name);
  private readonly discoveryUrl: string;
  /** jose's key set for the discovered `jwks_uri`; undefined until discovered, and after a failed fetch. */
  private remote: RemoteJWKSet | undefined;
  private discovering: Promise<RemoteJWKSet> | undefined;
  private jwksUri: string | undefined;
  /** The keys of the last successful fetch, looked up when the IdP cannot be reached. */
  private lastGood: { lookup: ReturnType<typeof createLocalJWKSet>; keyCount: number } | undefined;
  private loadedAt: number | undefined;
  private lastAttemptAt: number | undefined;
  private lastError: string | undefined;
  private fetches = 0;

  constructor(@Inject(OIDC_SETTINGS) private readonly settings: JwksKeySourceSettings) {
    // OIDC Discovery §4: a terminating "/" of the issuer is removed before appending the well-known path.
    this.discoveryUrl = `${settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  }

  /**
   * The key that verifies a token signed with `alg` under `kid`. A token without `kid` is accepted
   * only when exactly one published signing key fits `alg`. Rejects with a TokenRejectedError
   * (`unknown_key`, or `keys_unavailable` when no keys could ever be loaded).
   */
  async getKey(kid: string | undefined, alg: string): Promise<CryptoKey> {
    const header = kid === undefined ? { alg } : { alg, kid };
    if (!this.holdingOff()) {
      try {
        const remote = this.remote ?? (await this.discover());
        return await remote(header);
      } catch (error) {
        if (!(error instanceof KeyFetchFailure)) throw lookupRejection(error);
        // The IdP could not be reached: answer from the keys already loaded, if any.
      }
    }
    if (!this.lastGood) {
      throw new TokenRejectedError('keys_unavailable', "The issuer's signing keys could not be loaded");
    }
    try {
      return await this.lastGood.lookup(header);
    } catch (error) {
      throw lookupRejection(error);
    }
  }

  /** Loads the keys now unless an attempt was made within jwksMinRefreshSeconds; for a warm-up at boot. */
  async refreshIfDue(): Promise<void> {
    if (
      this.lastAttemptAt !== undefined &&
      Date.now() - this.lastAttemptAt < this.settings.jwksMinRefreshSeconds * 1000
    ) {
      return;
    }
    try {
      await (this.remote ?? (await this.discover())).reload();
    } catch (error) {
      if (!(error instanceof KeyFetchFailure)) throw error;
    }
  }

  /** For diagnostics: did we ever load keys, how many, from where, and the last error. */
  readiness(): JwksReadiness {
    return {
      ready: this.lastGood !== undefined,
      keyCount: this.lastGood?.keyCount ?? 0,
      jwksUri: this.jwksUri,
      loadedAt: this.loadedAt === undefined ? undefined : new Date(this.loadedAt),
      lastError: this.lastError,
      fetches: this.fetches,
    };
  }

  /** True while the last attempt failed less than jwksMinRefreshSeconds ago: no request now. */
  private holdingOff(): boolean {
    return (
      this.lastError !== undefined &&
      this.lastAttemptAt !== undefined &&
      Date.now() - this.lastAttemptAt < this.settings.jwksMinRefreshSeconds * 1000
    );
  }

  /** Reads the discovery document (once for concurrent callers) and sets up jose's key set for its `jwks_uri`. */
  private discover(): Promise<RemoteJWKSet> {
    this.discovering ??= this.discoverJwksUri()
      .then((jwksUri) => {
        this.jwksUri = jwksUri;
        this.remote = createRemoteJWKSet(new URL(jwksUri), {
          timeoutDuration: this.settings.httpTimeoutMs,
          cooldownDuration: this.settings.jwksMinRefreshSeconds * 1000,
          cacheMaxAge: this.settings.jwksMaxAgeSeconds * 1000,
          [customFetch]: (url: string, init: { signal: AbortSignal }) => this.fetchJwks(url, init.signal),
        });
        return this.remote;
      })
      .finally(() => {
        this.discovering = undefined;
      });
    return this.discovering;
  }

  private async discoverJwksUri(): Promise<string> {
    const document = await this.fetchJson(this.discoveryUrl, 'discovery document');
    try {
      if (!isRecord(document)) throw new KeyFetchFailure('the discovery document is not a JSON object');
      if (document.issuer !== this.settings.issuer) {
        throw new KeyFetchFailure(`the discovery document names another issuer than the configured OIDC_ISSUER_URL`);
      }
      const jwksUri = document.jwks_uri;
      const url = typeof jwksUri === 'string' ? URL.parse(jwksUri) : null;
      if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
        throw new KeyFetchFailure('the discovery document has no http(s) jwks_uri');
      }
      return url.href;
    } catch (error) {
      throw this.failed(error as KeyFetchFailure);
    }
  }

  /**
   * jose's fetch of the JWKS: the document, vetted and reduced to public signature keys, as the
   * 200 response jose expects. Every failure is a KeyFetchFailure, recorded and logged here.
   */
  private async fetchJwks(url: string, signal: AbortSignal): Promise<Response> {
    const document = await this.fetchJson(url, 'JWKS', signal);
    let keys: JWK[];
    try {
      const found = signatureKeys(document);
      keys = found.keys;
      if (found.skipped > 0) {
        this.logger.debug(`Skipped ${found.skipped} JWKS entr(y/ies) not usable for signature verification`);
      }
    } catch (error) {
      throw this.failed(error as KeyFetchFailure);
    }
    const jwks: JSONWebKeySet = { keys };
    this.lastGood = { lookup: createLocalJWKSet(jwks), keyCount: keys.length };
    this.loadedAt = Date.now();
    this.lastError = undefined;
    this.logger.log(`Loaded ${keys.length} signing key(s) from ${url}`);
    return Response.json(jwks);
  }

  private async fetchJson(
    url: string,
    what: string,
    signal = AbortSignal.timeout(this.settings.httpTimeoutMs),
  ): Promise<unknown> {
    this.fetches += 1;
    this.lastAttemptAt = Date.now();
    let response: Response;
    try {
      response = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'error', signal });
    } catch (error) {
      const cause =
        (error as Error).name === 'TimeoutError'
          ? `timed out after ${this.settings.httpTimeoutMs} ms`
          : (error as Error).message;
      throw this.failed(new KeyFetchFailure(`fetching the ${what} failed: ${cause}`));
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw this.failed(new KeyFetchFailure(`fetching the ${what} answered HTTP ${response.status}`));
    }
    const declared = Number(response.headers.get('content-length') ?? 0);
    if (declared > MAX_DOCUMENT_BYTES) {
      await response.body?.cancel();
      throw this.failed(new KeyFetchFailure(`the ${what} is larger than ${MAX_DOCUMENT_BYTES} bytes`));
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      const cause =
        (error as Error).name === 'TimeoutError'
          ? `timed out after ${this.settings.httpTimeoutMs} ms`
          : (error as Error).message;
      throw this.failed(new KeyFetchFailure(`fetching the ${what} failed: ${cause}`));
    }
    if (text.length > MAX_DOCUMENT_BYTES) {
      throw this.failed(new KeyFetchFailure(`the ${what} is larger than ${MAX_DOCUMENT_BYTES} bytes`));
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw this.failed(new KeyFetchFailure(`the ${what} is not JSON`));
    }
  }

  /** Records and logs a failed attempt; the `jwks_uri` is discovered again next time (it may have moved). */
  private failed(error: KeyFetchFailure): KeyFetchFailure {
    this.remote = undefined;
    this.jwksUri = undefined;
    this.lastError = error.message;
    this.logger.warn(
      `Could not refresh the signing keys of ${this.settings.issuer} (${this.lastError}); ` +
        `${this.lastGood?.keyCount ?? 0} previously loaded key(s) stay in use`,
    );
    return error;
  }
}
