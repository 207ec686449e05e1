/**
 * The issuer's signing keys, from its discovery document's `jwks_uri` (docs/protocol.md §8: rotation handled).
 *
 * Keys are cached by `kid` and refreshed when older than jwksMaxAgeSeconds. An unknown `kid` (key
 * rotation) triggers a refresh, but at most one per jwksMinRefreshSeconds, and concurrent misses
 * share one fetch, so a flood of tokens with made-up kids cannot make us hammer the IdP. A failed
 * fetch keeps the last good keys. Only public parameters of each JWK are imported: private members
 * (`d`, …) are ignored; symmetric (`oct`) keys, RSA keys under 2048 bits and keys not meant for
 * signatures are skipped.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
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

interface CachedKey {
  readonly kid: string | undefined;
  /** The JWK's `alg`, when it pins one. */
  readonly alg: string | undefined;
  readonly key: KeyObject;
}

/** Discovery documents and key sets are small; anything larger is refused. */
const MAX_DOCUMENT_BYTES = 512 * 1024;
const MIN_RSA_BITS = 2048;
const EC_CURVES: Record<string, string> = { ES256: 'prime256v1', ES384: 'secp384r1', ES512: 'secp521r1' };

/** True when `key` may verify `alg`: RSA of 2048 bits or more for RSxxx and PSxxx, the matching curve for ESxxx, OKP for EdDSA. */
export function keyFitsAlgorithm(key: KeyObject, alg: string): boolean {
  const type = key.asymmetricKeyType;
  if (/^(RS|PS)(256|384|512)$/.test(alg)) {
    return type === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= MIN_RSA_BITS;
  }
  if (alg in EC_CURVES) return type === 'ec' && key.asymmetricKeyDetails?.namedCurve === EC_CURVES[alg];
  if (alg === 'EdDSA') return type === 'ed25519' || type === 'ed448';
  return false;
}

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

@Injectable()
export class JwksKeySource {
  private readonly logger = new Logger(JwksKeySource.name);
  private readonly discoveryUrl: string;
  private keys: CachedKey[] = [];
  private jwksUri: string | undefined;
  private loadedAt: number | undefined;
  private lastAttemptAt: number | undefined;
  private lastError: string | undefined;
  private fetches = 0;
  private inflight: Promise<void> | undefined;

  constructor(@Inject(OIDC_SETTINGS) private readonly settings: JwksKeySourceSettings) {
    // OIDC Discovery §4: a terminating "/" of the issuer is removed before appending the well-known path.
    this.discoveryUrl = `${settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
  }

  /**
   * The key that verifies a token signed with `alg` under `kid`. A token without `kid` is accepted
   * only when exactly one published signing key fits `alg`. Rejects with a TokenRejectedError
   * (`unknown_key`, or `keys_unavailable` when no keys could ever be loaded).
   */
  async getKey(kid: string | undefined, alg: string): Promise<KeyObject> {
    const now = Date.now();
    if (this.loadedAt === undefined || now - this.loadedAt > this.settings.jwksMaxAgeSeconds * 1000) {
      await this.refreshIfDue();
    }
    let key = this.find(kid, alg);
    // An unknown kid may be a freshly rotated key: look again, within the refresh rate limit.
    if (!key && kid !== undefined && !this.keys.some((k) => k.kid === kid)) {
      await this.refreshIfDue();
      key = this.find(kid, alg);
    }
    if (key) return key;
    if (this.loadedAt === undefined) {
      throw new TokenRejectedError('keys_unavailable', "The issuer's signing keys could not be loaded");
    }
    throw new TokenRejectedError('unknown_key', 'No published signing key matches the token header');
  }

  /** Loads the keys now unless a load happened within jwksMinRefreshSeconds; for a warm-up at boot. */
  async refreshIfDue(): Promise<void> {
    if (this.inflight) return this.inflight;
    const now = Date.now();
    if (this.lastAttemptAt !== undefined && now - this.lastAttemptAt < this.settings.jwksMinRefreshSeconds * 1000) {
      return;
    }
    this.lastAttemptAt = now;
    this.inflight = this.load().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  /** For diagnostics: did we ever load keys, how many, from where, and the last error. */
  readiness(): JwksReadiness {
    return {
      ready: this.loadedAt !== undefined,
      keyCount: this.keys.length,
      jwksUri: this.jwksUri,
      loadedAt: this.loadedAt === undefined ? undefined : new Date(this.loadedAt),
      lastError: this.lastError,
      fetches: this.fetches,
    };
  }

  private find(kid: string | undefined, alg: string): KeyObject | undefined {
    const fits = this.keys.filter((k) => (k.alg === undefined || k.alg === alg) && keyFitsAlgorithm(k.key, alg));
    if (kid === undefined) return fits.length === 1 ? fits[0].key : undefined;
    return fits.find((k) => k.kid === kid)?.key;
  }

  /** Never rejects: a failure is logged and the last good keys stay. */
  private async load(): Promise<void> {
    try {
      if (this.jwksUri === undefined) this.jwksUri = await this.discoverJwksUri();
      const keys = this.parseJwks(await this.fetchJson(this.jwksUri, 'JWKS'));
      this.keys = keys;
      this.loadedAt = Date.now();
      this.lastError = undefined;
      this.logger.log(`Loaded ${keys.length} signing key(s) from ${this.jwksUri}`);
    } catch (error) {
      // The jwks_uri may have moved: discover it again next time.
      this.jwksUri = undefined;
      this.lastError = (error as Error).message;
      this.logger.warn(
        `Could not refresh the signing keys of ${this.settings.issuer} (${this.lastError}); ` +
          `${this.keys.length} previously loaded key(s) stay in use`,
      );
    }
  }

  private async discoverJwksUri(): Promise<string> {
    const document = await this.fetchJson(this.discoveryUrl, 'discovery document');
    if (!isRecord(document)) throw new Error('the discovery document is not a JSON object');
    if (document.issuer !== this.settings.issuer) {
      throw new Error(`the discovery document names another issuer than the configured OIDC_ISSUER_URL`);
    }
    const jwksUri = document.jwks_uri;
    const url = typeof jwksUri === 'string' ? URL.parse(jwksUri) : null;
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      throw new Error('the discovery document has no http(s) jwks_uri');
    }
    return url.href;
  }

  private async fetchJson(url: string, what: string): Promise<unknown> {
    this.fetches += 1;
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { accept: 'application/json' },
        redirect: 'error',
        signal: AbortSignal.timeout(this.settings.httpTimeoutMs),
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

  private parseJwks(document: unknown): CachedKey[] {
    if (!isRecord(document) || !Array.isArray(document.keys)) throw new Error('the JWKS has no "keys" array');
    const keys: CachedKey[] = [];
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
        keys.push({ kid: jwk.kid as string | undefined, alg: typeof jwk.alg === 'string' ? jwk.alg : undefined, key });
      } catch {
        skipped += 1;
      }
    }
    if (skipped > 0) this.logger.debug(`Skipped ${skipped} JWKS entr(y/ies) not usable for signature verification`);
    return keys;
  }
}
