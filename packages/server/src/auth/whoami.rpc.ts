import type { Principal } from '../common/principal.js';
import { CallPrincipal, RpcHandlers, RpcMethod } from '../rpc/rpc-method.decorator.js';
import { METHODS } from '@cleveragents/contract';
import type { Whoami } from '@cleveragents/contract';

/** `_cleveragents/auth/whoami`: who the server takes the caller for, and what it may do. */
@RpcHandlers()
export class WhoamiRpc {
  @RpcMethod(METHODS.auth.whoami, {
    role: 'authenticated',
    errors: [],
    description: 'The authenticated principal: subject, scheme, default namespace and role grants',
  })
  whoami(_params: object, @CallPrincipal() p: Principal): Whoami {
    return {
      subject: p.subject,
      displayName: p.displayName,
      scheme: p.scheme,
      defaultNamespace: p.defaultNamespace,
      defaultNamespaceRole: p.roleIn(p.defaultNamespace) ?? null,
      grants: p.grantList(),
      ...(p.apiKeyId ? { apiKeyId: p.apiKeyId } : {}),
      ...(p.expiresAt ? { expiresAt: p.expiresAt.toISOString() } : {}),
    };
  }
}
