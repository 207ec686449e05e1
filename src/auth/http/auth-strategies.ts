import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Request } from 'express';
import { AppConfig } from '../../config/app.config.js';
import { ApiKeyVerifier } from '../identity.ports.js';
import { JwksKeySource } from '../oidc/jwks-key-source.js';
import { JwtBearerStrategy } from '../oidc/jwt-bearer.strategy.js';
import { API_KEY_STRATEGY, BEARER_API_KEY_STRATEGY, createApiKeyStrategy } from './api-key.strategy.js';
import { newPassportInstance, type PassportInstance } from './passport-instance.js';

/** The passport strategy name of the JWT bearer strategy (oidc, oauth2, and JWTs on bearer). */
const JWT_STRATEGY = 'jwt';

/** What passport's Strategy contract gives a strategy to report with, and what it calls. */
export interface PassportStrategyLike {
  authenticate(req: Request, options: object): void;
}

/**
 * The strategies CLEVERAGENTS_AUTH_SCHEMES asks for, registered on a passport instance of this
 * application's own (two servers in one process, as in tests, never share strategies). `names` is the
 * order they are tried: API keys first (a cheap shape check), then JWTs. `none` needs none.
 */
@Injectable()
export class AuthStrategies {
  readonly passport: PassportInstance = newPassportInstance();
  readonly names: readonly string[];

  constructor(
    config: AppConfig,
    keys: ApiKeyVerifier,
    /** Provided when an issuer is configured (OIDC_ISSUER_URL). */
    @Optional() @Inject(JwksKeySource) jwks: JwksKeySource | undefined,
  ) {
    const instance = this.passport;
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
      // Registers itself, on this instance, as it is built (passport's way).
      class ScopedJwtStrategy extends JwtBearerStrategy {
        getPassportInstance(): PassportInstance {
          return instance;
        }
      }
      new ScopedJwtStrategy(config.oidc, jwks);
      names.push(JWT_STRATEGY);
    }
    this.names = names;
  }

  /** The strategy registered under `name` on this application's passport instance. */
  strategy(name: string): PassportStrategyLike {
    const found = (this.passport as unknown as { _strategy(name: string): PassportStrategyLike | undefined })._strategy(
      name,
    );
    if (!found) throw new Error(`No passport strategy "${name}" is registered`);
    return found;
  }
}
