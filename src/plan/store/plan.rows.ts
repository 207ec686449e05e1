import type { PlanView } from '../../contract/methods/plan.js';
import type { BudgetUsage, SessionBudget } from '../../session/session.entity.js';
import { usageOf } from '../../session/budgets.js';
import type { PlanEntry } from './plan.entity.js';
import type { PlanStatus } from './plan.states.js';

/** A plan as `_cleveragents/plan/*` and the tasks that run plans show it: the contract's. */
export type { PlanView };

/** A `plans` row as read with PLAN_COLUMNS. */
export interface PlanRow {
  namespace: string;
  owner: string;
  id: string;
  session_id: string | null;
  goal: string;
  entries: PlanEntry[];
  profile: string | null;
  budget: SessionBudget | null;
  usage: Partial<BudgetUsage> | null;
  status: PlanStatus;
  revision: number;
  task_id: string | null;
  created_seq: string;
  created_at: Date;
  updated_at: Date;
}

export const PLAN_COLUMNS = `namespace, owner, id, session_id, goal, entries, profile, budget, usage, status, revision, task_id,
  created_seq, created_at, updated_at`;

export function planOfRow(row: PlanRow): PlanView {
  return {
    planId: row.id,
    namespace: row.namespace,
    owner: row.owner,
    sessionId: row.session_id,
    goal: row.goal,
    entries: row.entries,
    profile: row.profile,
    budget: row.budget,
    usage: usageOf(row.usage),
    status: row.status,
    revision: row.revision,
    taskId: row.task_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
