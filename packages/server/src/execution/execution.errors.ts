import { BusinessRuleViolation, ValidationError } from '../common/domain.errors.js';

/** The errors of actor execution settings, each with its reason. */

/** -32602 on `spec.model.baseUrl`: `description` says why the endpoint is not admitted. */
export function modelEndpointNotAllowed(description: string): ValidationError {
  return new ValidationError([{ field: 'spec.model.baseUrl', description }], 'MODEL_ENDPOINT_NOT_ALLOWED');
}

/** -32602 on `spec.a2a.url`: `description` says why the external agent's host is not admitted. */
export function a2aAgentNotAllowed(description: string): ValidationError {
  return new ValidationError([{ field: 'spec.a2a.url', description }], 'A2A_AGENT_NOT_ALLOWED');
}

/** Why nothing that needs an actor runs on a server with CLEVERAGENTS_ACTOR_BACKEND=none. */
export const NO_ACTOR_BACKEND =
  'this server runs no actors (CLEVERAGENTS_ACTOR_BACKEND=none: registry, sync and namespaces only); ' +
  'send it to a server that runs them, or set CLEVERAGENTS_ACTOR_BACKEND to local or langgraph';

/**
 * -32004 ACTOR_BACKEND_UNAVAILABLE for a call that needs an actor (a message, a task) on a server that
 * runs none; `what` is what was refused ("A message").
 */
export function noActorBackend(what: string): BusinessRuleViolation {
  return new BusinessRuleViolation(`${what} cannot be served: ${NO_ACTOR_BACKEND}`, 'ACTOR_BACKEND_UNAVAILABLE', {
    actorBackend: 'none',
  });
}
