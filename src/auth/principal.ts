import type { User } from '@a2a-js/sdk/server';

/** Namespace roles, strongest first (SPEC.md §6.1). */
export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** True when `held` is at least as strong as `required`. */
export function roleSatisfies(held: Role, required: Role): boolean {
  return ROLES.indexOf(held) <= ROLES.indexOf(required);
}

/**
 * Who is calling. `subject` is the owner key for tasks and push configs; `scheme` says how the
 * principal was established. Local mode (stdio) and the `none` scheme yield an owner of every namespace.
 */
export class Principal implements User {
  constructor(
    readonly subject: string,
    readonly scheme: 'none' | 'local',
    readonly defaultNamespace: string,
    private readonly rolesByNamespace: ReadonlyMap<string, Role> | 'owner-everywhere',
  ) {}

  get isAuthenticated(): boolean {
    return this.scheme === 'local';
  }

  get userName(): string {
    return this.subject;
  }

  roleIn(namespace: string): Role | undefined {
    if (this.rolesByNamespace === 'owner-everywhere') return 'owner';
    return this.rolesByNamespace.get(namespace);
  }

  static anonymous(defaultNamespace: string): Principal {
    return new Principal('anonymous', 'none', defaultNamespace, 'owner-everywhere');
  }

  static local(username: string, defaultNamespace: string): Principal {
    return new Principal(`local:${username}`, 'local', defaultNamespace, 'owner-everywhere');
  }
}
