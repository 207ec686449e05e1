import { Global, Inject, Logger, Module, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import { newPassportInstance, type PassportInstance } from './http/passport-instance.js';
import { AppConfig } from '../config/app.config.js';
import { AuthRateLimiters, AuthStrategies, HttpAuthGuard } from './http/http-auth.guard.js';
import { ApiKeyVerifier } from './identity.ports.js';
import { JwksKeySource } from './oidc/jwks-key-source.js';
import { JwtBearerStrategy } from './oidc/jwt-bearer.strategy.js';
import { IdentityCache, IdentityReads } from './identity-cache.js';
import { PrincipalFactory } from './principal.factory.js';
import { PrincipalResolver } from './principal.resolver.js';
import { RateLimiter } from './rate-limiter.js';
import { API_KEY_STRATEGY, BEARER_API_KEY_STRATEGY, createApiKeyStrategy } from './http/api-key.strategy.js';
import { WhoamiRpc } from './whoami.rpc.js';

/** The passport strategy name of the JWT bearer strategy (oidc, oauth2, and JWTs on bearer). */
const JWT_STRATEGY = 'jwt';

/**
 * The strategies CLEVERAGENTS_AUTH_SCHEMES asks for, registered on a passport instance of this
 * application's own (two servers in one process, as in tests, never share strategies). Order is the
 * order they are tried: API keys first (a cheap shape check), then JWTs. `none` needs none.
 */
function buildStrategies(config: AppConfig, keys: ApiKeyVerifier, jwks: JwksKeySource | undefined): AuthStrategies {
  const instance = newPassportInstance();
  const names: string[] = [];
  const schemes = config.authSchemes;
  if (schemes.includes('apiKey')) {
    createApiKeyStrategy(instance, keys, 'apiKey');
    names.push(API_KEY_STRATEGY);
  }
  if (schemes.includes('bearer')) {
    createApiKeyStrategy(instance, keys, 'bearer');
    names.push(BEARER_API_KEY_STRATEGY);
  }
  if (config.oidc && jwks) {
    class ScopedJwtStrategy extends JwtBearerStrategy {
      getPassportInstance(): PassportInstance {
        return instance;
      }
    }
    new ScopedJwtStrategy(config.oidc, jwks);
    names.push(JWT_STRATEGY);
  }
  return new AuthStrategies(instance, names);
}

/**
 * Authentication (SPEC.md §8): the HTTP guard and its strategies, derived from the same configuration
 * as the Agent Card's security; the principal factory; rate limits; local mode's principal; whoami.
 * Global: the A2A controller's guard and the dispatcher resolve from here.
 */
@Global()
@Module({
  providers: [
    IdentityCache,
    { provide: IdentityReads, useExisting: IdentityCache },
    PrincipalResolver,
    PrincipalFactory,
    HttpAuthGuard,
    WhoamiRpc,
    {
      provide: JwksKeySource,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => (config.oidc ? new JwksKeySource(config.oidc) : undefined),
    },
    {
      provide: AuthStrategies,
      inject: [AppConfig, ApiKeyVerifier, JwksKeySource],
      useFactory: buildStrategies,
    },
    {
      provide: AuthRateLimiters,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        new AuthRateLimiters(new RateLimiter(config.rateLimit), new RateLimiter(config.rateLimit)),
    },
  ],
  exports: [
    IdentityCache,
    IdentityReads,
    PrincipalResolver,
    PrincipalFactory,
    HttpAuthGuard,
    AuthStrategies,
    AuthRateLimiters,
    JwksKeySource,
  ],
})
export class AuthModule implements OnApplicationBootstrap {
  private readonly logger = new Logger(AuthModule.name);

  constructor(@Optional() @Inject(JwksKeySource) private readonly jwks: JwksKeySource | undefined) {}

  /** Loads the issuer's keys at start, without holding the start up: an unreachable IdP is logged and retried. */
  onApplicationBootstrap(): void {
    if (!this.jwks) return;
    this.jwks.refreshIfDue().catch((err: unknown) => {
      this.logger.warn({ msg: "could not load the issuer's signing keys at start", detail: (err as Error).message });
    });
  }
}
