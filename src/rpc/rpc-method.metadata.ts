import type { Role } from '../common/principal.js';

export const RPC_HANDLERS = Symbol('cleveragents:rpc-handlers');
export const RPC_METHOD = Symbol('cleveragents:rpc-method');

export type ParamsClass = new () => object;

export interface RpcMethodOptions {
  /** class-validator DTO for `params`; omitted means the method takes no params (an empty object). */
  params?: ParamsClass;
  /**
   * Least namespace role that may call the method, or `authenticated` for any authenticated principal
   * whatever its roles (whoami, diagnostics, listing one's own namespaces).
   */
  role: Role | 'authenticated';
  /**
   * Where the role is checked: `namespace` (default) is `params.namespace`, else the caller's default
   * namespace; `parent` is the parent of `params.namespace` (creating a namespace), a top-level one
   * being checked in the configured default namespace (the installation's administrators).
   */
  scope?: 'namespace' | 'parent';
  /** One line for the Agent Card and the method list in docs/api.md. */
  description: string;
}

export interface RpcMethodMetadata extends RpcMethodOptions {
  name: string;
}
