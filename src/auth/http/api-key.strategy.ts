import type { Request } from 'express';
import type { PassportInstance } from './passport-instance.js';
import { PassportStrategy } from '@nestjs/passport';
import type { ApiKeyIdentity, ApiKeyVerifier } from '../identity.ports.js';
import { bearerCredential } from '../oidc/bearer-token.js';
import { apiKeyHeader, HeaderCredentialStrategy } from './header-credential.strategy.js';

/** What an API-key strategy hands the guard. */
export interface ApiKeyCredential {
  kind: 'apiKey';
  /** `apiKey` through X-API-Key, `bearer` through Authorization: Bearer. */
  via: 'apiKey' | 'bearer';
  identity: ApiKeyIdentity;
}

export const API_KEY_STRATEGY = 'cleveragents-api-key';
export const BEARER_API_KEY_STRATEGY = 'cleveragents-bearer-api-key';

/**
 * The API-key strategies, registered on `passport` (one instance per application, so that two
 * servers in one process never share strategies): `X-API-Key` for the `apiKey` scheme and an API key
 * in `Authorization: Bearer` for the `bearer` scheme. A bearer value that is not shaped like one of
 * our keys counts as absent here, so the JWT strategy can take it.
 */
export function createApiKeyStrategy(
  passport: PassportInstance,
  verifier: ApiKeyVerifier,
  via: 'apiKey' | 'bearer',
): HeaderCredentialStrategy {
  const extract =
    via === 'apiKey'
      ? apiKeyHeader
      : (req: Request): string | undefined => {
          const value = bearerCredential(req);
          return value !== undefined && verifier.looksLikeKey(value) ? value : undefined;
        };

  class ApiKeyStrategy extends PassportStrategy(
    HeaderCredentialStrategy,
    via === 'apiKey' ? API_KEY_STRATEGY : BEARER_API_KEY_STRATEGY,
  ) {
    getPassportInstance(): PassportInstance {
      return passport;
    }

    async validate(presented: string): Promise<ApiKeyCredential | false> {
      const identity = await verifier.verify(presented);
      return identity ? { kind: 'apiKey', via, identity } : false;
    }
  }
  return new ApiKeyStrategy(extract);
}
