import { Injectable } from '@nestjs/common';
import { IdentityReads, identityKey } from '../auth/identity-cache.js';
import { MembershipDirectory } from '../auth/identity.ports.js';
import type { Role } from '../common/principal.js';
import { NamespaceMemberRepository } from './namespace-member.repository.js';
import { NamespaceRepository } from './namespace.repository.js';

/**
 * The MembershipDirectory port on the namespace tables: what authentication asks on every request.
 * A subject's memberships and a namespace's existence are kept in the identity cache, which the
 * database's notifications clear on every replica when a membership or a namespace changes.
 */
@Injectable()
export class NamespaceMembershipDirectory extends MembershipDirectory {
  constructor(
    private readonly namespaces: NamespaceRepository,
    private readonly members: NamespaceMemberRepository,
    private readonly cache: IdentityReads,
  ) {
    super();
  }

  /** One indexed query (IDX_namespace_members_subject), or none when the cache holds the subject. */
  async grantsFor(subject: string): Promise<Map<string, Role>> {
    return grantsOf(await this.cache.get(identityKey.member(subject), () => this.members.rolesOf(subject)));
  }

  override heldGrantsFor(subject: string): Map<string, Role> | undefined {
    const held = this.cache.held<MemberRoles>(identityKey.member(subject));
    return held && grantsOf(held.value);
  }

  /** Which of `slugs` exist. A namespace seen to exist is remembered until it is deleted. */
  async existing(slugs: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    await Promise.all(
      [...new Set(slugs)].map(async (slug) => {
        const exists = await this.cache.get(
          identityKey.namespace(slug),
          () => this.namespaces.exists(slug),
          (known) => known,
        );
        if (exists) found.add(slug);
      }),
    );
    return found;
  }

  async visibleTo(grants: ReadonlyMap<string, Role>, limit: number): Promise<string[]> {
    return this.namespaces.visibleSlugs(grants.keys(), limit);
  }
}

/** A subject's membership rows, as the cache holds them. */
type MemberRoles = Awaited<ReturnType<NamespaceMemberRepository['rolesOf']>>;

/** Role per namespace, from a subject's membership rows. */
function grantsOf(rows: MemberRoles): Map<string, Role> {
  return new Map(rows.map((row) => [row.namespace, row.role]));
}
