import { invalidPlanTransition } from './plan-state.errors.js';

import { PLAN_STATUSES, type PlanStatus } from '@cleveragents/contract';

/** A plan's states (docs/protocol.md §6.5), as the wire contract names them. */
export { PLAN_STATUSES, type PlanStatus };

/**
 * Every operation on a plan: the states it may start from and the state it leaves the plan in (`null`:
 * the status does not change, as for `update`, or the plan is gone, as for `delete`). `execute` is
 * `plan/execute`; `complete` and `fail` are made by the plan's task as it ends (src/turn/): the whole
 * machine stays in one table.
 */
export const PLAN_TRANSITIONS = {
  update: { from: ['draft', 'paused'], to: null },
  approve: { from: ['draft'], to: 'approved' },
  execute: { from: ['approved'], to: 'executing' },
  pause: { from: ['executing'], to: 'paused' },
  resume: { from: ['paused'], to: 'executing' },
  complete: { from: ['executing'], to: 'completed' },
  fail: { from: ['executing', 'paused'], to: 'failed' },
  cancel: { from: ['draft', 'approved', 'executing', 'paused'], to: 'canceled' },
  delete: { from: ['draft', 'approved', 'completed', 'failed', 'canceled'], to: null },
} as const satisfies Record<string, { from: readonly PlanStatus[]; to: PlanStatus | null }>;

export type PlanOperation = keyof typeof PLAN_TRANSITIONS;
export const PLAN_OPERATIONS = Object.keys(PLAN_TRANSITIONS) as PlanOperation[];

/**
 * The status a plan in `status` has after `operation` (the same status when the operation does not
 * change it). From a state the operation does not start from: -32004 INVALID_TRANSITION, naming the
 * current state and the states the operation needs.
 */
export function transition(planId: string, status: PlanStatus, operation: PlanOperation): PlanStatus {
  const rule: { from: readonly PlanStatus[]; to: PlanStatus | null } = PLAN_TRANSITIONS[operation];
  if (!rule.from.includes(status)) {
    const needs = rule.from.length === 1 ? rule.from[0] : `one of ${rule.from.join(', ')}`;
    throw invalidPlanTransition(planId, status, operation, needs);
  }
  return rule.to ?? status;
}
