import type { Principal } from '../auth/principal.js';
import type { Acting } from '../common/actor.js';
import type { StoreScope } from '../database/store-scope.js';

/** What an extension handler knows of its call: nothing of the transport beyond its name. */
export interface RpcCallContext {
  readonly principal: Principal;
  readonly transport: 'http' | 'stdio';
  readonly requestId: string;
}

/** Who a handler's call acts as, for a service and the audit log: the principal, in this request. */
export function actingOf(ctx: RpcCallContext): Acting {
  return { actor: ctx.principal, requestId: ctx.requestId };
}

/**
 * The caller's own scope in `params.namespace` (else its default namespace), as tasks are scoped
 * (SPEC.md §4): what sessions and plans belong to.
 */
export function callerScope(params: { namespace?: string }, ctx: RpcCallContext): StoreScope {
  return { namespace: params.namespace ?? ctx.principal.defaultNamespace, owner: ctx.principal.userName };
}
