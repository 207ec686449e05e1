import type { Acting } from '../common/actor.js';
import { ActingAs, CallNamespace, RpcHandlers, RpcMethod } from '../rpc/rpc-method.decorator.js';
import { installSpecChecks, METHODS } from '@cleveragents/contract';
import type {
  CreateEntryParams,
  DeletedEntry,
  DeleteEntryParams,
  EntryKeyParams,
  ListEntriesParams,
  RegistryEntry,
  RegistryPage,
  UpdateEntryParams,
} from '@cleveragents/contract';
import { RegistryService } from './registry.service.js';
import { SERVER_SPEC_CHECKS } from './spec-checks.js';

installSpecChecks(SERVER_SPEC_CHECKS);

/**
 * `_cleveragents/registry/*` handlers (docs/protocol.md §6.2). `namespace` defaults to the caller's default
 * namespace, where the dispatcher checked the role too. Reads take `viewer`, writes `member` (and
 * `admin` for a profile, the default actor or what an actor runs with, checked by the service).
 */
@RpcHandlers()
export class RegistryRpc {
  constructor(private readonly registry: RegistryService) {}

  @RpcMethod(METHODS.registry.create, {
    role: 'member',
    errors: ['REGISTRY_ENTRY_EXISTS', 'MODEL_ENDPOINT_NOT_ALLOWED', 'A2A_AGENT_NOT_ALLOWED'],
    description:
      "Define an actor, tool, skill or profile (admin for a profile, the default actor, an actor's endpoint, profile or tools); its spec is validated per kind",
  })
  create(
    params: CreateEntryParams,
    @CallNamespace() namespace: string,
    @ActingAs() by: Acting,
  ): Promise<RegistryEntry> {
    return this.registry.create(
      { ...keyOf(params, namespace), spec: params.spec, labels: params.labels ?? undefined },
      by,
    );
  }

  @RpcMethod(METHODS.registry.get, {
    role: 'viewer',
    errors: ['REGISTRY_ENTRY_NOT_FOUND'],
    description: 'One registry entry by kind and name',
  })
  get(params: EntryKeyParams, @CallNamespace() namespace: string): Promise<RegistryEntry> {
    return this.registry.get(keyOf(params, namespace));
  }

  @RpcMethod(METHODS.registry.list, {
    role: 'viewer',
    errors: ['INVALID_PAGE_TOKEN'],
    description: 'Registry entries in kind and name order, filtered by kind and labels',
  })
  list(params: ListEntriesParams, @CallNamespace() namespace: string): Promise<RegistryPage> {
    return this.registry.list({
      namespace,
      kind: params.kind ?? undefined,
      labels: params.labels ?? undefined,
      pageSize: params.pageSize,
      pageToken: params.pageToken,
    });
  }

  @RpcMethod(METHODS.registry.update, {
    role: 'member',
    errors: ['REGISTRY_ENTRY_NOT_FOUND', 'REVISION_CONFLICT', 'MODEL_ENDPOINT_NOT_ALLOWED', 'A2A_AGENT_NOT_ALLOWED'],
    description:
      "Replace an entry's spec and/or labels (admin for a profile, the default actor's spec, an actor's endpoint, profile or tools); expectedRevision guards it",
  })
  update(
    params: UpdateEntryParams,
    @CallNamespace() namespace: string,
    @ActingAs() by: Acting,
  ): Promise<RegistryEntry> {
    return this.registry.update(
      {
        ...keyOf(params, namespace),
        spec: params.spec,
        labels: params.labels,
        expectedRevision: params.expectedRevision,
      },
      by,
    );
  }

  @RpcMethod(METHODS.registry.delete, {
    role: 'member',
    errors: ['REGISTRY_ENTRY_NOT_FOUND', 'REVISION_CONFLICT'],
    description: 'Delete a registry entry (admin for a profile or the default actor); sync clients see a tombstone',
  })
  delete(params: DeleteEntryParams, @CallNamespace() namespace: string, @ActingAs() by: Acting): Promise<DeletedEntry> {
    return this.registry.delete({ ...keyOf(params, namespace), expectedRevision: params.expectedRevision }, by);
  }
}

function keyOf(params: EntryKeyParams, namespace: string) {
  return { namespace, kind: params.kind, name: params.name };
}
