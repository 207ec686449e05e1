/** `_cleveragents/namespace/*`: namespaces and their members. */
import { z } from 'zod';
import {
  BudgetUsage,
  ExpectedRevision,
  ISO_8601_INSTANT,
  Instant,
  iso8601Instant,
  NamespaceSlug,
  PageParams,
  Revision,
  Role,
  page,
  type Page,
} from './common.js';

export const MAX_DISPLAY_NAME_LENGTH = 200;
export const MAX_DESCRIPTION_LENGTH = 2000;

/** A subject as `auth/whoami` prints it: `<scheme>:<id>`, no whitespace or control characters. */
export const SUBJECT_PATTERN = /^[a-zA-Z][a-zA-Z0-9+.-]*:[^\s\p{Cc}]+$/u;
export const MAX_SUBJECT_LENGTH = 300;
export const SUBJECT_RULE =
  `subject must be "<scheme>:<id>" as auth/whoami prints it (e.g. "oidc:alice", "apikey:01J…"), ` +
  `without spaces, at most ${MAX_SUBJECT_LENGTH} characters`;

const Subject = z
  .string()
  .max(MAX_SUBJECT_LENGTH, { error: SUBJECT_RULE })
  .regex(SUBJECT_PATTERN, { error: SUBJECT_RULE });

/** `namespace/create`: the parent (`acme` for `acme/platform`) must exist. */
export const CreateNamespaceParams = z.strictObject({
  namespace: NamespaceSlug,
  /** Defaults to the last level of the slug. */
  displayName: z
    .string()
    .max(MAX_DISPLAY_NAME_LENGTH)
    .regex(/\S/, { error: 'displayName must not be blank' })
    .nullable()
    .optional(),
  description: z.string().max(MAX_DESCRIPTION_LENGTH).nullable().optional(),
});
export type CreateNamespaceParams = z.infer<typeof CreateNamespaceParams>;

/** `namespace/get`. */
export const GetNamespaceParams = z.strictObject({ namespace: NamespaceSlug });
export type GetNamespaceParams = z.infer<typeof GetNamespaceParams>;

/** `namespace/list`: the namespaces the caller holds a role in, with those below them. */
export const ListNamespacesParams = PageParams;
export type ListNamespacesParams = z.infer<typeof ListNamespacesParams>;

/** `namespace/update`: displayName and/or description; the slug never changes. */
export const UpdateNamespaceParams = CreateNamespaceParams.extend({
  expectedRevision: ExpectedRevision.nullable().optional(),
});
export type UpdateNamespaceParams = z.infer<typeof UpdateNamespaceParams>;

/** `namespace/delete`: only an empty namespace. */
export const DeleteNamespaceParams = z.strictObject({
  namespace: NamespaceSlug,
  expectedRevision: ExpectedRevision.nullable().optional(),
});
export type DeleteNamespaceParams = z.infer<typeof DeleteNamespaceParams>;

export const NamespaceView = z.object({
  namespace: z.string(),
  parent: z.string().nullable(),
  displayName: z.string(),
  description: z.string(),
  revision: Revision,
  createdAt: Instant,
  updatedAt: Instant,
  createdBy: z.string(),
});
export type NamespaceView = z.infer<typeof NamespaceView>;

export const DeletedNamespace = z.object({ namespace: z.string(), deleted: z.literal(true) });
export type DeletedNamespace = z.infer<typeof DeletedNamespace>;

/** `namespace/members/list`. */
export const ListMembersParams = PageParams.extend({ namespace: NamespaceSlug });
export type ListMembersParams = z.infer<typeof ListMembersParams>;

/** `namespace/members/set`: grants or changes a subject's role. */
export const SetMemberParams = z.strictObject({
  namespace: NamespaceSlug,
  subject: Subject,
  role: Role,
  /** The member's revision as last read; 0 to add only a subject that is not a member yet. */
  expectedRevision: ExpectedRevision.nullable().optional(),
});
export type SetMemberParams = z.infer<typeof SetMemberParams>;

/** `namespace/members/remove`. */
export const RemoveMemberParams = z.strictObject({ namespace: NamespaceSlug, subject: Subject });
export type RemoveMemberParams = z.infer<typeof RemoveMemberParams>;

export const MemberView = z.object({
  namespace: z.string(),
  subject: z.string(),
  role: Role,
  revision: Revision,
  createdAt: Instant,
  updatedAt: Instant,
  createdBy: z.string(),
});
export type MemberView = z.infer<typeof MemberView>;

export const RemovedMember = z.object({ namespace: z.string(), subject: z.string(), removed: z.literal(true) });
export type RemovedMember = z.infer<typeof RemovedMember>;

export const NamespacePage = page(NamespaceView);
export type NamespacePage = Page<NamespaceView>;
export const MemberPage = page(MemberView);
export type MemberPage = Page<MemberView>;

/**
 * `namespace/usage`: what the sessions of a namespace used, summed; a session counts whole in the window its
 * `createdAt` falls in (usage is kept per session, not per turn). `null` for an optional param is as if absent.
 */
export const NamespaceUsageParams = z.strictObject({
  namespace: NamespaceSlug,
  /** Only sessions created at or after this instant (ISO 8601; a bare date is midnight UTC). */
  since: iso8601Instant('since must be an ISO 8601 instant such as 2026-12-01T00:00:00Z')
    .nullable()
    .optional()
    .meta({ description: ISO_8601_INSTANT }),
  /** Only sessions created before this instant (ISO 8601); after `since` when both are given. */
  until: iso8601Instant('until must be an ISO 8601 instant such as 2026-12-02T00:00:00Z')
    .nullable()
    .optional()
    .meta({ description: ISO_8601_INSTANT }),
  /** Also the namespaces below it (`acme/platform` for `acme`); default false. */
  includeChildren: z.boolean().nullable().optional(),
});
export type NamespaceUsageParams = z.infer<typeof NamespaceUsageParams>;

/** What a set of sessions used, and how many sessions and tasks it holds. */
export const UsageCounts = BudgetUsage.extend({
  sessions: z.int().min(0),
  /** The tasks (messages that ran a turn, plans executed) of those sessions. */
  tasks: z.int().min(0),
});
export type UsageCounts = z.infer<typeof UsageCounts>;

export const NamespaceUsage = z.object({
  namespace: z.string(),
  includeChildren: z.boolean(),
  /** The window as asked, normalised; null for an open end. */
  since: Instant.nullable(),
  until: Instant.nullable(),
  totals: UsageCounts,
  /** By the sessions' actor (its registry name), most tokens first. */
  byActor: z.array(UsageCounts.extend({ actor: z.string() })),
  /** By the sessions' owner (the subject that made them), most tokens first. */
  byOwner: z.array(UsageCounts.extend({ owner: z.string() })),
  /** By namespace: the one asked, and with includeChildren each below it that has sessions. */
  byNamespace: z.array(UsageCounts.extend({ namespace: z.string() })),
});
export type NamespaceUsage = z.infer<typeof NamespaceUsage>;
