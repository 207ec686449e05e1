import type { Principal } from '../common/principal.js';

/** What an extension handler knows of its call: nothing of the transport beyond its name. */
export interface RpcCallContext {
  readonly principal: Principal;
  readonly transport: 'http' | 'stdio';
  readonly requestId: string;
}
