/**
 * Passport strategy `jwt`: verifies `Authorization: Bearer <JWT>` issued by the configured OpenID
 * provider (the `oidc`, `oauth2` and `bearer` schemes, docs/protocol.md §8).
 *
 * Before any key lookup the header is vetted: its `alg` must be one of the configured asymmetric
 * algorithms (so `none` and HS256 signed with our public key never reach a key), and headers that
 * would let the token name its own key (`jku`, `jwk`, `x5u`, `x5c`) or demand extensions (`crit`)
 * are refused, as is a token naming another issuer (before it can cost a JWKS refresh). The key
 * comes from the issuer's JWKS only; jsonwebtoken then checks the signature, `iss`, `aud`, `exp`
 * and `nbf`. Every refusal is a passport `fail` carrying a TokenRejectedError
 * with a machine-readable reason, never an `error`, so a strategy tried after this one (API keys on
 * the `bearer` scheme) still gets its turn.
 */
import type { KeyObject } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import jwt from 'jsonwebtoken';
import passportJwt from 'passport-jwt';
import { JwksKeySource } from './jwks-key-source.js';
import { OIDC_SETTINGS, type OidcSettings } from '../../config/oidc.settings.js';
import {
  claimAt,
  displayNameFromClaims,
  grantsFromClaims,
  TokenRejectedError,
  type TokenFailureReason,
  type TokenIdentity,
} from './token-identity.js';

const { Strategy, ExtractJwt } = passportJwt;

/** Header parameters that let a token point at or carry its own key, or require extensions we do not implement. */
const FORBIDDEN_HEADERS = ['jku', 'jwk', 'x5u', 'x5c', 'crit'] as const;

const bearerToken = ExtractJwt.fromAuthHeaderAsBearerToken();

/** True when `token` has the shape of a JWS compact serialization (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/** Vets the header of `token` and resolves the key to verify it with. */
async function keyFor(token: string, settings: OidcSettings, keys: JwksKeySource): Promise<KeyObject> {
  if (!looksLikeJwt(token)) throw new TokenRejectedError('malformed_token');
  const decoded = jwt.decode(token, { complete: true });
  if (!decoded || typeof decoded.payload !== 'object') throw new TokenRejectedError('malformed_token');
  const header = decoded.header as unknown as Record<string, unknown>;
  if (typeof header.alg !== 'string' || !settings.algorithms.includes(header.alg)) {
    throw new TokenRejectedError('algorithm_not_allowed');
  }
  const forbidden = FORBIDDEN_HEADERS.filter((name) => Object.hasOwn(header, name));
  if (forbidden.length > 0) {
    throw new TokenRejectedError('forbidden_header', `The token header carries ${forbidden.join(', ')}`);
  }
  if (header.kid !== undefined && typeof header.kid !== 'string') throw new TokenRejectedError('malformed_token');
  // Unverified, but only ever used to refuse: a token from another issuer must not cost a JWKS refresh.
  const claims = decoded.payload as Record<string, unknown>;
  if (claims.iss !== settings.issuer) throw new TokenRejectedError('invalid_issuer');
  return keys.getKey(header.kid, header.alg);
}

/** The reason behind what passport-jwt hands to `fail`: our rejections, or jsonwebtoken's errors. */
export function rejectionFrom(challenge: unknown): TokenRejectedError {
  if (challenge instanceof TokenRejectedError) return challenge;
  if (challenge instanceof jwt.TokenExpiredError) return new TokenRejectedError('token_expired');
  if (challenge instanceof jwt.NotBeforeError) return new TokenRejectedError('token_not_yet_valid');
  const message = challenge instanceof Error ? challenge.message : '';
  const reason: TokenFailureReason = message.startsWith('jwt audience invalid')
    ? 'invalid_audience'
    : message.startsWith('jwt issuer invalid')
      ? 'invalid_issuer'
      : message === 'invalid signature' || message === 'jwt signature is required'
        ? 'invalid_signature'
        : message === 'invalid algorithm' || message.startsWith('secretOrPublicKey must be')
          ? 'algorithm_not_allowed'
          : message === 'jwt malformed' || message === 'invalid token' || /^invalid (nbf|exp|iat) value$/.test(message)
            ? 'malformed_token'
            : 'invalid_token';
  return new TokenRejectedError(reason);
}

type AuthenticateRequest = Parameters<InstanceType<typeof Strategy>['authenticate']>[0];

@Injectable()
export class JwtBearerStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @Inject(OIDC_SETTINGS) private readonly settings: OidcSettings,
    keys: JwksKeySource,
  ) {
    super({
      jwtFromRequest: bearerToken,
      secretOrKeyProvider: (_request: unknown, rawToken: string, done: (err: unknown, key?: KeyObject) => void) => {
        keyFor(rawToken, settings, keys).then(
          (key) => done(null, key),
          (error: unknown) => done(error),
        );
      },
      algorithms: settings.algorithms as jwt.Algorithm[],
      issuer: settings.issuer,
      audience: settings.audiences,
      jsonWebTokenOptions: { clockTolerance: settings.clockSkewSeconds },
    } as passportJwt.StrategyOptionsWithoutRequest);
  }

  /**
   * Runs per request on passport's per-request copy of the strategy, whose `fail` we wrap so that
   * every failure carries a TokenRejectedError. A bearer value that is no JWT (an API key) fails
   * at once, without a key lookup.
   */
  override authenticate(request: AuthenticateRequest, options?: unknown): void {
    const fail = this.fail.bind(this) as (challenge: unknown, status: number) => void;
    this.fail = ((challenge: unknown) => fail(rejectionFrom(challenge), 401)) as typeof this.fail;
    const token = bearerToken(request);
    if (!token) return fail(new TokenRejectedError('missing_token'), 401);
    if (!looksLikeJwt(token)) return fail(new TokenRejectedError('malformed_token'), 401);
    super.authenticate(request, options);
  }

  /**
   * The identity behind a verified payload. jsonwebtoken accepts tokens without `exp`; we do not.
   * Returning `[false, rejection]` makes passport fail (not error) with that rejection.
   */
  validate(payload: Record<string, unknown>): TokenIdentity | [false, TokenRejectedError] {
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
