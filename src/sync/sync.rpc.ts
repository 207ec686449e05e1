import { RpcHandlers, RpcMethod } from '../a2a/rpc-method.decorator.js';
import { actingOf, type RpcCallContext } from '../a2a/rpc-context.js';
import { DEFAULT_PULL_LIMIT, PullParams } from './dto/pull.params.js';
import { PushParams } from './dto/push.params.js';
import { StatusParams } from './dto/status.params.js';
import { SyncService, type PullResult, type PushResult, type SyncStatus } from './sync.service.js';

/**
 * `_cleveragents/sync/*` handlers (SPEC.md §6.3). `namespace` defaults to the caller's default
 * namespace. Pull and status read (`viewer`); push writes the registry (`member`, `admin` for a profile).
 */
@RpcHandlers()
export class SyncRpc {
  constructor(private readonly sync: SyncService) {}

  @RpcMethod('_cleveragents/sync/pull', {
    role: 'viewer',
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

  @RpcMethod('_cleveragents/sync/push', {
    role: 'member',
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

  @RpcMethod('_cleveragents/sync/status', {
    role: 'viewer',
    params: StatusParams,
    description: "The namespace's latest change sequence and its entry counts",
  })
  status(params: StatusParams, ctx: RpcCallContext): Promise<SyncStatus> {
    return this.sync.status(params.namespace ?? ctx.principal.defaultNamespace);
  }
}
