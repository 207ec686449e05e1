/** `_cleveragents/plan/*`: plans, their lifecycle and their execution as an A2A task. */
import type { ClientCapabilities, PlanEntry, PlanEntryPriority, PlanEntryStatus, PlanStatus } from '../data-parts.js';
import type { Budget, BudgetUsage, NamespaceParam, Page, PageParams } from './common.js';

/** One entry as given: `priority` defaults to medium, `status` to pending. */
export interface PlanEntryInput {
  content: string;
  priority?: PlanEntryPriority;
  status?: PlanEntryStatus;
}

/** `plan/create`: a draft plan. */
export interface CreatePlanParams extends NamespaceParam {
  /** An open session of the caller the plan belongs to. */
  sessionId?: string;
  goal: string;
  entries?: PlanEntryInput[];
  /** Registry profile name; the actor's own profile when absent. */
  profile?: string;
  budget?: Budget;
}

/** Names one plan of the caller (`plan/get`, `plan/status`). */
export interface PlanKeyParams extends NamespaceParam {
  planId: string;
}

/** A plan's state change (`approve`, `pause`, `resume`, `cancel`) or its deletion. */
export interface PlanChangeParams extends PlanKeyParams {
  expectedRevision?: number;
}

/** `plan/execute`: the caller declares, as a SendMessage does in its metadata, the client-side tools it handles. */
export interface ExecutePlanParams extends PlanChangeParams {
  clientCapabilities?: ClientCapabilities;
}

/** `plan/update`: what is given replaces what the plan had (draft or paused plans only). */
export interface UpdatePlanParams extends PlanChangeParams {
  goal?: string;
  entries?: PlanEntryInput[];
  profile?: string;
  budget?: Budget;
}

/** `plan/list`: newest first. */
export interface ListPlansParams extends NamespaceParam, PageParams {
  status?: PlanStatus;
  sessionId?: string;
}

/** A plan as `plan/*` and the tasks that run plans show it. */
export interface PlanView {
  planId: string;
  namespace: string;
  owner: string;
  sessionId: string | null;
  goal: string;
  entries: PlanEntry[];
  profile: string | null;
  budget: Budget | null;
  /** What the plan's task used (tokens, tool calls, wall time), counted against `budget`. */
  usage: BudgetUsage;
  status: PlanStatus;
  revision: number;
  taskId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** `plan/status`: where a plan is, without its text. */
export interface PlanStatusView {
  planId: string;
  status: PlanStatus;
  revision: number;
  entries: { total: number; pending: number; inProgress: number; completed: number; failed: number; skipped: number };
  taskId: string | null;
}

/** What `plan/execute` answers: the task that runs the plan (stream, get or cancel it with A2A). */
export interface PlanExecution {
  planId: string;
  taskId: string;
  contextId: string;
  status: 'executing';
}

export interface DeletedPlan {
  planId: string;
  deleted: true;
}

export type PlanPage = Page<PlanView>;
