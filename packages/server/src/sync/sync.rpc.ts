import type { Acting } from '../common/actor.js';
import { ActingAs, CallNamespace, RpcHandlers, RpcMethod } from '../rpc/rpc-method.decorator.js';
import { METHODS } from '@cleveragents/contract';
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
  pull(params: PullParams, @CallNamespace() namespace: string): Promise<PullResult> {
    return this.sync.pull(namespace, params.cursor ?? 0, params.limit ?? DEFAULT_PULL_LIMIT);
  }

  @RpcMethod(METHODS.sync.push, {
    role: 'member',
    result: pushResultSchema,
    errors: ['MODEL_ENDPOINT_NOT_ALLOWED', 'A2A_AGENT_NOT_ALLOWED'],
    params: PushParams,
    description: 'Apply changes made offline; a stale baseRevision is a conflict, never an overwrite',
  })
  push(params: PushParams, @ActingAs() by: Acting, @CallNamespace() namespace: string): Promise<PushResult> {
    return this.sync.push(namespace, params.changes, params.atomic ?? false, by);
  }

  @RpcMethod(METHODS.sync.status, {
    role: 'viewer',
    result: syncStatusSchema,
    errors: [],
    params: StatusParams,
    description: "The namespace's latest change sequence and its entry counts",
  })
  status(_params: StatusParams, @CallNamespace() namespace: string): Promise<SyncStatus> {
    return this.sync.status(namespace);
  }
}
