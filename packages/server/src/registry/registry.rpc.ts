import type { Acting } from '../common/actor.js';
import { ActingAs, CallNamespace, RpcHandlers, RpcMethod } from '../rpc/rpc-method.decorator.js';
import { METHODS } from '@cleveragents/contract';
import { CreateEntryParams } from './dto/create-entry.params.js';
import { DeleteEntryParams } from './dto/delete-entry.params.js';
import { GetEntryParams } from './dto/get-entry.params.js';
import { ListEntriesParams } from './dto/list-entries.params.js';
import { UpdateEntryParams } from './dto/update-entry.params.js';
import type { DeletedEntry, RegistryEntry, RegistryPage } from '@cleveragents/contract';
import { RegistryService } from './registry.service.js';
import { deletedEntrySchema, registryEntrySchema, registryPageSchema } from './registry.results.js';

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
    result: registryEntrySchema,
    errors: ['REGISTRY_ENTRY_EXISTS', 'MODEL_ENDPOINT_NOT_ALLOWED', 'A2A_AGENT_NOT_ALLOWED'],
    params: CreateEntryParams,
    description:
      "Define an actor, tool, skill or profile (admin for a profile, the default actor, an actor's endpoint, profile or tools); its spec is validated per kind",
  })
  create(
    params: CreateEntryParams,
    @CallNamespace() namespace: string,
    @ActingAs() by: Acting,
  ): Promise<RegistryEntry> {
    return this.registry.create({ ...keyOf(params, namespace), spec: params.spec, labels: params.labels }, by);
  }

  @RpcMethod(METHODS.registry.get, {
    role: 'viewer',
    result: registryEntrySchema,
    errors: ['REGISTRY_ENTRY_NOT_FOUND'],
    params: GetEntryParams,
    description: 'One registry entry by kind and name',
  })
  get(params: GetEntryParams, @CallNamespace() namespace: string): Promise<RegistryEntry> {
    return this.registry.get(keyOf(params, namespace));
  }

  @RpcMethod(METHODS.registry.list, {
    role: 'viewer',
    result: registryPageSchema,
    errors: ['INVALID_PAGE_TOKEN'],
    params: ListEntriesParams,
    description: 'Registry entries in kind and name order, filtered by kind and labels',
  })
  list(params: ListEntriesParams, @CallNamespace() namespace: string): Promise<RegistryPage> {
    return this.registry.list({
      namespace,
      kind: params.kind,
      labels: params.labels,
      pageSize: params.pageSize,
      pageToken: params.pageToken,
    });
  }

  @RpcMethod(METHODS.registry.update, {
    role: 'member',
    result: registryEntrySchema,
    errors: ['REGISTRY_ENTRY_NOT_FOUND', 'REVISION_CONFLICT', 'MODEL_ENDPOINT_NOT_ALLOWED', 'A2A_AGENT_NOT_ALLOWED'],
    params: UpdateEntryParams,
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
    result: deletedEntrySchema,
    errors: ['REGISTRY_ENTRY_NOT_FOUND', 'REVISION_CONFLICT'],
    params: DeleteEntryParams,
    description: 'Delete a registry entry (admin for a profile or the default actor); sync clients see a tombstone',
  })
  delete(params: DeleteEntryParams, @CallNamespace() namespace: string, @ActingAs() by: Acting): Promise<DeletedEntry> {
    return this.registry.delete({ ...keyOf(params, namespace), expectedRevision: params.expectedRevision }, by);
  }
}

function keyOf(params: GetEntryParams, namespace: string) {
  return { namespace, kind: params.kind, name: params.name };
}
