/**
 * Passport strategy `jwt`: verifies `Authorization: Bearer <JWT>` issued by the configured OpenID
 * provider (the `oidc`, `oauth2` and `bearer` schemes, SPEC.md §8), with jose's `jwtVerify`.
 *
 * Before any key lookup the header is vetted: its `alg` must be one of the configured asymmetric
 * algorithms (so `none` and HS256 signed with our public key never reach a key), and headers that
 * would let the token name its own key (`jku`, `jwk`, `x5u`, `x5c`) or demand extensions (`crit`)
 * are refused, as is a token naming another issuer (before it can cost a JWKS refresh). jose never
 * follows `jku`/`x5u` nor trusts an embedded `jwk` anyway; the refusal is ours so that each has its
 * own reason. The key comes from the issuer's JWKS only (JwksKeySource); `jwtVerify` then checks the
 * signature, `alg`, `iss`, `aud`, `exp` and `nbf` (with the configured clock tolerance). Every
 * refusal is a passport `fail` carrying a TokenRejectedError with a machine-readable reason, never an
 * `error`, so a strategy tried after this one (API keys on the `bearer` scheme) still gets its turn.
 *
 * Not passport-jwt: it verifies with jsonwebtoken whatever key it is given, so jose there could only
 * have looked keys up, or verified a second time. Here jose verifies once, and the strategy is the
 * header-credential strategy the API keys use.
 */
import type { Request } from 'express';
import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import { HeaderCredentialStrategy } from '../http/header-credential.strategy.js';
import { JwksKeySource } from './jwks-key-source.js';
import { OIDC_SETTINGS, type OidcSettings } from './oidc.settings.js';
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

/**
 * The token of `Authorization: <scheme> <token>` when the scheme is `Bearer` (any case), read as
 * passport-jwt's `fromAuthHeaderAsBearerToken` read it: the first two runs of non-space characters.
 */
export function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const m = /(\S+)\s+(\S+)/.exec(header);
  return m && m[1].toLowerCase() === 'bearer' ? m[2] : undefined;
}

/** True when `token` has the shape of a JWS compact serialization (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/**
 * Vets the unverified header and `iss` of `token` (each refusal with its own reason, before any key
 * lookup), then verifies it with jose against the issuer's published keys.
 */
export async function verifyBearerJwt(token: string, settings: OidcSettings, keys: JwksKeySource): Promise<JWTPayload> {
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
  const { payload } = await jwtVerify(
    token,
    (protectedHeader) => keys.getKey(protectedHeader.kid, protectedHeader.alg),
    {
      algorithms: settings.algorithms,
      issuer: settings.issuer,
      audience: settings.audiences,
      clockTolerance: settings.clockSkewSeconds,
    },
  );
  return payload;
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

@Injectable()
export class JwtBearerStrategy extends PassportStrategy(HeaderCredentialStrategy, 'jwt') {
  constructor(
    @Inject(OIDC_SETTINGS) private readonly settings: OidcSettings,
    private readonly keys: JwksKeySource,
  ) {
    super(bearerToken);
  }

  /** No bearer token: a failure other strategies may still turn into a success. */
  protected override absent(): TokenRejectedError {
    return new TokenRejectedError('missing_token');
  }

  /**
   * The identity behind a bearer token, or `[false, rejection]`, which makes passport fail (not
   * error) with that rejection. A bearer value that is no JWT (an API key) fails at once, without a
   * key lookup. `exp` is required here, after the checks jose makes (its `requiredClaims` would
   * report a missing `exp` before a wrong `aud`).
   */
  async validate(token: string): Promise<TokenIdentity | [false, TokenRejectedError]> {
    let payload: JWTPayload;
    try {
      payload = await verifyBearerJwt(token, this.settings, this.keys);
    } catch (error) {
      return [false, rejectionFrom(error)];
    }
    if (typeof payload.exp !== 'number' || !Number.isFinite(payload.exp)) {
      return [false, new TokenRejectedError('missing_exp')];
    }
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
