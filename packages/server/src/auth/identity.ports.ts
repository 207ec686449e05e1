import type { Role } from '../common/principal.js';

/**
 * Ports through which authentication reaches the identity store. The auth module depends on these
 * abstract classes only; the namespace and API-key modules provide the implementations.
 */

/** What a valid, unexpired, unrevoked API key stands for. */
export interface ApiKeyIdentity {
  /** The key's id (a ULID), also its public prefix. */
  keyId: string;
  name: string;
  namespace: string;
  role: Role;
  /** Subject of the principal that created the key. */
  createdBy: string;
  expiresAt: Date | undefined;
}

export abstract class ApiKeyVerifier {
  /** The key's identity, or undefined when the presented string is no valid key (never throws for that). */
  abstract verify(presented: string): Promise<ApiKeyIdentity | undefined>;
  /** True when the presented string has the shape of one of our keys (so a JWT strategy can step aside). */
  abstract looksLikeKey(presented: string): boolean;
  /**
   * What `verify` would answer, when it can be told from memory alone (the key's record is held);
   * undefined when it needs the store. The same checks as `verify`.
   */
  verifyHeld(_presented: string): { identity: ApiKeyIdentity | undefined } | undefined {
    return undefined;
  }
}

export abstract class MembershipDirectory {
  /** Role per namespace granted to `subject` by namespace membership (docs/protocol.md §6.1). */
  abstract grantsFor(subject: string): Promise<Map<string, Role>>;
  /** What `grantsFor` would answer, when it can be told from memory alone; undefined when it needs the store. */
  heldGrantsFor(_subject: string): Map<string, Role> | undefined {
    return undefined;
  }
  /** The namespaces that exist among `slugs`. */
  abstract existing(slugs: readonly string[]): Promise<Set<string>>;
  /**
   * Namespaces in which a principal with these grants holds a role (a grant covers its descendants;
   * `*` covers all), sorted, at most `limit`.
   */
  abstract visibleTo(grants: ReadonlyMap<string, Role>, limit: number): Promise<string[]>;
}
