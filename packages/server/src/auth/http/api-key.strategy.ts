import type { Request } from 'express';
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
 * The API-key strategies, registered on passport under `name`: `X-API-Key` for the `apiKey` scheme
 * and an API key in `Authorization: Bearer` for the `bearer` scheme. A bearer value that is not shaped like one of
 * our keys counts as absent here, so the JWT strategy can take it.
 */
export function createApiKeyStrategy(
  verifier: ApiKeyVerifier,
  via: 'apiKey' | 'bearer',
  name: string,
): HeaderCredentialStrategy {
  const extract =
    via === 'apiKey'
      ? apiKeyHeader
      : (req: Request): string | undefined => {
          const value = bearerCredential(req);
          return value !== undefined && verifier.looksLikeKey(value) ? value : undefined;
        };

  class ApiKeyStrategy extends PassportStrategy(HeaderCredentialStrategy, name) {
    async validate(presented: string): Promise<ApiKeyCredential | false> {
      const identity = await verifier.verify(presented);
      return identity ? { kind: 'apiKey', via, identity } : false;
    }
  }
  return new ApiKeyStrategy(extract);
}
