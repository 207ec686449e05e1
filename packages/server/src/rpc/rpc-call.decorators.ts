import type { Acting } from '../common/actor.js';
import type { Principal } from '../common/principal.js';
import type { StoreScope } from '../database/store-scope.js';
import type { RpcCallContext } from './rpc-context.js';

/**
 * What a handler argument past the params is, by the parameter decorator that marks it; the
 * dispatcher's pipeline resolves each from the params and the call context (see rpcArgumentOf).
 */
export enum RpcCallArgument {
  /** The call context itself: an argument without a decorator. */
  CONTEXT = 'context',
  CALLER_SCOPE = 'callerScope',
  NAMESPACE = 'namespace',
  ACTING = 'acting',
  PRINCIPAL = 'principal',
}

/** Where the parameter decorators record a handler's marked arguments, by index. */
export const RPC_CALL_ARGUMENTS = 'cleveragents:rpc-call-arguments';

function callArgument(kind: RpcCallArgument): ParameterDecorator {
  return (target, key, index) => {
    if (key === undefined) throw new Error(`@${kind} marks a handler's argument, not a constructor's`);
    if (index === 0) throw new Error(`@${kind} on ${String(key)}: the first argument is the method's params`);
    const marked = (Reflect.getMetadata(RPC_CALL_ARGUMENTS, target, key) ?? {}) as Record<number, RpcCallArgument>;
    Reflect.defineMetadata(RPC_CALL_ARGUMENTS, { ...marked, [index]: kind }, target, key);
  };
}

/** The caller's own scope: `params.namespace` (else its default namespace) and its user as owner. */
export function CallerScope(): ParameterDecorator {
  return callArgument(RpcCallArgument.CALLER_SCOPE);
}

/** The namespace the call is about: `params.namespace`, else the caller's default namespace. */
export function CallNamespace(): ParameterDecorator {
  return callArgument(RpcCallArgument.NAMESPACE);
}

/** Who the call acts as, for a service and the audit log: the principal, in this request. */
export function ActingAs(): ParameterDecorator {
  return callArgument(RpcCallArgument.ACTING);
}

/** The authenticated principal of the call. */
export function CallPrincipal(): ParameterDecorator {
  return callArgument(RpcCallArgument.PRINCIPAL);
}

/** What a marked argument is worth in a call with these (unvalidated) params and this context. */
export function rpcArgumentOf(
  kind: RpcCallArgument,
  params: { namespace?: unknown },
  ctx: RpcCallContext,
): RpcCallContext | StoreScope | string | Acting | Principal {
  switch (kind) {
    case RpcCallArgument.CONTEXT:
      return ctx;
    case RpcCallArgument.CALLER_SCOPE:
      return { namespace: namespaceOf(params, ctx), owner: ctx.principal.userName };
    case RpcCallArgument.NAMESPACE:
      return namespaceOf(params, ctx);
    case RpcCallArgument.ACTING:
      return { actor: ctx.principal, requestId: ctx.requestId };
    case RpcCallArgument.PRINCIPAL:
      return ctx.principal;
  }
}

// A namespace that is no string never reaches the handler: the params pipe refuses it (-32602) first.
function namespaceOf(params: { namespace?: unknown }, ctx: RpcCallContext): string {
  return typeof params.namespace === 'string' ? params.namespace : ctx.principal.defaultNamespace;
}
