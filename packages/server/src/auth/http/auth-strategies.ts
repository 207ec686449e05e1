import { Inject, Injectable, Optional, type OnModuleDestroy } from '@nestjs/common';
import type { Request } from 'express';
import passport from 'passport';
import { Clock } from '../../common/clock.js';
import { AppConfig } from '../../config/app.config.js';
import { ApiKeyVerifier } from '../identity.ports.js';
import { JwksKeySource } from '../oidc/jwks-key-source.js';
import { JwtBearerStrategy } from '../oidc/jwt-bearer.strategy.js';
import {
  API_KEY_STRATEGY,
  BEARER_API_KEY_STRATEGY,
  createApiKeyStrategy,
  type ApiKeyCredential,
} from './api-key.strategy.js';
import { apiKeyHeader } from './header-credential.strategy.js';

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
  /** The `apiKey` scheme is on: X-API-Key is read, first of all. */
  private readonly readsApiKeyHeader: boolean;

  constructor(
    config: AppConfig,
    private readonly keys: ApiKeyVerifier,
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
    this.readsApiKeyHeader = schemes.includes('apiKey');
  }

  /**
   * A valid key in X-API-Key, verified as its strategy would but without passport's `authenticate`;
   * undefined when absent or invalid, and the guard then runs passport (docs/architecture.md).
   */
  async validApiKeyHeader(req: Request): Promise<ApiKeyCredential | undefined> {
    if (!this.readsApiKeyHeader) return undefined;
    const presented = apiKeyHeader(req);
    if (presented === undefined) return undefined;
    const identity = await this.keys.verify(presented);
    return identity ? { kind: 'apiKey', via: 'apiKey', identity } : undefined;
  }

  /**
   * What `validApiKeyHeader` would answer, when it can be told from memory alone (the key's record is
   * held): no await at all. Undefined when it cannot (no X-API-Key, or the record is not held): the
   * guard then takes `validApiKeyHeader`.
   */
  heldApiKeyHeader(req: Request): { credential: ApiKeyCredential | undefined } | undefined {
    if (!this.readsApiKeyHeader) return undefined;
    const presented = apiKeyHeader(req);
    if (presented === undefined) return undefined;
    const held = this.keys.verifyHeld(presented);
    if (!held) return undefined;
    return { credential: held.identity && { kind: 'apiKey', via: 'apiKey', identity: held.identity } };
  }

  onModuleDestroy(): void {
    for (const name of this.names) passport.unuse(name);
  }
}
