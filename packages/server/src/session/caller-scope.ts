import type { StoreScope } from '../database/store-scope.js';
import type { RpcCallContext } from '../rpc/rpc-context.js';

/**
 * The caller's own scope in `params.namespace` (else its default namespace), as tasks are scoped
 * (docs/protocol.md §4): what sessions and plans belong to.
 */
export function callerScope(params: { namespace?: string }, ctx: RpcCallContext): StoreScope {
  return { namespace: params.namespace ?? ctx.principal.defaultNamespace, owner: ctx.principal.userName };
}
