import { PlanError, ResourceNotFoundError, ValidationError } from '../common/domain.errors.js';
import type { ActorBackendName } from '../config/app.config.js';

/**
 * The errors of `_cleveragents/plan/*`, each with its reason. The two that the plan store and message admission
 * raise live in store/plan-state.errors.ts (those folders may not import this one) and are re-exported here.
 */
export { invalidPlanTransition, planPaused } from './plan-state.errors.js';

export function planNotFound(scope: { namespace: string }, planId: string): ResourceNotFoundError {
  return new ResourceNotFoundError(`Plan not found: ${planId} (in namespace ${scope.namespace})`, 'PLAN_NOT_FOUND', {
    planId,
    namespace: scope.namespace,
  });
}

/** -32008 for `plan/execute` where no orchestrator runs: the TCK actor, or no actor at all. */
export function noOrchestrator(planId: string, backend: ActorBackendName): PlanError {
  const why =
    backend === 'none'
      ? 'this server runs no actors (CLEVERAGENTS_ACTOR_BACKEND=none: registry, sync and namespaces only), ' +
        'so no plan executes here; set CLEVERAGENTS_ACTOR_BACKEND to local or langgraph, or execute it where actors run'
      : `this server runs the conformance actor (CLEVERAGENTS_ACTOR_BACKEND=${backend}), which does not execute plans`;
  return new PlanError(`Plan ${planId} cannot run: ${why}`, 'NO_ORCHESTRATOR', { planId });
}

export function planSessionNotOpen(planId: string, sessionId: string, why: string | undefined): PlanError {
  return new PlanError(`Plan ${planId} cannot run: ${why}`, 'SESSION_NOT_OPEN', { planId, sessionId });
}

export function planNotStarted(planId: string, why: string): PlanError {
  return new PlanError(`Plan ${planId} could not start: ${why}`, 'PLAN_NOT_STARTED', { planId });
}

/** -32008 for a plan that broke while running; `reason` is what its task said, prefixed with ": ", or empty. */
export function planFailed(planId: string, taskId: string | null, reason: string): PlanError {
  return new PlanError(`Plan ${planId} failed while running${reason}`, 'PLAN_FAILED', {
    planId,
    taskId: taskId ?? '',
  });
}

/** -32602 on `sessionId`: the caller has no session of that id. */
export function planSessionUnknown(namespace: string, sessionId: string): ValidationError {
  return new ValidationError([
    { field: 'sessionId', description: `no session ${sessionId} of yours in namespace ${namespace}` },
  ]);
}

/** -32602 on `sessionId`: the session is closed. */
export function planSessionClosed(sessionId: string): ValidationError {
  return new ValidationError([
    { field: 'sessionId', description: `session ${sessionId} is closed: a plan needs an open session` },
  ]);
}
