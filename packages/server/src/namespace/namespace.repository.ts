import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { entityColumns } from '../database/entity-columns.js';
import { NamespaceEntity } from '../database/namespace.entity.js';
import { visibilityFilter } from './namespace-visibility.js';

/** A namespace row, without its relation. */
export type StoredNamespace = Omit<NamespaceEntity, 'parentNamespace'>;

export interface NewNamespace {
  slug: string;
  parent: string | null;
  displayName: string;
  description: string;
  createdBy: string;
}

/** What a namespace can hold that keeps it from being deleted, as delete's refusal names them. */
export const NAMESPACE_CONTENTS = [
  'namespaces',
  'tasks',
  'sessions',
  'plans',
  'pushConfigs',
  'apiKeys',
  'registryEntries',
] as const;
export type NamespaceContent = (typeof NAMESPACE_CONTENTS)[number];

/**
 * The `namespaces` table. Writes and locking reads take the EntityManager of the caller's transaction;
 * plain reads go through the DataSource.
 */
@Injectable()
export class NamespaceRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get columns(): string {
    return entityColumns(this.dataSource, NamespaceEntity);
  }

  /** Inserts `namespace`, or nothing (undefined) when its slug exists already. */
  async insertIfAbsent(manager: EntityManager, namespace: NewNamespace): Promise<StoredNamespace | undefined> {
    const rows: StoredNamespace[] = await manager.query(
      `INSERT INTO namespaces (slug, parent, display_name, description, created_by)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (slug) DO NOTHING RETURNING ${this.columns}`,
      [namespace.slug, namespace.parent, namespace.displayName, namespace.description, namespace.createdBy],
    );
    return rows[0];
  }

  async find(slug: string): Promise<StoredNamespace | undefined> {
    return (await this.dataSource.manager.findOneBy(NamespaceEntity, { slug })) ?? undefined;
  }

  async exists(slug: string): Promise<boolean> {
    return this.dataSource.manager.existsBy(NamespaceEntity, { slug });
  }

  /**
   * The namespace, read with a row lock for the rest of the caller's transaction: FOR SHARE holds it
   * against deletion, FOR UPDATE against any other writer.
   */
  async lock(
    manager: EntityManager,
    slug: string,
    lock: 'FOR SHARE' | 'FOR UPDATE',
  ): Promise<StoredNamespace | undefined> {
    const rows: StoredNamespace[] = await manager.query(
      `SELECT ${this.columns} FROM namespaces WHERE slug = $1 ${lock}`,
      [slug],
    );
    return rows[0];
  }

  /**
   * `pageSize + 1` namespaces a principal with these grant keys sees (see visibilityFilter), in slug
   * order after `afterSlug`, and how many it sees in all.
   */
  async pageVisible(
    grantKeys: Iterable<string>,
    afterSlug: string | undefined,
    pageSize: number,
  ): Promise<{ rows: StoredNamespace[]; totalSize: number }> {
    const filter = visibilityFilter(grantKeys);
    const counted: { total: string }[] = await this.dataSource.query(
      `SELECT count(*) AS total FROM namespaces WHERE ${filter.sql}`,
      filter.values,
    );
    const values: unknown[] = [...filter.values];
    let where = filter.sql;
    if (afterSlug !== undefined) {
      values.push(afterSlug);
      where += ` AND slug > $${values.length}`;
    }
    values.push(pageSize + 1);
    const rows: StoredNamespace[] = await this.dataSource.query(
      `SELECT ${this.columns} FROM namespaces WHERE ${where} ORDER BY slug LIMIT $${values.length}`,
      values,
    );
    return { rows, totalSize: Number(counted[0]?.total ?? 0) };
  }

  /** The slugs a principal with these grant keys sees, sorted, at most `limit`. */
  async visibleSlugs(grantKeys: Iterable<string>, limit: number): Promise<string[]> {
    const filter = visibilityFilter(grantKeys);
    if (filter.sql === 'FALSE' || limit <= 0) return [];
    const rows: { slug: string }[] = await this.dataSource.query(
      `SELECT slug FROM namespaces WHERE ${filter.sql} ORDER BY slug LIMIT $${filter.values.length + 1}`,
      [...filter.values, limit],
    );
    return rows.map((row) => row.slug);
  }

  /** Sets the details given (null keeps one) at the next revision. Call with the row locked FOR UPDATE. */
  async updateDetails(
    manager: EntityManager,
    slug: string,
    details: { displayName: string | null; description: string | null },
  ): Promise<StoredNamespace> {
    const rows: StoredNamespace[] = await manager.query(
      `WITH updated AS (
         UPDATE namespaces SET display_name = COALESCE($2, display_name), description = COALESCE($3, description),
           revision = revision + 1, updated_at = now()
         WHERE slug = $1 RETURNING ${this.columns})
       SELECT * FROM updated`,
      [slug, details.displayName, details.description],
    );
    return rows[0];
  }

  /** What `slug` holds of each kind that keeps a namespace from being deleted, in NAMESPACE_CONTENTS order. */
  async contents(manager: EntityManager, slug: string): Promise<NamespaceContent[]> {
    const [held]: Record<NamespaceContent, boolean>[] = await manager.query(
      `SELECT EXISTS (SELECT 1 FROM namespaces WHERE parent = $1) AS "namespaces",
              EXISTS (SELECT 1 FROM tasks WHERE namespace = $1) AS "tasks",
              EXISTS (SELECT 1 FROM sessions WHERE namespace = $1) AS "sessions",
              EXISTS (SELECT 1 FROM plans WHERE namespace = $1) AS "plans",
              EXISTS (SELECT 1 FROM push_notification_configs WHERE namespace = $1) AS "pushConfigs",
              EXISTS (SELECT 1 FROM api_keys WHERE namespace = $1 AND revoked_at IS NULL) AS "apiKeys",
              EXISTS (SELECT 1 FROM registry_entries WHERE namespace = $1 AND deleted_at IS NULL AND NOT builtin)
                AS "registryEntries"`,
      [slug],
    );
    return NAMESPACE_CONTENTS.filter((kind) => held[kind]);
  }

  /** Deletes the namespace; what belongs to it (members, revoked keys, the registry's rows) goes with it. */
  async delete(manager: EntityManager, slug: string): Promise<void> {
    await manager.query('DELETE FROM namespaces WHERE slug = $1', [slug]);
  }
}
