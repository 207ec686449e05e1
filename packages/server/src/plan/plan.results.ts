import { PLAN_ENTRY_PRIORITIES, PLAN_ENTRY_STATUSES, PLAN_STATUSES, type PlanEntry } from '@cleveragents/contract';
import type { DeletedPlan, PlanExecution, PlanStatusView, PlanView } from '@cleveragents/contract';
import { budgetSchema, budgetUsageSchema } from '../rpc/schemas/common.results.js';
import {
  array,
  instant,
  integer,
  literal,
  nullable,
  object,
  oneOf,
  page,
  string,
  type Schema,
} from '../rpc/schemas/json-schema.js';

/** The published shape of `_cleveragents/plan/*` results. */
const planEntrySchema: Schema<PlanEntry> = object({
  content: string(),
  priority: oneOf(PLAN_ENTRY_PRIORITIES),
  status: oneOf(PLAN_ENTRY_STATUSES),
});

export const planSchema: Schema<PlanView> = object({
  planId: string(),
  namespace: string(),
  owner: string(),
  sessionId: nullable(string()),
  goal: string(),
  entries: array(planEntrySchema),
  profile: nullable(string()),
  budget: nullable(budgetSchema),
  usage: budgetUsageSchema,
  status: oneOf(PLAN_STATUSES),
  revision: integer({ minimum: 1 }),
  taskId: nullable(string()),
  createdAt: instant(),
  updatedAt: instant(),
});

export const planPageSchema = page(planSchema);

const count = () => integer({ minimum: 0 });

export const planStatusSchema: Schema<PlanStatusView> = object({
  planId: string(),
  status: oneOf(PLAN_STATUSES),
  revision: integer({ minimum: 1 }),
  entries: object({
    total: count(),
    pending: count(),
    inProgress: count(),
    completed: count(),
    failed: count(),
    skipped: count(),
  }),
  taskId: nullable(string()),
});

export const planExecutionSchema: Schema<PlanExecution> = object({
  planId: string(),
  taskId: string(),
  contextId: string(),
  status: literal('executing'),
});

export const deletedPlanSchema: Schema<DeletedPlan> = object({ planId: string(), deleted: literal(true) });
