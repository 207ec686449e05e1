import type { Principal } from '../common/principal.js';
import type { Acting } from '../common/actor.js';

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
