/** `_cleveragents/namespace/*`: namespaces and their members. */
import type { Page, PageParams, Role } from './common.js';

/** `namespace/create`: the parent (`acme` for `acme/platform`) must exist. */
export interface CreateNamespaceParams {
  namespace: string;
  /** Defaults to the last level of the slug. */
  displayName?: string;
  description?: string;
}

/** `namespace/get`. */
export interface GetNamespaceParams {
  namespace: string;
}

/** `namespace/list`: the namespaces the caller holds a role in, with those below them. */
export type ListNamespacesParams = PageParams;

/** `namespace/update`: displayName and/or description; the slug never changes. */
export interface UpdateNamespaceParams extends CreateNamespaceParams {
  expectedRevision?: number;
}

/** `namespace/delete`: only an empty namespace. */
export interface DeleteNamespaceParams {
  namespace: string;
  expectedRevision?: number;
}

export interface NamespaceView {
  namespace: string;
  parent: string | null;
  displayName: string;
  description: string;
  revision: number;
  createdAt: string;
  updatedAt: string;
  createdBy: string;
}

export interface DeletedNamespace {
  namespace: string;
  deleted: true;
}

/** `namespace/members/list`. */
export interface ListMembersParams extends PageParams {
  namespace: string;
}

/** `namespace/members/set`: grants or changes a subject's role. */
export interface SetMemberParams {
  namespace: string;
  subject: string;
  role: Role;
  /** The member's revision as last read; 0 to add only a subject that is not a member yet. */
  expectedRevision?: number;
}

/** `namespace/members/remove`. */
export interface RemoveMemberParams {
  namespace: string;
  subject: string;
}

export interface MemberView {
  namespace: string;
  subject: string;
  role: Role;
  revision: number;
  createdAt: string;
  updatedAt: string;
  createdBy: string;
}

export interface RemovedMember {
  namespace: string;
  subject: string;
  removed: true;
}

export type NamespacePage = Page<NamespaceView>;
export type MemberPage = Page<MemberView>;
