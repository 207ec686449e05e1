/**
 * Passport strategy `jwt`: `Authorization: Bearer <JWT>` issued by the configured OpenID provider
 * (the `oidc`, `oauth2` and `bearer` schemes, SPEC.md §8), verified by JwtVerifier (jose).
 *
 * Every refusal is a passport `fail` carrying a TokenRejectedError with a machine-readable reason,
 * never an `error`, so a strategy tried after this one (API keys on the `bearer` scheme) still gets
 * its turn; no bearer token at all fails with `missing_token`, which the guard counts as "none
 * presented".
 *
 * Not passport-jwt: it verifies with jsonwebtoken whatever key it is given, so jose there could only
 * have looked keys up, or verified a second time. Here jose verifies once, and the strategy is the
 * header-credential strategy the API keys use.
 */
import type { Request } from 'express';
import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { JwksKeySource } from '../oidc/jwks-key-source.js';
import { JwtVerifier } from '../oidc/jwt-verifier.js';
import { OIDC_SETTINGS, type OidcSettings } from '../oidc/oidc.settings.js';
import { TokenRejectedError, type TokenIdentity } from '../oidc/token-identity.js';
import { HeaderCredentialStrategy } from './header-credential.strategy.js';

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

@Injectable()
export class JwtBearerStrategy extends PassportStrategy(HeaderCredentialStrategy, 'jwt') {
  private readonly verifier: JwtVerifier;

  constructor(@Inject(OIDC_SETTINGS) settings: OidcSettings, keys: JwksKeySource) {
    super(bearerToken);
    this.verifier = new JwtVerifier(settings, keys);
  }

  /** No bearer token: a failure other strategies may still turn into a success. */
  protected override absent(): TokenRejectedError {
    return new TokenRejectedError('missing_token');
  }

  /** The identity behind the token, or `[false, rejection]`, which makes passport fail (not error). */
  async validate(token: string): Promise<TokenIdentity | [false, TokenRejectedError]> {
    const outcome = await this.verifier.verify(token);
    return outcome instanceof TokenRejectedError ? [false, outcome] : outcome;
  }
}
