import {
  AuthorizationError,
  BusinessRuleViolation,
  DuplicateEntityError,
  ResourceNotFoundError,
} from '../common/domain.errors.js';

/** The errors of `_cleveragents/namespace/*` and its members, each with its reason. */

export function namespaceNotFound(slug: string): ResourceNotFoundError {
  return new ResourceNotFoundError(`Namespace ${slug} does not exist`, 'NAMESPACE_NOT_FOUND', { namespace: slug });
}

export function namespaceExists(slug: string): DuplicateEntityError {
  return new DuplicateEntityError(`Namespace ${slug} already exists`, 'NAMESPACE_EXISTS', { namespace: slug });
}

export function defaultNamespaceUndeletable(slug: string): BusinessRuleViolation {
  return new BusinessRuleViolation(
    `Namespace ${slug} is the server's default namespace (CLEVERAGENTS_DEFAULT_NAMESPACE) and cannot be deleted`,
    'DEFAULT_NAMESPACE',
    { namespace: slug },
  );
}

/** `holds` names what is left in it (`registry entries`, `API keys`, …). */
export function namespaceNotEmpty(slug: string, holds: string[]): BusinessRuleViolation {
  return new BusinessRuleViolation(
    `Namespace ${slug} is not empty: it holds ${holds.join(', ')}; delete or move them (revoke its API keys) first`,
    'NAMESPACE_NOT_EMPTY',
    { namespace: slug, holds: holds.join(',') },
  );
}

export function memberNotFound(namespace: string, subject: string): ResourceNotFoundError {
  return new ResourceNotFoundError(`${subject} is not a member of namespace ${namespace}`, 'MEMBER_NOT_FOUND', {
    namespace,
    subject,
  });
}

export function lastOwner(namespace: string, leaving: string): BusinessRuleViolation {
  return new BusinessRuleViolation(
    `${leaving} is the last owner of namespace ${namespace}; make another member owner first`,
    'LAST_OWNER',
    { namespace, subject: leaving },
  );
}

export function ownerRequiredForOwners(namespace: string): AuthorizationError {
  return new AuthorizationError(
    `Only an owner of namespace ${namespace} may grant the owner role or change an owner`,
    'OWNER_REQUIRED',
    { namespace, requiredRole: 'owner' },
  );
}
