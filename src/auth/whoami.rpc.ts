import { RpcHandlers, RpcMethod } from '../a2a/rpc-method.decorator.js';
import type { RpcCallContext } from '../a2a/rpc-context.js';

/** `_cleveragents/auth/whoami`: who the server takes the caller for, and what it may do. */
@RpcHandlers()
export class WhoamiRpc {
  @RpcMethod('_cleveragents/auth/whoami', {
    role: 'authenticated',
    description: 'The authenticated principal: subject, scheme, default namespace and role grants',
  })
  whoami(_params: object, ctx: RpcCallContext): Record<string, unknown> {
    const p = ctx.principal;
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
