/**
 * Verification of a JWT bearer token issued by the configured OpenID provider (the `oidc`, `oauth2`
 * and `bearer` schemes, SPEC.md §8), with jose's `jwtVerify`, and the identity it stands for.
 *
 * Before any key lookup the header is vetted: its `alg` must be one of the configured asymmetric
 * algorithms (so `none` and HS256 signed with our public key never reach a key), and headers that
 * would let the token name its own key (`jku`, `jwk`, `x5u`, `x5c`) or demand extensions (`crit`)
 * are refused, as is a token naming another issuer (before it can cost a JWKS refresh). jose never
 * follows `jku`/`x5u` nor trusts an embedded `jwk` anyway; the refusal is ours so that each has its
 * own reason. The key comes from the issuer's JWKS only (JwksKeySource); `jwtVerify` then checks the
 * signature, `alg`, `iss`, `aud`, `exp` and `nbf` (with the configured clock tolerance). `exp` and
 * the subject claim are required last. Every refusal is a TokenRejectedError with a machine-readable
 * reason (docs/errors.md: TOKEN_*).
 */
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import { JwksKeySource } from './jwks-key-source.js';
import type { OidcSettings } from './oidc.settings.js';
import {
  claimAt,
  displayNameFromClaims,
  grantsFromClaims,
  TokenRejectedError,
  type TokenFailureReason,
  type TokenIdentity,
} from './token-identity.js';

/** Header parameters that let a token point at or carry its own key, or require extensions we do not implement. */
const FORBIDDEN_HEADERS = ['jku', 'jwk', 'x5u', 'x5c', 'crit'] as const;

/** True when `token` has the shape of a JWS compact serialization (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/** The product's reason for what verification threw: our own rejections, or jose's errors. */
export function rejectionFrom(error: unknown): TokenRejectedError {
  if (error instanceof TokenRejectedError) return error;
  return new TokenRejectedError(reasonOf(error));
}

function reasonOf(error: unknown): TokenFailureReason {
  if (error instanceof errors.JWTExpired) return 'token_expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    // `invalid`: a claim of the wrong type (e.g. a string `exp`); `missing` / `check_failed`: its value.
    if (error.reason === 'invalid') return 'malformed_token';
    if (error.claim === 'aud') return 'invalid_audience';
    if (error.claim === 'iss') return 'invalid_issuer';
    if (error.claim === 'nbf') return 'token_not_yet_valid';
    return 'invalid_token';
  }
  // Header and claims were decoded before jwtVerify ran, so the part it can still find undecodable
  // (JWSInvalid) is the signature: an invalid signature, as it always was.
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWSInvalid) {
    return 'invalid_signature';
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return 'algorithm_not_allowed';
  if (error instanceof errors.JWTInvalid) return 'malformed_token';
  return 'invalid_token';
}

export class JwtVerifier {
  constructor(
    private readonly settings: OidcSettings,
    private readonly keys: JwksKeySource,
  ) {}

  /**
   * The identity behind `token`, or why it is refused (never thrown). A value that is no JWT (an API
   * key) is refused at once, without a key lookup.
   */
  async verify(token: string): Promise<TokenIdentity | TokenRejectedError> {
    let payload: JWTPayload;
    try {
      payload = await this.verifiedPayload(token);
    } catch (error) {
      return rejectionFrom(error);
    }
    // Required after jose's checks: its `requiredClaims` would report a missing `exp` before a wrong `aud`.
    if (typeof payload.exp !== 'number' || !Number.isFinite(payload.exp)) return new TokenRejectedError('missing_exp');
    const subject = claimAt(payload, this.settings.subjectClaim);
    if (typeof subject !== 'string' || subject === '') return new TokenRejectedError('missing_subject');
    return {
      subject: `oidc:${subject}`,
      displayName: displayNameFromClaims(payload, this.settings.displayNameClaims, subject),
      grants: grantsFromClaims(payload, this.settings.rolesClaim, this.settings.roleMap),
      claims: { ...payload },
      expiresAt: new Date(payload.exp * 1000),
    };
  }

  /** Vets the unverified header and `iss` (each refusal with its own reason), then verifies with jose. */
  private async verifiedPayload(token: string): Promise<JWTPayload> {
    const { settings, keys } = this;
    if (!looksLikeJwt(token)) throw new TokenRejectedError('malformed_token');
    let header: Record<string, unknown>;
    let claims: JWTPayload;
    try {
      header = decodeProtectedHeader(token) as Record<string, unknown>;
      claims = decodeJwt(token);
    } catch {
      throw new TokenRejectedError('malformed_token');
    }
    if (typeof header.alg !== 'string' || !settings.algorithms.includes(header.alg)) {
      throw new TokenRejectedError('algorithm_not_allowed');
    }
    const forbidden = FORBIDDEN_HEADERS.filter((name) => Object.hasOwn(header, name));
    if (forbidden.length > 0) {
      throw new TokenRejectedError('forbidden_header', `The token header carries ${forbidden.join(', ')}`);
    }
    if (header.kid !== undefined && typeof header.kid !== 'string') throw new TokenRejectedError('malformed_token');
    // Unverified, but only ever used to refuse: a token from another issuer must not cost a JWKS refresh.
    if (claims.iss !== settings.issuer) throw new TokenRejectedError('invalid_issuer');
    const { payload } = await jwtVerify(token, (protected_) => keys.getKey(protected_.kid, protected_.alg), {
      algorithms: settings.algorithms,
      issuer: settings.issuer,
      audience: settings.audiences,
      clockTolerance: settings.clockSkewSeconds,
    });
    return payload;
  }
}
