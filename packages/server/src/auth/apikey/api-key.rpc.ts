import type { Acting } from '../../common/actor.js';
import { ActingAs, CallNamespace, RpcHandlers, RpcMethod } from '../../rpc/rpc-method.decorator.js';
import { METHODS } from '@cleveragents/contract';
import type {
  ApiKeyPage,
  ApiKeyView,
  CreateApiKeyParams,
  CreatedApiKey,
  ListApiKeysParams,
  RevokeApiKeyParams,
} from '@cleveragents/contract';
import { ApiKeyService } from './api-key.service.js';

/**
 * `_cleveragents/auth/apikey/*` handlers (docs/protocol.md §6.6). `namespace` defaults to the caller's default
 * namespace, where the dispatcher checked the role too.
 */
@RpcHandlers()
export class ApiKeyRpc {
  constructor(private readonly keys: ApiKeyService) {}

  @RpcMethod(METHODS.auth.apikeyCreate, {
    role: 'admin',
    errors: ['ROLE_ESCALATION', 'KEY_NAME_TAKEN'],
    description: 'Mint an API key for a namespace and role; the key is shown once',
  })
  create(
    params: CreateApiKeyParams,
    @ActingAs() by: Acting,
    @CallNamespace() namespace: string,
  ): Promise<CreatedApiKey> {
    return this.keys.create(
      {
        namespace,
        name: params.name,
        role: params.role,
        expiresAt: params.expiresAt ?? undefined,
      },
      by,
    );
  }

  @RpcMethod(METHODS.auth.apikeyList, {
    role: 'admin',
    errors: ['INVALID_PAGE_TOKEN'],
    description: "A namespace's API keys, newest first, without their secrets",
  })
  list(params: ListApiKeysParams, @CallNamespace() namespace: string): Promise<ApiKeyPage> {
    return this.keys.list({
      namespace,
      includeRevoked: params.includeRevoked ?? false,
      pageSize: params.pageSize,
      pageToken: params.pageToken,
    });
  }

  @RpcMethod(METHODS.auth.apikeyRevoke, {
    role: 'admin',
    // Key ids are unique: without `namespace` the key is found by id, and the role checked in its namespace.
    scope: 'target',
    errors: ['KEY_NOT_FOUND', 'OWNER_REQUIRED', 'ALREADY_REVOKED'],
    description: 'Revoke an API key; it fails from the next request on',
  })
  revoke(params: RevokeApiKeyParams, @ActingAs() by: Acting): Promise<ApiKeyView> {
    return this.keys.revoke({ namespace: params.namespace, id: params.id }, by);
  }
}
