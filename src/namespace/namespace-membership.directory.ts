import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MembershipDirectory } from '../auth/identity.ports.js';
import type { Role } from '../auth/principal.js';
import { visibilityFilter } from './namespace-visibility.js';

/** The MembershipDirectory port on the namespace tables: what authentication asks on every request. */
@Injectable()
export class NamespaceMembershipDirectory extends MembershipDirectory {
  constructor(private readonly dataSource: DataSource) {
    super();
  }

  /** One indexed query (IDX_namespace_members_subject). */
  async grantsFor(subject: string): Promise<Map<string, Role>> {
    const rows: { namespace: string; role: Role }[] = await this.dataSource.query(
      'SELECT namespace, role FROM namespace_members WHERE subject = $1',
      [subject],
    );
    return new Map(rows.map((row) => [row.namespace, row.role]));
  }

  async existing(slugs: readonly string[]): Promise<Set<string>> {
    if (slugs.length === 0) return new Set();
    const rows: { slug: string }[] = await this.dataSource.query(
      'SELECT slug FROM namespaces WHERE slug = ANY($1::text[])',
      [[...new Set(slugs)]],
    );
    return new Set(rows.map((row) => row.slug));
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
