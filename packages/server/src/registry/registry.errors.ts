import {
  AuthorizationError,
  DuplicateEntityError,
  ResourceNotFoundError,
  ValidationError,
} from '../common/domain.errors.js';

/** The errors of `_cleveragents/registry/*`, each with its reason. */

export function namespaceNotFound(namespace: string): ResourceNotFoundError {
  return new ResourceNotFoundError(`Namespace ${namespace} does not exist`, 'NAMESPACE_NOT_FOUND', { namespace });
}

export function entryNotFound(namespace: string, kind: string, name: string): ResourceNotFoundError {
  return new ResourceNotFoundError(`No ${kind} named ${name} in namespace ${namespace}`, 'REGISTRY_ENTRY_NOT_FOUND', {
    namespace,
    kind,
    name,
  });
}

export function entryExists(
  namespace: string,
  kind: string,
  name: string,
  currentRevision: number,
): DuplicateEntityError {
  return new DuplicateEntityError(
    `A ${kind} named ${name} already exists in namespace ${namespace}`,
    'REGISTRY_ENTRY_EXISTS',
    { namespace, kind, name, currentRevision: String(currentRevision) },
  );
}

export function nothingToUpdate(): ValidationError {
  return new ValidationError(
    ['spec', 'labels'].map((field) => ({ field, description: 'give spec or labels (or both) to update' })),
  );
}

/** -32003: changing `what` takes the admin role; `fields` names the actor fields changed, if any. */
export function adminRequired(
  what: string,
  namespace: string,
  held: string | undefined,
  fields: string[] = [],
): AuthorizationError {
  return new AuthorizationError(
    `${what} requires the admin role in namespace ${namespace}; the caller holds ${held ?? 'none'}`,
    'ROLE_REQUIRED',
    {
      requiredRole: 'admin',
      heldRole: held ?? '',
      namespace,
      ...(fields.length > 0 ? { fields: fields.join(',') } : {}),
    },
  );
}
