import type { User } from '@a2a-js/sdk/server';
import { lineageOf } from './namespace-slug.js';
import { ROLES, type PrincipalScheme, type Role } from '@cleveragents/contract';

/** Namespace roles, strongest first (docs/protocol.md §6.1): the contract's. */
export { ROLES, type Role };

/** True when `held` is at least as strong as `required`. */
export function roleSatisfies(held: Role, required: Role): boolean {
  return ROLES.indexOf(held) <= ROLES.indexOf(required);
}

/** True when `value` is one of the namespace roles. */
export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** The stronger of two roles; undefined counts as no role. */
export function strongerRole(a: Role | undefined, b: Role | undefined): Role | undefined {
  if (!a) return b;
  if (!b) return a;
  return roleSatisfies(a, b) ? a : b;
}

/** A grant key that stands for every namespace (an OIDC role mapping to `*`). */
export const EVERY_NAMESPACE = '*';

/** How a principal was established. */
export type { PrincipalScheme };

export interface PrincipalInit {
  subject: string;
  scheme: PrincipalScheme;
  displayName?: string;
  defaultNamespace: string;
  /** Role per namespace slug (or `*`); a role held in a namespace holds in every namespace below it. */
  grants: ReadonlyMap<string, Role>;
  /** For API keys: the key's id. */
  apiKeyId?: string;
  expiresAt?: Date;
}

/**
 * Who is calling. `subject` is the owner key for tasks and push configs; `scheme` says how the
 * principal was established. A role held in a namespace holds in its descendants too (`acme` admin
 * is admin of `acme/platform`); the strongest applicable grant wins. Local mode (stdio) and the
 * `none` scheme yield an owner of every namespace.
 */
export class Principal implements User {
  readonly subject: string;
  readonly scheme: PrincipalScheme;
  readonly displayName: string;
  readonly defaultNamespace: string;
  readonly apiKeyId: string | undefined;
  readonly expiresAt: Date | undefined;
  /** The explicit grants: role per namespace slug or `*` (descendants are covered by roleIn). */
  readonly grants: ReadonlyMap<string, Role>;

  constructor(init: PrincipalInit) {
    this.subject = init.subject;
    this.scheme = init.scheme;
    this.displayName = init.displayName ?? init.subject;
    this.defaultNamespace = init.defaultNamespace;
    this.grants = init.grants;
    this.apiKeyId = init.apiKeyId;
    this.expiresAt = init.expiresAt;
  }

  /** The SDK's notion: anonymous (`none`) is the only unauthenticated principal. */
  get isAuthenticated(): boolean {
    return this.scheme !== 'none';
  }

  get userName(): string {
    return this.subject;
  }

  /** The effective role in `namespace`: its own grant, an ancestor's, or a `*` grant, strongest first. */
  roleIn(namespace: string): Role | undefined {
    let role = this.grants.get(EVERY_NAMESPACE);
    for (const level of lineageOf(namespace)) role = strongerRole(role, this.grants.get(level));
    return role;
  }

  /** The explicit grants, for whoami and the extended card. */
  grantList(): { namespace: string; role: Role }[] {
    return [...this.grants].map(([namespace, role]) => ({ namespace, role }));
  }

  static anonymous(defaultNamespace: string): Principal {
    return new Principal({
      subject: 'anonymous',
      scheme: 'none',
      defaultNamespace,
      grants: new Map([[EVERY_NAMESPACE, 'owner']]),
    });
  }

  static local(username: string, defaultNamespace: string): Principal {
    return new Principal({
      subject: `local:${username}`,
      scheme: 'local',
      displayName: username,
      defaultNamespace,
      grants: new Map([[EVERY_NAMESPACE, 'owner']]),
    });
  }
}
