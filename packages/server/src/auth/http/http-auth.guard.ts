import { Injectable, Logger, type ExecutionContext } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { Request } from 'express';
import { AuthenticationError, RateLimitedError } from '../../common/domain.errors.js';
import { AppConfig } from '../../config/app.config.js';
import type { Reason } from '@cleveragents/contract';
import { TokenRejectedError, type TokenFailureReason, type TokenIdentity } from '../oidc/token-identity.js';
import { Principal } from '../../common/principal.js';
import { asError } from '../../common/as-error.js';
import { PrincipalFactory } from '../principal.factory.js';
import { RateLimiter } from '../rate-limiter.js';
import type { ApiKeyCredential } from './api-key.strategy.js';
import { AuthStrategies } from './auth-strategies.js';
import type { CredentialFailure } from './header-credential.strategy.js';

/** The two limiters: per principal, and per client address for failed authentication (guessing). */
@Injectable()
export class AuthRateLimiters {
  readonly perPrincipal: RateLimiter;
  readonly failedPerAddress: RateLimiter;

  constructor(config: AppConfig) {
    this.perPrincipal = new RateLimiter(config.rateLimit);
    this.failedPerAddress = new RateLimiter(config.rateLimit);
  }
}

/** The credential a failed authentication was about, kept on the error for the 401 challenge. */
export class CredentialsRejectedError extends AuthenticationError {
  constructor(
    message: string,
    reason: Reason,
    readonly presented: boolean,
    readonly description: string | undefined,
  ) {
    super(message, reason);
  }
}

/**
 * Authenticates each JSON-RPC call by CLEVERAGENTS_AUTH_SCHEMES (API-key fast paths, then passport) and
 * rate-limits per principal; `req.user` is the Principal (docs/architecture.md#authentication-and-authorization).
 */
@Injectable()
export class HttpAuthGuard extends AuthGuard() {
  private readonly logger = new Logger(HttpAuthGuard.name);
  /** With the `none` scheme, every call's principal: immutable, so one for all (not one per call or stream). */
  private readonly anonymous: Principal;

  constructor(
    private readonly config: AppConfig,
    private readonly strategies: AuthStrategies,
    private readonly principals: PrincipalFactory,
    private readonly limiters: AuthRateLimiters,
  ) {
    super({ defaultStrategy: [...strategies.names], session: false });
    this.anonymous = Principal.anonymous(config.defaultNamespace);
  }

  override canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request>();
    if (this.strategies.names.length === 0) {
      req.user = this.anonymous;
      return this.admit(req);
    }
    // A key whose record (and, when valid, memberships) are held in memory: decided without an await.
    const held = this.strategies.heldApiKeyHeader(req);
    const principal = held?.credential && this.principals.heldFromApiKey(held.credential);
    if (principal) {
      req.user = principal;
      return this.admit(req);
    }
    return this.authenticate(context, req, held);
  }

  /** `held`: what heldApiKeyHeader already told of the X-API-Key header, so it is not verified twice. */
  private async authenticate(
    context: ExecutionContext,
    req: Request,
    held: { credential: ApiKeyCredential | undefined } | undefined,
  ): Promise<boolean> {
    const apiKey = held ? held.credential : await this.strategies.validApiKeyHeader(req);
    if (apiKey) req.user = await this.principals.fromApiKey(apiKey);
    else await super.canActivate(context);
    return this.admit(req);
  }

  /** The per-principal rate limit, for the principal now on `req.user`. */
  private admit(req: Request): boolean {
    const principal = req.user as Principal;
    const key = principal.scheme === 'none' ? `anonymous@${clientAddress(req)}` : principal.subject;
    const decision = this.limiters.perPrincipal.take(key);
    if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds, this.config.rateLimit.perMinute);
    return true;
  }

  /** What passport's callback receives, as the Principal that becomes `req.user`, or the domain error. */
  override handleRequest<TUser = Promise<Principal>>(
    err: unknown,
    user: unknown,
    info: unknown,
    context: ExecutionContext,
  ): TUser {
    return this.principalFor(err, user, info, context.switchToHttp().getRequest<Request>()) as TUser;
  }

  private async principalFor(err: unknown, user: unknown, info: unknown, req: Request): Promise<Principal> {
    if (err) throw asError(err);
    if (user) return this.toPrincipal(user as ApiKeyCredential | TokenIdentity);
    const failure = withHint(describeFailure(info), req, this.config.authSchemes);
    this.logger.warn({ msg: 'authentication failed', reason: failure.reason, presented: failure.presented });
    const decision = this.limiters.failedPerAddress.take(clientAddress(req));
    if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds, this.config.rateLimit.perMinute);
    throw new CredentialsRejectedError(failure.message, failure.reason, failure.presented, failure.description);
  }

  private async toPrincipal(user: ApiKeyCredential | TokenIdentity): Promise<Principal> {
    if ('kind' in user) return this.principals.fromApiKey(user);
    return this.principals.fromToken(user);
  }
}

interface Failure {
  reason: Reason;
  message: string;
  presented: boolean;
  description: string | undefined;
}

/**
 * What the strategies said, across all of them: a credential that was presented and refused wins
 * over the strategies that found none of theirs.
 */
export function describeFailure(info: unknown): Failure {
  const all = Array.isArray(info) ? info : [info];
  for (const item of all) {
    if (item instanceof TokenRejectedError) {
      if (item.reason === 'missing_token') continue;
      return {
        reason: tokenReason(item.reason),
        message: `Invalid bearer token: ${item.description}`,
        presented: true,
        description: item.description,
      };
    }
    if (isCredentialFailure(item) && !item.absent) {
      return { reason: item.reason, message: item.message, presented: true, description: item.message };
    }
  }
  return {
    reason: 'AUTHENTICATION_REQUIRED',
    message: 'Authentication required: this server accepts the credentials its Agent Card declares',
    presented: false,
    description: undefined,
  };
}

/**
 * "No credentials" when the caller did send `Authorization: Bearer` but no configured scheme reads it
 * (only `apiKey`): most often an API key in the wrong header, so the message says where it goes.
 */
function withHint(failure: Failure, req: Request, schemes: readonly string[]): Failure {
  if (failure.reason !== 'AUTHENTICATION_REQUIRED' || !schemes.includes('apiKey')) return failure;
  if (['bearer', 'oidc', 'oauth2'].some((s) => schemes.includes(s))) return failure;
  if (!/^Bearer\s/i.test(req.headers.authorization ?? '')) return failure;
  return {
    ...failure,
    message:
      'Authentication required: this server reads API keys from the X-API-Key header, not from ' +
      'Authorization: Bearer; send the key as "X-API-Key: <key>" (or the operator adds "bearer" to ' +
      'CLEVERAGENTS_AUTH_SCHEMES to accept keys as bearer tokens)',
  };
}

/** The reason a client is told for each refusal of a presented token (`missing_token` is not one). */
const TOKEN_REASONS: Readonly<Record<Exclude<TokenFailureReason, 'missing_token'>, Reason>> = {
  malformed_token: 'TOKEN_MALFORMED',
  algorithm_not_allowed: 'TOKEN_ALGORITHM_NOT_ALLOWED',
  forbidden_header: 'TOKEN_FORBIDDEN_HEADER',
  unknown_key: 'TOKEN_UNKNOWN_KEY',
  keys_unavailable: 'TOKEN_KEYS_UNAVAILABLE',
  invalid_signature: 'TOKEN_INVALID_SIGNATURE',
  invalid_issuer: 'TOKEN_INVALID_ISSUER',
  invalid_audience: 'TOKEN_INVALID_AUDIENCE',
  token_expired: 'TOKEN_EXPIRED',
  token_not_yet_valid: 'TOKEN_NOT_YET_VALID',
  missing_exp: 'TOKEN_MISSING_EXP',
  missing_subject: 'TOKEN_MISSING_SUBJECT',
  invalid_token: 'TOKEN_INVALID',
};

/** `token_expired` → TOKEN_EXPIRED, `malformed_token` → TOKEN_MALFORMED, `invalid_audience` → TOKEN_INVALID_AUDIENCE. */
export function tokenReason(reason: Exclude<TokenFailureReason, 'missing_token'>): Reason {
  return TOKEN_REASONS[reason];
}

function isCredentialFailure(value: unknown): value is CredentialFailure {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as CredentialFailure).reason === 'string' &&
    typeof (value as CredentialFailure).absent === 'boolean'
  );
}

/** The client's address: the socket's peer, or what trusted proxies forwarded (CLEVERAGENTS_TRUST_PROXY). */
function clientAddress(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}
