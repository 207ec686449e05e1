import type { Role } from './principal.js';

/**
 * Who performs a change, as services and the audit log see it. A Principal is one; the admin CLI
 * makes one with `operatorActor`. Services trust that the method's role was checked before they are
 * called (the dispatcher does it for RPC calls) and check only their own finer rules with `roleIn`.
 */
export interface Actor {
  /** As `auth/whoami` prints it: `oidc:alice`, `apikey:01J…`, `cli:root`. */
  readonly subject: string;
  roleIn(namespace: string): Role | undefined;
}

/** An actor and the request it acts in (recorded in the audit log). */
export interface Acting {
  readonly actor: Actor;
  readonly requestId?: string;
}

/** An operator outside any request (admin CLI, bootstrap): owner of every namespace. */
export function operatorActor(subject: string): Actor {
  return { subject, roleIn: () => 'owner' };
}
