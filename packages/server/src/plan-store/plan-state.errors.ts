import { BusinessRuleViolation } from '../common/domain.errors.js';

/** The plan errors of a plan's state, raised below the plan service (re-exported by ../plan.errors.ts). */

/** -32004: `operation` does not start from the plan's current state. */
export function invalidPlanTransition(
  planId: string,
  status: string,
  operation: string,
  needs: string,
): BusinessRuleViolation {
  return new BusinessRuleViolation(
    `Plan ${planId} is ${status}: ${operation} needs a plan that is ${needs}`,
    'INVALID_TRANSITION',
    { planId, status, operation },
  );
}

/** -32004: a message to the task of a paused plan. */
export function planPaused(planId: string, taskId: string, status: string): BusinessRuleViolation {
  return new BusinessRuleViolation(
    `Task ${taskId} runs plan ${planId}, which is paused: resume it with _cleveragents/plan/resume first`,
    'PLAN_PAUSED',
    { planId, taskId, status },
  );
}
