import { RpcHandlers, RpcMethod } from '../../rpc/rpc-method.decorator.js';
import { METHODS } from '@cleveragents/contract';
import type { RpcCallContext } from '../../rpc/rpc-context.js';
import type { ApiKeyPage, ApiKeyView, CreatedApiKey } from '@cleveragents/contract';
import { ApiKeyService } from './api-key.service.js';
import { CreateApiKeyParams } from './dto/create-api-key.params.js';
import { ListApiKeysParams } from './dto/list-api-keys.params.js';
import { RevokeApiKeyParams } from './dto/revoke-api-key.params.js';
import { apiKeyPageSchema, apiKeySchema, createdApiKeySchema } from '../auth.results.js';

/**
 * `_cleveragents/auth/apikey/*` handlers (docs/protocol.md §6.6). `namespace` defaults to the caller's default
 * namespace, where the dispatcher checked the role too.
 */
@RpcHandlers()
export class ApiKeyRpc {
  constructor(private readonly keys: ApiKeyService) {}

  @RpcMethod(METHODS.auth.apikeyCreate, {
    role: 'admin',
    result: createdApiKeySchema,
    errors: ['ROLE_ESCALATION', 'KEY_NAME_TAKEN'],
    params: CreateApiKeyParams,
    description: 'Mint an API key for a namespace and role; the key is shown once',
  })
  create(params: CreateApiKeyParams, ctx: RpcCallContext): Promise<CreatedApiKey> {
    return this.keys.create(
      {
        namespace: params.namespace ?? ctx.principal.defaultNamespace,
        name: params.name,
        role: params.role,
        expiresAt: params.expiresAt ?? undefined,
      },
      { actor: ctx.principal, requestId: ctx.requestId },
    );
  }

  @RpcMethod(METHODS.auth.apikeyList, {
    role: 'admin',
    result: apiKeyPageSchema,
    errors: ['INVALID_PAGE_TOKEN'],
    params: ListApiKeysParams,
    description: "A namespace's API keys, newest first, without their secrets",
  })
  list(params: ListApiKeysParams, ctx: RpcCallContext): Promise<ApiKeyPage> {
    return this.keys.list({
      namespace: params.namespace ?? ctx.principal.defaultNamespace,
      includeRevoked: params.includeRevoked ?? false,
      pageSize: params.pageSize,
      pageToken: params.pageToken,
    });
  }

  @RpcMethod(METHODS.auth.apikeyRevoke, {
    role: 'admin',
    result: apiKeySchema,
    errors: ['KEY_NOT_FOUND', 'OWNER_REQUIRED', 'ALREADY_REVOKED'],
    params: RevokeApiKeyParams,
    description: 'Revoke an API key; it fails from the next request on',
  })
  revoke(params: RevokeApiKeyParams, ctx: RpcCallContext): Promise<ApiKeyView> {
    return this.keys.revoke(
      { namespace: params.namespace ?? ctx.principal.defaultNamespace, id: params.id },
      { actor: ctx.principal, requestId: ctx.requestId },
    );
  }
}
