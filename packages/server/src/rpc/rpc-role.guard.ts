import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { roleSatisfies, type Principal, type Role } from '../common/principal.js';
import { ValidationError } from '../common/domain.errors.js';
import { AppConfig } from '../config/app.config.js';
import { isNamespaceSlug, MAX_NAMESPACE_SLUG_LENGTH, parentOf } from '../common/namespace-slug.js';
import type { RpcCallContext } from './rpc-context.js';
import { namespaceNotFound, roleRequired } from './rpc.errors.js';
import { RPC_METHOD, type RpcMethodMetadata } from './rpc-method.metadata.js';

/**
 * docs/protocol.md §6.1: a caller with no role in a namespace learns nothing of it (-32001, as for a
 * namespace that does not exist); a role too low is -32003.
 */
export function requireRole(principal: Principal, operation: string, namespace: string, required: Role): void {
  const held = principal.roleIn(namespace);
  if (!held) {
    throw namespaceNotFound(namespace);
  }
  if (!roleSatisfies(held, required)) {
    throw roleRequired(operation, namespace, required, held);
  }
}

/**
 * The role an `_cleveragents/*` method requires (its @RpcMethod `role` and `scope`), checked before its
 * params are validated. The namespace the role is checked in must first be a namespace slug, as the
 * answer names it.
 */
@Injectable()
export class RpcRoleGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly config: AppConfig,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const method = this.reflector.get<RpcMethodMetadata | undefined>(RPC_METHOD, context.getHandler());
    if (!method) throw new Error(`${context.getClass().name}.${context.getHandler().name} has no @RpcMethod`);
    const rpc = context.switchToRpc();
    const params = rpc.getData<Record<string, unknown>>();
    const call = rpc.getContext<RpcCallContext>();
    if (params.namespace !== undefined && !isNamespaceSlug(params.namespace)) {
      throw new ValidationError([
        {
          field: 'namespace',
          description: `must be a namespace slug of at most ${MAX_NAMESPACE_SLUG_LENGTH} characters`,
        },
      ]);
    }
    if (method.role === 'authenticated') return true;
    const given = typeof params.namespace === 'string' ? params.namespace : undefined;
    // Without a namespace the target's own is checked by the handler, once it has found the target.
    if (method.scope === 'target' && given === undefined) return true;
    const namespace =
      method.scope === 'parent'
        ? ((given && parentOf(given)) ?? this.config.defaultNamespace)
        : (given ?? call.principal.defaultNamespace);
    requireRole(call.principal, method.name, namespace, method.role);
    return true;
  }
}
