import type { Acting } from '../common/actor.js';
import { ActingAs, CallNamespace, RpcHandlers, RpcMethod } from '../rpc/rpc-method.decorator.js';
import { DEFAULT_PULL_LIMIT, installSpecChecks, METHODS } from '@cleveragents/contract';
import type {
  PullParams,
  PullResult,
  PushParams,
  PushResult,
  SyncStatus,
  SyncStatusParams,
} from '@cleveragents/contract';
import { SERVER_SPEC_CHECKS } from '../registry/spec-checks.js';
import { SyncService } from './sync.service.js';

installSpecChecks(SERVER_SPEC_CHECKS);

/**
 * `_cleveragents/sync/*` handlers (docs/protocol.md §6.3). `namespace` defaults to the caller's default
 * namespace. Pull and status read (`viewer`); push writes the registry (`member`, `admin` for a profile).
 */
@RpcHandlers()
export class SyncRpc {
  constructor(private readonly sync: SyncService) {}

  @RpcMethod(METHODS.sync.pull, {
    role: 'viewer',
    errors: ['CURSOR_AHEAD'],
    description: 'Registry changes after a cursor, in sequence order, with tombstones for deletes',
  })
  pull(params: PullParams, @CallNamespace() namespace: string): Promise<PullResult> {
    return this.sync.pull(namespace, params.cursor ?? 0, params.limit ?? DEFAULT_PULL_LIMIT);
  }

  @RpcMethod(METHODS.sync.push, {
    role: 'member',
    errors: ['MODEL_ENDPOINT_NOT_ALLOWED', 'A2A_AGENT_NOT_ALLOWED'],
    description: 'Apply changes made offline; a stale baseRevision is a conflict, never an overwrite',
  })
  push(params: PushParams, @ActingAs() by: Acting, @CallNamespace() namespace: string): Promise<PushResult> {
    // Labels given as null are none, as the service takes absent ones.
    const changes = params.changes.map((change) => ({ ...change, labels: change.labels ?? undefined }));
    return this.sync.push(namespace, changes, params.atomic ?? false, by);
  }

  @RpcMethod(METHODS.sync.status, {
    role: 'viewer',
    errors: [],
    description: "The namespace's latest change sequence and its entry counts",
  })
  status(_params: SyncStatusParams, @CallNamespace() namespace: string): Promise<SyncStatus> {
    return this.sync.status(namespace);
  }
}
