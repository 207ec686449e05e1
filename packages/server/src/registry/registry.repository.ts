import { Injectable } from '@nestjs/common';
import { monotonicFactory } from '../common/ulid.js';
import { DataSource, type EntityManager } from 'typeorm';
import { entityColumns } from '../database/entity-columns.js';
import { readKeysetPage } from '../database/keyset-page.js';
import { NamespaceEntity } from '../database/namespace.entity.js';
import type { NamespaceBuiltins } from '../namespace/namespace.ports.js';
import { RegistryEntryEntity } from './registry-entry.entity.js';
import { toEntry, type ChangeOp, type EntryContent, type RegistryEntry, type StoredEntry } from './registry-entry.js';
import { BUILTIN_DEFINITIONS } from './registry.builtins.js';
import type { RegistryKind } from './registry.kinds.js';

/** A change-log row as `sync/pull` reads it. */
export interface StoredChange {
  seq: string;
  kind: RegistryKind;
  name: string;
  op: ChangeOp;
  revision: number;
  entity: RegistryEntry | null;
}

/** Which live entries a list reads. */
export interface EntryFilter {
  namespace: string;
  kind?: RegistryKind;
  /** Entries carrying every one of these labels. */
  labels?: Record<string, string>;
}

const nextId = monotonicFactory();

/** TypeORM answers an UPDATE with [rows, count]; wrapped in a CTE, it answers with the rows, as a SELECT does. */
function returning(update: string): string {
  return `WITH changed AS (${update}) SELECT * FROM changed`;
}

/**
 * The registry's tables: entries (tombstones included), the per-namespace change log and its sequence
 * row. Every write takes the EntityManager of the caller's transaction and runs under `lock`: a
 * namespace's writers take turns on its sequence row, so change-log sequences have no gap.
 */
@Injectable()
export class RegistryRepository implements NamespaceBuiltins {
  constructor(private readonly dataSource: DataSource) {}

  private get columns(): string {
    return entityColumns(this.dataSource, RegistryEntryEntity);
  }

  /**
   * Makes the caller the one writer of `namespace`'s registry until its transaction ends: the namespace
   * row is held against deletion (FOR KEY SHARE, taken first so that lock order is always namespace →
   * counter), the built-ins are installed if this namespace predates the registry, and the sequence row
   * is locked. False, with nothing done, for a namespace that does not exist.
   */
  async lock(manager: EntityManager, namespace: string, subject: string): Promise<boolean> {
    const found: unknown[] = await manager.query('SELECT slug FROM namespaces WHERE slug = $1 FOR KEY SHARE', [
      namespace,
    ]);
    if (found.length === 0) return false;
    await this.installBuiltins(manager, namespace, subject);
    await manager.query('SELECT last_seq FROM registry_sequences WHERE namespace = $1 FOR UPDATE', [namespace]);
    return true;
  }

  /**
   * Installs the built-in definitions (three profiles, a default actor) in `namespace`, once: the
   * sequence row it creates marks the namespace as done, so a built-in deleted later stays deleted. Runs
   * in the caller's transaction (namespace creation, bootstrap). Returns whether it installed them.
   */
  async installBuiltins(manager: EntityManager, namespace: string, subject: string): Promise<boolean> {
    const created: unknown[] = await manager.query(
      `INSERT INTO registry_sequences (namespace, last_seq) VALUES ($1, 0)
       ON CONFLICT (namespace) DO NOTHING RETURNING namespace`,
      [namespace],
    );
    if (created.length === 0) return false;
    for (const definition of BUILTIN_DEFINITIONS) {
      const row = await this.write(manager, namespace, undefined, definition, subject, true);
      await this.appendChange(manager, row, 'upsert', subject);
    }
    return true;
  }

  /**
   * Installs the built-ins in every namespace that predates the registry (its sequence row missing), in
   * the caller's transaction; idempotent. Returns those namespaces.
   */
  async installMissingBuiltins(manager: EntityManager, subject: string): Promise<string[]> {
    const rows: { slug: string }[] = await manager.query(
      `SELECT slug FROM namespaces n WHERE NOT EXISTS (SELECT 1 FROM registry_sequences s WHERE s.namespace = n.slug)
       ORDER BY slug`,
    );
    for (const { slug } of rows) await this.installBuiltins(manager, slug, subject);
    return rows.map((row) => row.slug);
  }

  /** The entry, live or tombstone, or undefined when the name was never used. */
  async find(
    manager: EntityManager,
    namespace: string,
    kind: RegistryKind,
    name: string,
  ): Promise<StoredEntry | undefined> {
    const rows: StoredEntry[] = await manager.query(
      `SELECT ${this.columns} FROM registry_entries WHERE namespace = $1 AND kind = $2 AND name = $3`,
      [namespace, kind, name],
    );
    return rows[0];
  }

  /** The live entry, read outside any transaction. */
  async findLive(namespace: string, kind: RegistryKind, name: string): Promise<StoredEntry | undefined> {
    const rows: StoredEntry[] = await this.dataSource.query(
      `SELECT ${this.columns} FROM registry_entries
       WHERE namespace = $1 AND kind = $2 AND name = $3 AND deleted_at IS NULL`,
      [namespace, kind, name],
    );
    return rows[0];
  }

  async namespaceExists(namespace: string): Promise<boolean> {
    return this.dataSource.manager.existsBy(NamespaceEntity, { slug: namespace });
  }

  /** `pageSize + 1` live entries in (kind, name) order after `after`, and how many match `filter`. */
  async page(
    filter: EntryFilter,
    after: readonly [kind: string, name: string] | undefined,
    pageSize: number,
  ): Promise<{ rows: StoredEntry[]; totalSize: number }> {
    const labels = filter.labels && Object.keys(filter.labels).length > 0 ? JSON.stringify(filter.labels) : undefined;
    return readKeysetPage<StoredEntry>(this.dataSource, {
      columns: this.columns,
      from: 'registry_entries',
      where: [
        ['namespace = $?', filter.namespace],
        ['deleted_at IS NULL'],
        filter.kind ? ['kind = $?', filter.kind] : undefined,
        labels ? ['labels @> $?::jsonb', labels] : undefined,
      ],
      after: after ? ['(kind, name) > ($?, $?)', after[0], after[1]] : undefined,
      orderBy: 'kind, name',
      pageSize,
    });
  }

  /**
   * Stores `content`: a new entry at revision 1, a tombstone revived as a new entry (new id, revision
   * counting on), or a live entry changed (revision + 1). Call under lock.
   */
  async write(
    manager: EntityManager,
    namespace: string,
    current: StoredEntry | undefined,
    content: EntryContent,
    subject: string,
    builtin = false,
  ): Promise<StoredEntry> {
    const spec = JSON.stringify(content.spec);
    const labels = JSON.stringify(content.labels);
    let rows: StoredEntry[];
    if (current === undefined) {
      rows = await manager.query(
        `INSERT INTO registry_entries (id, namespace, kind, name, spec, labels, builtin, created_by, updated_by)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $8) RETURNING ${this.columns}`,
        [nextId(), namespace, content.kind, content.name, spec, labels, builtin, subject],
      );
    } else if (current.deletedAt === null) {
      rows = await manager.query(
        returning(`UPDATE registry_entries SET spec = $2::jsonb, labels = $3::jsonb, builtin = false,
           revision = revision + 1, updated_at = now(), updated_by = $4
         WHERE id = $1 RETURNING ${this.columns}`),
        [current.id, spec, labels, subject],
      );
    } else {
      rows = await manager.query(
        returning(`UPDATE registry_entries SET id = $2, spec = $3::jsonb, labels = $4::jsonb, builtin = false,
           revision = revision + 1, created_at = now(), created_by = $5, updated_at = now(), updated_by = $5,
           deleted_at = NULL
         WHERE id = $1 RETURNING ${this.columns}`),
        [current.id, nextId(), spec, labels, subject],
      );
    }
    return rows[0];
  }

  /** Turns a live entry into a tombstone at the next revision. Call under lock. */
  async tombstone(manager: EntityManager, current: StoredEntry, subject: string): Promise<StoredEntry> {
    const rows: StoredEntry[] = await manager.query(
      returning(`UPDATE registry_entries SET spec = NULL, builtin = false, revision = revision + 1, updated_at = now(),
         updated_by = $2, deleted_at = now()
       WHERE id = $1 RETURNING ${this.columns}`),
      [current.id, subject],
    );
    return rows[0];
  }

  /**
   * Appends the change `row` underwent to its namespace's log and returns its sequence: the counter row,
   * locked by lock(), is bumped in this transaction, so a rollback takes the number back.
   */
  async appendChange(manager: EntityManager, row: StoredEntry, op: ChangeOp, subject: string): Promise<number> {
    const [{ last_seq }]: { last_seq: string }[] = await manager.query(
      returning('UPDATE registry_sequences SET last_seq = last_seq + 1 WHERE namespace = $1 RETURNING last_seq'),
      [row.namespace],
    );
    await manager.query(
      `INSERT INTO registry_changes (namespace, seq, kind, name, op, revision, entity, actor)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)`,
      [
        row.namespace,
        last_seq,
        row.kind,
        row.name,
        op,
        row.revision,
        op === 'upsert' ? JSON.stringify(toEntry(row)) : null,
        subject,
      ],
    );
    return Number(last_seq);
  }

  /** Up to `limit` changes of `namespace` after `cursor`, in seq order. */
  async changesAfter(namespace: string, cursor: number, limit: number): Promise<StoredChange[]> {
    return this.dataSource.query(
      `SELECT seq, kind, name, op, revision, entity FROM registry_changes
       WHERE namespace = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
      [namespace, cursor, limit],
    );
  }

  /** The latest change seq of `namespace` (0 before any change), or undefined when it does not exist. */
  async latestSeq(namespace: string): Promise<number | undefined> {
    const rows: { last_seq: string | null }[] = await this.dataSource.query(
      `SELECT s.last_seq FROM namespaces n LEFT JOIN registry_sequences s ON s.namespace = n.slug WHERE n.slug = $1`,
      [namespace],
    );
    return rows.length === 0 ? undefined : Number(rows[0].last_seq ?? 0);
  }

  /** How many live entries `namespace` holds of each kind (kinds it holds none of are absent). */
  async liveCounts(namespace: string): Promise<{ kind: RegistryKind; count: number }[]> {
    const rows: { kind: RegistryKind; n: string }[] = await this.dataSource.query(
      `SELECT kind, count(*) AS n FROM registry_entries WHERE namespace = $1 AND deleted_at IS NULL GROUP BY kind`,
      [namespace],
    );
    return rows.map((row) => ({ kind: row.kind, count: Number(row.n) }));
  }
}
