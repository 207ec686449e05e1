import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { IdentityCache, identityKey } from '../auth/identity-cache.js';
import { MembershipDirectory } from '../auth/identity.ports.js';
import type { Role } from '../auth/principal.js';
import { visibilityFilter } from './namespace-visibility.js';

/**
 * The MembershipDirectory port on the namespace tables: what authentication asks on every request.
 * A subject's memberships and a namespace's existence are kept in the identity cache, which the
 * database's notifications clear on every replica when a membership or a namespace changes.
 */
@Injectable()
export class NamespaceMembershipDirectory extends MembershipDirectory {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cache: IdentityCache,
  ) {
    super();
  }

  /** One indexed query (IDX_namespace_members_subject), or none when the cache holds the subject. */
  async grantsFor(subject: string): Promise<Map<string, Role>> {
    const rows = await this.cache.get(identityKey.member(subject), () =>
      this.dataSource.query<{ namespace: string; role: Role }[]>(
        'SELECT namespace, role FROM namespace_members WHERE subject = $1',
        [subject],
      ),
    );
    return new Map(rows.map((row) => [row.namespace, row.role]));
  }

  /** Which of `slugs` exist. A namespace seen to exist is remembered until it is deleted. */
  async existing(slugs: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    await Promise.all(
      [...new Set(slugs)].map(async (slug) => {
        const exists = await this.cache.get(
          identityKey.namespace(slug),
          async () => {
            const rows: unknown[] = await this.dataSource.query('SELECT 1 FROM namespaces WHERE slug = $1', [slug]);
            return rows.length > 0;
          },
          (known) => known,
        );
        if (exists) found.add(slug);
      }),
    );
    return found;
  }

  async visibleTo(grants: ReadonlyMap<string, Role>, limit: number): Promise<string[]> {
    const filter = visibilityFilter(grants.keys());
    if (filter.sql === 'FALSE' || limit <= 0) return [];
    const rows: { slug: string }[] = await this.dataSource.query(
      `SELECT slug FROM namespaces WHERE ${filter.sql} ORDER BY slug LIMIT $${filter.values.length + 1}`,
      [...filter.values, limit],
    );
    return rows.map((row) => row.slug);
  }
}
