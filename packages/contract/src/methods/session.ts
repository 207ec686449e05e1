/** `_cleveragents/session/*` and `_cleveragents/context/assemble`: sessions (A2A contexts) and their tasks. */
import type { Budget, BudgetUsage, NamespaceParam, Page, PageParams } from './common.js';

export const SESSION_STATUSES = ['open', 'closed'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** `session/create`. */
export interface CreateSessionParams extends NamespaceParam {
  /** Registry actor name; the namespace's `default` actor when absent. */
  actor?: string;
  /** Registry profile name; the actor's own profile when absent. */
  profile?: string;
  title?: string;
  budget?: Budget;
}

/** Names one session: `sessionId` is its A2A contextId (`session/get`). */
export interface SessionKeyParams extends NamespaceParam {
  sessionId: string;
}

/** `session/close`. */
export interface CloseSessionParams extends SessionKeyParams {
  expectedRevision?: number;
}

/** `session/list`: newest first. */
export interface ListSessionsParams extends NamespaceParam, PageParams {
  status?: SessionStatus;
}

/** `session/history`: the session's tasks, oldest first. */
export interface SessionHistoryParams extends NamespaceParam, PageParams {
  sessionId: string;
}

/** A session. */
export interface SessionView {
  sessionId: string;
  namespace: string;
  owner: string;
  actor: string;
  profile: string | null;
  title: string | null;
  budget: Budget | null;
  /** What the session's tasks used (tokens, tool calls, wall time), counted against `budget`. */
  usage: BudgetUsage;
  status: SessionStatus;
  /** How the session began: `session/create`, or a message that named no (or a new) contextId. */
  origin: 'create' | 'message';
  revision: number;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
}

/** One A2A Task of a session's history, as stored (its status, messages and artifacts). */
export type HistoryTask = Record<string, unknown>;

export type SessionPage = Page<SessionView>;
export type SessionHistoryPage = Page<HistoryTask>;

/** `context/assemble`. */
export interface AssembleContextParams extends SessionKeyParams {
  maxTokens?: number;
}

/** What `context/assemble` answers: exactly what the session's next model call would be given. */
export interface AssembledContextView {
  sessionId: string;
  actor: string;
  /** The actor backend that would run the turn (`local`, `langgraph`). */
  backend: string;
  /** Absent when the actor names no model and the server has none configured. */
  model?: string;
  messages: { role: 'system' | 'user' | 'assistant' | 'tool'; content: string }[];
  /** Rough count (characters ÷ 4) used for `maxTokens` trimming. */
  estimatedTokens: number;
  /** Older messages left out to fit `maxTokens`. */
  omittedMessages: number;
}
