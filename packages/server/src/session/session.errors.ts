import { BusinessRuleViolation, ResourceNotFoundError, ValidationError } from '../common/domain.errors.js';

/**
 * The errors of `_cleveragents/session/*`, `context/assemble` and of a message to a session, each with its
 * reason (a used-up budget is budgets.ts's `budgetExceeded`).
 */

export function sessionNotFound(scope: { namespace: string }, sessionId: string): ResourceNotFoundError {
  return new ResourceNotFoundError(
    `Session not found: ${sessionId} (in namespace ${scope.namespace})`,
    'SESSION_NOT_FOUND',
    { sessionId, namespace: scope.namespace },
  );
}

export function sessionClosed(sessionId: string): BusinessRuleViolation {
  return new BusinessRuleViolation(
    `Session ${sessionId} is closed: start a new session (send a message without contextId) to continue`,
    'SESSION_CLOSED',
    { sessionId },
  );
}

export function sessionAlreadyClosed(sessionId: string, status: string): BusinessRuleViolation {
  return new BusinessRuleViolation(`Session ${sessionId} is already closed`, 'INVALID_TRANSITION', {
    sessionId,
    status,
  });
}

export function sessionBusy(sessionId: string, taskIds: string[]): BusinessRuleViolation {
  return new BusinessRuleViolation(
    `Session ${sessionId} has unfinished tasks (${taskIds.join(', ')}): cancel them (CancelTask) before closing it`,
    'SESSION_BUSY',
    { sessionId, taskIds: taskIds.join(',') },
  );
}

export function invalidContextId(): ValidationError {
  return new ValidationError([
    {
      field: 'message.contextId',
      description: 'contextId must be 1 to 256 printable ASCII characters without spaces',
    },
  ]);
}

/** -32602 on `field`: a registry name nothing in the namespace answers to. */
export function unknownDefinition(field: string, kind: string, name: string, namespace: string): ValidationError {
  return new ValidationError([
    { field, description: `no ${kind} named "${name}" in namespace ${namespace} (see registry/list)` },
  ]);
}

export function noModelContext(sessionId: string): BusinessRuleViolation {
  return new BusinessRuleViolation(
    'The conformance actor (CLEVERAGENTS_ACTOR_BACKEND=conformance) calls no model: there is no context to assemble',
    'NO_MODEL_CONTEXT',
    { sessionId },
  );
}

/** `problem` says why the actor's backend cannot run here. */
export function actorBackendUnavailable(actor: string, problem: string): BusinessRuleViolation {
  return new BusinessRuleViolation(problem, 'ACTOR_BACKEND_UNAVAILABLE', { actor });
}

/** -32602 on `until`: a usage window that ends before it starts. */
export function usageWindowReversed(since: string, until: string): ValidationError {
  return new ValidationError([
    { field: 'until', description: `until must be after since (got since ${since}, until ${until})` },
  ]);
}

export function usageNamespaceNotFound(namespace: string): ResourceNotFoundError {
  return new ResourceNotFoundError(`Namespace ${namespace} does not exist`, 'NAMESPACE_NOT_FOUND', { namespace });
}
