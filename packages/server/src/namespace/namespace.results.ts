import type { DeletedNamespace, MemberView, NamespaceView, RemovedMember } from '@cleveragents/contract';
import { roleSchema } from '../rpc/schemas/common.results.js';
import { instant, integer, literal, nullable, object, page, string, type Schema } from '../rpc/schemas/json-schema.js';

/** The published shape of `_cleveragents/namespace/*` results. */
export const namespaceSchema: Schema<NamespaceView> = object({
  namespace: string(),
  parent: nullable(string()),
  displayName: string(),
  description: string(),
  revision: integer({ minimum: 1 }),
  createdAt: instant(),
  updatedAt: instant(),
  createdBy: string(),
});

export const namespacePageSchema = page(namespaceSchema);

export const deletedNamespaceSchema: Schema<DeletedNamespace> = object({ namespace: string(), deleted: literal(true) });

export const memberSchema: Schema<MemberView> = object({
  namespace: string(),
  subject: string(),
  role: roleSchema,
  revision: integer({ minimum: 1 }),
  createdAt: instant(),
  updatedAt: instant(),
  createdBy: string(),
});

export const memberPageSchema = page(memberSchema);

export const removedMemberSchema: Schema<RemovedMember> = object({
  namespace: string(),
  subject: string(),
  removed: literal(true),
});
