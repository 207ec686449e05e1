import {
  AuthorizationError,
  BusinessRuleViolation,
  DuplicateEntityError,
  ResourceNotFoundError,
} from '../../common/domain.errors.js';

/** The errors of `_cleveragents/auth/apikey/*`, each with its reason. */

/** No key `id` in `namespace`; without a namespace, none the caller may manage (no word of whether it exists). */
export function apiKeyNotFound(namespace: string | undefined, id: string): ResourceNotFoundError {
  return namespace === undefined
    ? new ResourceNotFoundError(`No API key ${id} that you may manage`, 'KEY_NOT_FOUND', { id })
    : new ResourceNotFoundError(`No API key ${id} in namespace ${namespace}`, 'KEY_NOT_FOUND', { namespace, id });
}

/** A key may not carry a role stronger than the caller's own (`held`, undefined for none). */
export function apiKeyRoleEscalation(
  namespace: string,
  requested: string,
  held: string | undefined,
): AuthorizationError {
  return new AuthorizationError(
    `A key with the ${requested} role needs that role in namespace ${namespace}; the caller holds ${held ?? 'none'}`,
    'ROLE_ESCALATION',
    { namespace, requestedRole: requested, heldRole: held ?? '' },
  );
}

export function ownerKeyNeedsOwner(namespace: string): AuthorizationError {
  return new AuthorizationError(
    `Only an owner of namespace ${namespace} may revoke an owner's API key`,
    'OWNER_REQUIRED',
    {
      namespace,
      requiredRole: 'owner',
    },
  );
}

export function apiKeyAlreadyRevoked(id: string, revokedAt: string): BusinessRuleViolation {
  return new BusinessRuleViolation(`API key ${id} is already revoked`, 'ALREADY_REVOKED', { id, revokedAt });
}

export function apiKeyNamespaceNotFound(namespace: string): ResourceNotFoundError {
  return new ResourceNotFoundError(`Namespace ${namespace} does not exist`, 'NAMESPACE_NOT_FOUND', { namespace });
}

export function apiKeyNameTaken(namespace: string, name: string): DuplicateEntityError {
  return new DuplicateEntityError(
    `Namespace ${namespace} already has an unrevoked API key named ${name}`,
    'KEY_NAME_TAKEN',
    { namespace, name },
  );
}
