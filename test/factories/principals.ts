import { Principal, type Role } from '../../packages/server/src/common/principal.js';
import type { Acting } from '../../packages/server/src/common/actor.js';

/** A token principal (`oidc:<name>`) holding exactly these grants (slug or `*` → role). */
export function principalWith(
  subject: string,
  grants: Record<string, Role> = {},
  defaultNamespace = 'default',
): Principal {
  return new Principal({
    subject,
    scheme: 'oidc',
    defaultNamespace,
    grants: new Map(Object.entries(grants)),
  });
}

/** What a service call acts as: the principal, and a request id to find in the audit log. */
export function acting(principal: Principal, requestId = `req-${principal.subject}`): Acting {
  return { actor: principal, requestId };
}
