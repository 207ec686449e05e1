import { Inject, Injectable, Optional, type OnModuleDestroy } from '@nestjs/common';
import passport from 'passport';
import { Clock } from '../../common/clock.js';
import { AppConfig } from '../../config/app.config.js';
import { ApiKeyVerifier } from '../identity.ports.js';
import { JwksKeySource } from '../oidc/jwks-key-source.js';
import { JwtBearerStrategy } from '../oidc/jwt-bearer.strategy.js';
import { API_KEY_STRATEGY, BEARER_API_KEY_STRATEGY, createApiKeyStrategy } from './api-key.strategy.js';

/** The passport strategy name of the JWT bearer strategy (oidc, oauth2, and JWTs on bearer). */
const JWT_STRATEGY = 'jwt';

let applications = 0;

/**
 * The strategies CLEVERAGENTS_AUTH_SCHEMES asks for, registered on passport under names of this
 * application's own (two servers in one process, as in tests, never share strategies). `names` is the
 * order the guard tries them: API keys first (a cheap shape check), then JWTs. `none` needs none.
 */
@Injectable()
export class AuthStrategies implements OnModuleDestroy {
  readonly names: readonly string[];

  constructor(
    config: AppConfig,
    keys: ApiKeyVerifier,
    clock: Clock,
    /** Provided when an issuer is configured (OIDC_ISSUER_URL). */
    @Optional() @Inject(JwksKeySource) jwks: JwksKeySource | undefined,
  ) {
    const suffix = `#${++applications}`;
    const names: string[] = [];
    const schemes = config.authSchemes;
    // Each strategy registers itself on passport as it is built (passport's way).
    if (schemes.includes('apiKey')) {
      names.push(API_KEY_STRATEGY + suffix);
      createApiKeyStrategy(keys, 'apiKey', names.at(-1)!);
    }
    if (schemes.includes('bearer')) {
      names.push(BEARER_API_KEY_STRATEGY + suffix);
      createApiKeyStrategy(keys, 'bearer', names.at(-1)!);
    }
    if (config.oidc && jwks) {
      names.push(JWT_STRATEGY + suffix);
      new JwtBearerStrategy(config.oidc, jwks, clock, names.at(-1));
    }
    this.names = names;
  }

  onModuleDestroy(): void {
    for (const name of this.names) passport.unuse(name);
  }
}
