import { RpcHandlers, RpcMethod } from '../rpc/rpc-method.decorator.js';
import { METHODS } from '@cleveragents/contract';
import { actingOf, type RpcCallContext } from '../rpc/rpc-context.js';
import { DEFAULT_PULL_LIMIT, PullParams } from './dto/pull.params.js';
import { PushParams } from './dto/push.params.js';
import { StatusParams } from './dto/status.params.js';
import type { PullResult, PushResult, SyncStatus } from '@cleveragents/contract';
import { SyncService } from './sync.service.js';
import { pullResultSchema, pushResultSchema, syncStatusSchema } from './sync.results.js';

/**
 * `_cleveragents/sync/*` handlers (docs/protocol.md §6.3). `namespace` defaults to the caller's default
 * namespace. Pull and status read (`viewer`); push writes the registry (`member`, `admin` for a profile).
 */
@RpcHandlers()
export class SyncRpc {
  constructor(private readonly sync: SyncService) {}

  @RpcMethod(METHODS.sync.pull, {
    role: 'viewer',
    result: pullResultSchema,
    errors: ['CURSOR_AHEAD'],
    params: PullParams,
    description: 'Registry changes after a cursor, in sequence order, with tombstones for deletes',
  })
  pull(params: PullParams, ctx: RpcCallContext): Promise<PullResult> {
    return this.sync.pull(
      params.namespace ?? ctx.principal.defaultNamespace,
      params.cursor ?? 0,
      params.limit ?? DEFAULT_PULL_LIMIT,
    );
  }

  @RpcMethod(METHODS.sync.push, {
    role: 'member',
    result: pushResultSchema,
    errors: ['MODEL_ENDPOINT_NOT_ALLOWED', 'A2A_AGENT_NOT_ALLOWED'],
    params: PushParams,
    description: 'Apply changes made offline; a stale baseRevision is a conflict, never an overwrite',
  })
  push(params: PushParams, ctx: RpcCallContext): Promise<PushResult> {
    return this.sync.push(
      params.namespace ?? ctx.principal.defaultNamespace,
      params.changes,
      params.atomic ?? false,
      actingOf(ctx),
    );
  }

  @RpcMethod(METHODS.sync.status, {
    role: 'viewer',
    result: syncStatusSchema,
    errors: [],
    params: StatusParams,
    description: "The namespace's latest change sequence and its entry counts",
  })
  status(params: StatusParams, ctx: RpcCallContext): Promise<SyncStatus> {
    return this.sync.status(params.namespace ?? ctx.principal.defaultNamespace);
  }
}
