/** `_cleveragents/session/*` and `_cleveragents/context/assemble`: sessions (A2A contexts) and their tasks. */
import { z } from 'zod';
import {
  Budget,
  BudgetParam,
  BudgetUsage,
  ExpectedRevision,
  Instant,
  NamespaceParam,
  PageParams,
  Revision,
  page,
  type Page,
} from './common.js';
import { RegistryName } from './registry.js';

export const SESSION_STATUSES = ['open', 'closed'] as const;
export const SessionStatus = z.enum(SESSION_STATUSES, {
  error: `status must be one of ${SESSION_STATUSES.join(', ')}`,
});
export type SessionStatus = z.infer<typeof SessionStatus>;

export const MAX_SESSION_ID_LENGTH = 256;
export const MAX_SESSION_TITLE_LENGTH = 200;
export const MAX_ASSEMBLED_TOKENS = 10_000_000;

/** A session's id as params name it: its A2A contextId. */
export const SessionId = z.string().min(1).max(MAX_SESSION_ID_LENGTH);

/** `session/create`; each optional field may also be null, as if absent. */
export const CreateSessionParams = z.strictObject({
  ...NamespaceParam.shape,
  /** Registry actor name; the namespace's `default` actor when absent. */
  actor: RegistryName.nullish(),
  /** Registry profile name; the actor's own profile when absent. */
  profile: RegistryName.nullish(),
  title: z.string().max(MAX_SESSION_TITLE_LENGTH).nullish(),
  budget: BudgetParam.nullish(),
});
export type CreateSessionParams = z.infer<typeof CreateSessionParams>;

/** Names one session: `sessionId` is its A2A contextId (`session/get`). */
export const SessionKeyParams = z.strictObject({ ...NamespaceParam.shape, sessionId: SessionId });
export type SessionKeyParams = z.infer<typeof SessionKeyParams>;

/** `session/close`. */
export const CloseSessionParams = SessionKeyParams.extend({ expectedRevision: ExpectedRevision.min(1).nullish() });
export type CloseSessionParams = z.infer<typeof CloseSessionParams>;

/** `session/update`: a new title, or null to clear it. */
export const UpdateSessionParams = SessionKeyParams.extend({
  title: z.string().min(1).max(MAX_SESSION_TITLE_LENGTH).nullable(),
  expectedRevision: ExpectedRevision.min(1).nullish(),
});
export type UpdateSessionParams = z.infer<typeof UpdateSessionParams>;

/** `session/list`: newest first. */
export const ListSessionsParams = PageParams.extend({
  ...NamespaceParam.shape,
  status: SessionStatus.nullish(),
});
export type ListSessionsParams = z.infer<typeof ListSessionsParams>;

/** `session/history`: the session's tasks, oldest first. */
export const SessionHistoryParams = PageParams.extend({ ...NamespaceParam.shape, sessionId: SessionId });
export type SessionHistoryParams = z.infer<typeof SessionHistoryParams>;

/** A session. */
export const SessionView = z.object({
  sessionId: z.string(),
  namespace: z.string(),
  owner: z.string(),
  actor: z.string(),
  profile: z.string().nullable(),
  title: z.string().nullable(),
  budget: Budget.nullable(),
  /** What the session's tasks used (tokens, tool calls, wall time), counted against `budget`. */
  usage: BudgetUsage,
  status: SessionStatus,
  /** How the session began: `session/create`, or a message that named no (or a new) contextId. */
  origin: z.enum(['create', 'message']),
  revision: Revision,
  createdAt: Instant,
  updatedAt: Instant,
  closedAt: Instant.nullable(),
});
export type SessionView = z.infer<typeof SessionView>;

/** One A2A Task of a session's history, as stored (its status, messages and artifacts). */
export const HistoryTask = z.record(z.string(), z.unknown());
export type HistoryTask = z.infer<typeof HistoryTask>;

export const SessionPage = page(SessionView);
export type SessionPage = Page<SessionView>;
export const SessionHistoryPage = page(HistoryTask);
export type SessionHistoryPage = Page<HistoryTask>;

/** `context/assemble`. */
export const AssembleContextParams = SessionKeyParams.extend({
  maxTokens: z.int().min(1).max(MAX_ASSEMBLED_TOKENS).nullish(),
});
export type AssembleContextParams = z.infer<typeof AssembleContextParams>;

/** What `context/assemble` answers: exactly what the session's next model call would be given. */
export const AssembledContextView = z.object({
  sessionId: z.string(),
  actor: z.string(),
  /** The actor backend that would run the turn (`local`, `langgraph`). */
  backend: z.string(),
  /** Absent when the actor names no model and the server has none configured. */
  model: z.string().optional(),
  messages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant', 'tool']), content: z.string() })),
  /** Rough count (characters ÷ 4) used for `maxTokens` trimming. */
  estimatedTokens: z.int().min(0),
  /** Older messages left out to fit `maxTokens`. */
  omittedMessages: z.int().min(0),
});
export type AssembledContextView = z.infer<typeof AssembledContextView>;
