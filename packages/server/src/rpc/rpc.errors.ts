import { AuthorizationError, ResourceNotFoundError } from '../common/domain.errors.js';

/** The errors every method's role check answers with, each with its reason. */

/** -32001: a namespace that does not exist, or in which the caller holds no role (the same answer). */
export function namespaceNotFound(namespace: string): ResourceNotFoundError {
  return new ResourceNotFoundError(`Namespace not found: ${namespace}`, 'NAMESPACE_NOT_FOUND', { namespace });
}

export function roleRequired(operation: string, namespace: string, required: string, held: string): AuthorizationError {
  return new AuthorizationError(
    `${operation} requires the ${required} role in namespace ${namespace}; the caller holds ${held}`,
    'ROLE_REQUIRED',
    { requiredRole: required, heldRole: held, namespace },
  );
}
