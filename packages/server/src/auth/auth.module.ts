import {
  Inject,
  Logger,
  Module,
  Optional,
  type DynamicModule,
  type OnApplicationBootstrap,
  type Type,
} from '@nestjs/common';
import type { AppConfig } from '../config/app.config.js';
import { ApiKeyModule } from './apikey/api-key.module.js';
import { AuthStrategies } from './http/auth-strategies.js';
import { AuthRateLimiters, HttpAuthGuard } from './http/http-auth.guard.js';
import { JwksKeySource } from './oidc/jwks-key-source.js';
import { OIDC_SETTINGS } from '../config/oidc.settings.js';
import { IdentityModule } from './identity.module.js';
import { PrincipalFactory } from './principal.factory.js';
import { PrincipalResolver } from './principal.resolver.js';
import { WhoamiRpc } from './whoami.rpc.js';

/**
 * Authentication (docs/protocol.md §8): the HTTP guard and its strategies (from the configuration the Agent
 * Card's security comes from), the principal factory, rate limits, local mode's principal, whoami.
 * `memberships` provides MembershipDirectory (namespace/'s module, handed in by the composition root).
 */
@Module({})
export class AuthModule implements OnApplicationBootstrap {
  private readonly logger = new Logger(AuthModule.name);

  constructor(@Optional() @Inject(JwksKeySource) private readonly jwks: JwksKeySource | undefined) {}

  /** The issuer's keys (`JwksKeySource`) are provided only when `config` names an issuer. */
  static forRoot(config: AppConfig, options: { memberships: Type | DynamicModule }): DynamicModule {
    const oidc = config.oidc ? [{ provide: OIDC_SETTINGS, useValue: config.oidc }, JwksKeySource] : [];
    return {
      module: AuthModule,
      imports: [IdentityModule, ApiKeyModule, options.memberships],
      providers: [
        PrincipalResolver,
        PrincipalFactory,
        HttpAuthGuard,
        WhoamiRpc,
        AuthStrategies,
        AuthRateLimiters,
        ...oidc,
      ],
      exports: [
        PrincipalResolver,
        PrincipalFactory,
        HttpAuthGuard,
        AuthStrategies,
        AuthRateLimiters,
        ...(config.oidc ? [JwksKeySource] : []),
      ],
    };
  }

  /** Loads the issuer's keys at start, without holding the start up: an unreachable IdP is logged and retried. */
  onApplicationBootstrap(): void {
    if (!this.jwks) return;
    this.jwks.refreshIfDue().catch((err: unknown) => {
      this.logger.warn({ msg: "could not load the issuer's signing keys at start", detail: (err as Error).message });
    });
  }
}
