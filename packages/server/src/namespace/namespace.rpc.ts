import type { Acting } from '../common/actor.js';
import type { Principal } from '../common/principal.js';
import { ActingAs, CallPrincipal, RpcHandlers, RpcMethod } from '../rpc/rpc-method.decorator.js';
import { METHODS } from '@cleveragents/contract';
import type {
  CreateNamespaceParams,
  DeletedNamespace,
  DeleteNamespaceParams,
  GetNamespaceParams,
  ListMembersParams,
  ListNamespacesParams,
  MemberPage,
  MemberView,
  NamespacePage,
  NamespaceView,
  RemovedMember,
  RemoveMemberParams,
  SetMemberParams,
  UpdateNamespaceParams,
} from '@cleveragents/contract';
import { NamespaceMembersService } from './namespace-members.service.js';
import { NamespaceService } from './namespace.service.js';

/** `_cleveragents/namespace/*` handlers (docs/protocol.md §6.1). */
@RpcHandlers()
export class NamespaceRpc {
  constructor(
    private readonly namespaces: NamespaceService,
    private readonly members: NamespaceMembersService,
  ) {}

  @RpcMethod(METHODS.namespace.create, {
    role: 'admin',
    errors: ['NAMESPACE_EXISTS'],
    scope: 'parent',
    description: 'Create a namespace under an existing parent; the creator becomes its owner',
  })
  create(params: CreateNamespaceParams, @ActingAs() by: Acting): Promise<NamespaceView> {
    return this.namespaces.create(
      {
        namespace: params.namespace,
        displayName: params.displayName ?? undefined,
        description: params.description ?? undefined,
      },
      by,
    );
  }

  @RpcMethod(METHODS.namespace.get, {
    role: 'viewer',
    errors: [],
    description: 'One namespace',
  })
  get(params: GetNamespaceParams): Promise<NamespaceView> {
    return this.namespaces.get(params.namespace);
  }

  @RpcMethod(METHODS.namespace.list, {
    role: 'authenticated',
    errors: ['INVALID_PAGE_TOKEN'],
    description: 'The namespaces the caller holds a role in, with those below them',
  })
  list(params: ListNamespacesParams, @CallPrincipal() principal: Principal): Promise<NamespacePage> {
    const grantKeys = principal.grantList().map((grant) => grant.namespace);
    return this.namespaces.listVisible(grantKeys, params);
  }

  @RpcMethod(METHODS.namespace.update, {
    role: 'admin',
    errors: ['REVISION_CONFLICT'],
    description: "Change a namespace's display name or description",
  })
  update(params: UpdateNamespaceParams, @ActingAs() by: Acting): Promise<NamespaceView> {
    return this.namespaces.update(
      {
        namespace: params.namespace,
        displayName: params.displayName ?? undefined,
        description: params.description ?? undefined,
        expectedRevision: params.expectedRevision ?? undefined,
      },
      by,
    );
  }

  @RpcMethod(METHODS.namespace.delete, {
    role: 'owner',
    errors: ['REVISION_CONFLICT', 'NAMESPACE_NOT_EMPTY', 'DEFAULT_NAMESPACE'],
    description: 'Delete an empty namespace',
  })
  delete(params: DeleteNamespaceParams, @ActingAs() by: Acting): Promise<DeletedNamespace> {
    return this.namespaces.delete(
      { namespace: params.namespace, expectedRevision: params.expectedRevision ?? undefined },
      by,
    );
  }

  @RpcMethod(METHODS.namespace.membersList, {
    role: 'viewer',
    errors: ['INVALID_PAGE_TOKEN'],
    description: "A namespace's members and their roles",
  })
  listMembers(params: ListMembersParams): Promise<MemberPage> {
    return this.members.listMembers(params.namespace, params);
  }

  @RpcMethod(METHODS.namespace.membersSet, {
    role: 'admin',
    errors: ['OWNER_REQUIRED', 'REVISION_CONFLICT', 'LAST_OWNER'],
    description: 'Grant a subject a role in a namespace, or change it (owner only for the owner role)',
  })
  setMember(params: SetMemberParams, @ActingAs() by: Acting): Promise<MemberView> {
    return this.members.setMember(
      {
        namespace: params.namespace,
        subject: params.subject,
        role: params.role,
        expectedRevision: params.expectedRevision ?? undefined,
      },
      by,
    );
  }

  @RpcMethod(METHODS.namespace.membersRemove, {
    role: 'admin',
    errors: ['MEMBER_NOT_FOUND', 'OWNER_REQUIRED', 'LAST_OWNER'],
    description: 'Remove a subject from a namespace (owner only for an owner)',
  })
  removeMember(params: RemoveMemberParams, @ActingAs() by: Acting): Promise<RemovedMember> {
    return this.members.removeMember({ namespace: params.namespace, subject: params.subject }, by);
  }
}
