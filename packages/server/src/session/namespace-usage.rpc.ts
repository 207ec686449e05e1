import { RpcHandlers, RpcMethod } from '../rpc/rpc-method.decorator.js';
import { METHODS } from '@cleveragents/contract';
import type { NamespaceUsage, NamespaceUsageParams } from '@cleveragents/contract';
import { NamespaceUsageService } from './namespace-usage.service.js';

/**
 * `_cleveragents/namespace/usage` (docs/protocol.md §6.1): it sums sessions, so it lives with them. Admin, as
 * audit/list: it shows what every member's sessions used, where a member sees only their own (session/get).
 */
@RpcHandlers()
export class NamespaceUsageRpc {
  constructor(private readonly usage: NamespaceUsageService) {}

  @RpcMethod(METHODS.namespace.usage, {
    role: 'admin',
    errors: [],
    description:
      "What a namespace's sessions used (tokens, tool calls, wall time): in all, by actor, owner and namespace",
  })
  report(params: NamespaceUsageParams): Promise<NamespaceUsage> {
    return this.usage.report({
      namespace: params.namespace,
      includeChildren: params.includeChildren ?? false,
      since: typeof params.since === 'string' ? new Date(params.since) : undefined,
      until: typeof params.until === 'string' ? new Date(params.until) : undefined,
    });
  }
}
