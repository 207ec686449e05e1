import type { Role } from '../common/principal.js';
import type { Reason, WireSchema } from '@cleveragents/contract';

export const RPC_HANDLERS = Symbol('cleveragents:rpc-handlers');
export const RPC_METHOD = Symbol('cleveragents:rpc-method');

export interface RpcMethodOptions {
  /** The params of a method the contract does not declare (a test's); none means only `namespace` may be given. */
  params?: WireSchema;
  /**
   * Least namespace role that may call the method, or `authenticated` for any authenticated principal
   * whatever its roles (whoami, diagnostics, listing one's own namespaces).
   */
  role: Role | 'authenticated';
  /**
   * Where the role is checked: `namespace` (default) is `params.namespace`, else the caller's default
   * namespace; `parent` is the parent of `params.namespace` (creating a namespace), a top-level one
   * being checked in the configured default namespace (the installation's administrators); `target` is
   * `params.namespace` when given, else the namespace of the thing the params name by a globally unique
   * id, which the handler finds and checks the role in (answering not-found when the role is not held).
   */
  scope?: 'namespace' | 'parent' | 'target';
  /** One line for the Agent Card and the method list in docs/api.md. */
  description: string;
  /** The result of a method the contract does not declare (a test's), published with its params. */
  result?: WireSchema;
  /**
   * The reasons this method answers beyond those every method may (authentication, rate limit,
   * INVALID_PARAMS, and for a namespace role ROLE_REQUIRED and NAMESPACE_NOT_FOUND); docs/api.md lists them.
   */
  errors?: readonly Reason[];
}

export interface RpcMethodMetadata extends RpcMethodOptions {
  name: string;
}
