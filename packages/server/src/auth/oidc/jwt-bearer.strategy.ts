/**
 * Passport strategy `jwt`: verifies `Authorization: Bearer <JWT>` issued by the configured OpenID
 * provider (the `oidc`, `oauth2` and `bearer` schemes, docs/protocol.md §8.1) with jose's `jwtVerify` over the
 * issuer's JWKS. Every refusal is a passport `fail` carrying a TokenRejectedError, never an `error`,
 * so a strategy tried after this one (API keys on the `bearer` scheme) still gets its turn.
 */
import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import { Strategy } from 'passport-strategy';
import { bearerCredential } from './bearer-token.js';
import { JwksKeySource } from './jwks-key-source.js';
import { Clock } from '../../common/clock.js';
import { OIDC_SETTINGS, type OidcSettings } from '../../config/oidc.settings.js';
import { asError } from '../../common/as-error.js';
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

/**
 * Refusals decided from the unverified token before any key lookup: an `alg` outside the configured
 * asymmetric list (so `none` and HS256 over our public key never reach a key), headers naming or
 * carrying a key or demanding extensions, and another issuer (which must not cost a JWKS refresh).
 */
export function vetUnverified(token: string, settings: Pick<OidcSettings, 'algorithms' | 'issuer'>): void {
  let header: Record<string, unknown>;
  let claims: JWTPayload;
  try {
    header = decodeProtectedHeader(token);
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
  if (claims.iss !== settings.issuer) throw new TokenRejectedError('invalid_issuer');
}

const CLAIM_REASONS: Readonly<Record<string, TokenFailureReason>> = {
  iss: 'invalid_issuer',
  aud: 'invalid_audience',
  nbf: 'token_not_yet_valid',
};

/** The reason behind a verification failure: our rejections, or jose's errors. */
export function rejectionFrom(error: unknown): TokenRejectedError {
  if (error instanceof TokenRejectedError) return error;
  const reason: TokenFailureReason =
    error instanceof errors.JWTExpired
      ? 'token_expired'
      : error instanceof errors.JWTClaimValidationFailed
        ? error.reason === 'missing' && error.claim === 'exp'
          ? 'missing_exp'
          : error.reason === 'invalid'
            ? 'malformed_token'
            : (CLAIM_REASONS[error.claim] ?? 'invalid_token')
        : error instanceof errors.JWSSignatureVerificationFailed
          ? 'invalid_signature'
          : error instanceof errors.JOSEAlgNotAllowed
            ? 'algorithm_not_allowed'
            : error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys
              ? 'unknown_key'
              : error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid
                ? 'malformed_token'
                : 'invalid_token';
  return new TokenRejectedError(reason);
}

type Verified = (err: unknown, user?: unknown, info?: unknown) => void;

/** A passport strategy whose verification is jose's `jwtVerify`; the mixin's `validate` maps the payload. */
export class JoseBearerStrategy extends Strategy {
  constructor(
    private readonly verifyToken: (token: string) => Promise<JWTPayload>,
    readonly name: string,
    private readonly verify: (payload: JWTPayload, done: Verified) => void,
  ) {
    super();
  }

  /** A bearer value that is no JWT (an API key) fails at once, without a key lookup. */
  override authenticate(req: Parameters<typeof bearerCredential>[0]): void {
    const token = bearerCredential(req);
    if (token === undefined) return this.fail(new TokenRejectedError('missing_token'), 401);
    if (!looksLikeJwt(token)) return this.fail(new TokenRejectedError('malformed_token'), 401);
    this.verifyToken(token).then(
      (payload) =>
        this.verify(payload, (err, user, info) => {
          if (err) this.error(asError(err));
          else if (!user) this.fail(info ?? new TokenRejectedError('invalid_token'), 401);
          else this.success(user);
        }),
      (error: unknown) => this.fail(rejectionFrom(error), 401),
    );
  }
}

@Injectable()
export class JwtBearerStrategy extends PassportStrategy(JoseBearerStrategy) {
  /** Registers itself on passport under `name` as it is built (passport's way). */
  constructor(
    @Inject(OIDC_SETTINGS) private readonly settings: OidcSettings,
    keys: JwksKeySource,
    /** Expiry and not-before are judged by the server's clock. */
    clock: Clock,
    name = 'jwt',
  ) {
    const options = {
      issuer: settings.issuer,
      audience: settings.audiences,
      algorithms: settings.algorithms,
      clockTolerance: settings.clockSkewSeconds,
      requiredClaims: ['exp'],
    };
    super(async (token: string) => {
      vetUnverified(token, settings);
      return (await jwtVerify(token, keys.resolve, { ...options, currentDate: clock.date() })).payload;
    }, name);
  }

  /** The identity behind a verified payload; `[false, rejection]` makes passport fail with that rejection. */
  validate(payload: JWTPayload): TokenIdentity | [false, TokenRejectedError] {
    if (typeof payload.exp !== 'number') return [false, new TokenRejectedError('missing_exp')];
    const subject = claimAt(payload, this.settings.subjectClaim);
    if (typeof subject !== 'string' || subject === '') return [false, new TokenRejectedError('missing_subject')];
    return {
      subject: `oidc:${subject}`,
      displayName: displayNameFromClaims(payload, this.settings.displayNameClaims, subject),
      grants: grantsFromClaims(payload, this.settings.rolesClaim, this.settings.roleMap),
      claims: { ...payload },
      expiresAt: new Date(payload.exp * 1000),
    };
  }
}
