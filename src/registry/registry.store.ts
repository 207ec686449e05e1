import { monotonicFactory } from 'ulid';
import type { EntityManager } from 'typeorm';
import type { AuditLog } from '../audit/audit-log.service.js';
import type { Acting } from '../common/actor.js';
import { ResourceNotFoundError } from '../common/domain.errors.js';
import { isNamespaceSlug } from '../common/namespace-slug.js';
import { BUILTIN_DEFINITIONS } from './registry.builtins.js';
import type { RegistryEntry } from '../contract/methods/registry.js';
import type { ChangeOp } from '../contract/methods/sync.js';
import type { RegistryKind } from './registry.kinds.js';

/** A registry entry as the API shows it (SPEC.md §6.2), and how a change touched one: the contract's. */
export type { RegistryEntry };
export type { ChangeOp };

/** What a write stores: the kind's spec and the labels. */
export interface EntryContent {
  kind: RegistryKind;
  name: string;
  spec: Record<string, unknown>;
  labels: Record<string, string>;
}

/** A stored row, tombstones included (`deleted_at` set, `spec` null). */
export interface EntryRow {
  id: string;
  namespace: string;
  kind: RegistryKind;
  name: string;
  spec: Record<string, unknown> | null;
  labels: Record<string, string>;
  builtin: boolean;
  revision: number;
  created_at: Date | string;
  created_by: string;
  updated_at: Date | string;
  updated_by: string;
  deleted_at: Date | string | null;
}

export const ENTRY_COLUMNS =
  'id, namespace, kind, name, spec, labels, builtin, revision, created_at, created_by, updated_at, updated_by, deleted_at';

const nextId = monotonicFactory();

/** TypeORM answers an UPDATE with [rows, count]; wrapped in a CTE, it answers with the rows, as a SELECT does. */
function returning(update: string): string {
  return `WITH changed AS (${update}) SELECT * FROM changed`;
}

export function isLive(row: EntryRow | undefined): row is EntryRow & { spec: Record<string, unknown> } {
  return row !== undefined && row.deleted_at === null;
}

export function toEntry(row: EntryRow): RegistryEntry {
  return {
    id: row.id,
    namespace: row.namespace,
    kind: row.kind,
    name: row.name,
    spec: row.spec ?? {},
    labels: row.labels,
    revision: row.revision,
    builtin: row.builtin,
    createdAt: new Date(row.created_at).toISOString(),
    createdBy: row.created_by,
    updatedAt: new Date(row.updated_at).toISOString(),
    updatedBy: row.updated_by,
  };
}

export function namespaceNotFound(namespace: string): ResourceNotFoundError {
  return new ResourceNotFoundError(`Namespace ${namespace} does not exist`, 'NAMESPACE_NOT_FOUND', { namespace });
}

export function entryNotFound(namespace: string, kind: string, name: string): ResourceNotFoundError {
  return new ResourceNotFoundError(`No ${kind} named ${name} in namespace ${namespace}`, 'REGISTRY_ENTRY_NOT_FOUND', {
    namespace,
    kind,
    name,
  });
}

/**
 * Makes the caller the one writer of `namespace`'s registry until its transaction ends: the namespace
 * row is held against deletion (FOR KEY SHARE, taken first so that lock order is always namespace →
 * counter), the built-ins are installed if this namespace predates the registry, and the sequence row
 * is locked. Throws -32001 for a namespace that does not exist.
 */
export async function lockRegistry(manager: EntityManager, namespace: string, by: Acting): Promise<void> {
  const found: unknown[] = isNamespaceSlug(namespace)
    ? await manager.query('SELECT slug FROM namespaces WHERE slug = $1 FOR KEY SHARE', [namespace])
    : [];
  if (found.length === 0) throw namespaceNotFound(namespace);
  await installBuiltins(manager, namespace, by);
  await manager.query('SELECT last_seq FROM registry_sequences WHERE namespace = $1 FOR UPDATE', [namespace]);
}

/**
 * Installs the built-in definitions (three profiles, a default actor) in `namespace`, once: the
 * sequence row it creates marks the namespace as done, so a built-in deleted later stays deleted. Runs
 * in the caller's transaction (namespace creation, bootstrap). Returns whether it installed them.
 */
export async function installBuiltins(manager: EntityManager, namespace: string, by: Acting): Promise<boolean> {
  const created: unknown[] = await manager.query(
    `INSERT INTO registry_sequences (namespace, last_seq) VALUES ($1, 0)
     ON CONFLICT (namespace) DO NOTHING RETURNING namespace`,
    [namespace],
  );
  if (created.length === 0) return false;
  for (const definition of BUILTIN_DEFINITIONS) {
    const row = await writeEntry(manager, namespace, undefined, definition, by.actor.subject, true);
    await appendChange(manager, row, 'upsert', by.actor.subject);
  }
  return true;
}

/** The entry, live or tombstone, or undefined when the name was never used. */
export async function findEntry(
  manager: EntityManager,
  namespace: string,
  kind: RegistryKind,
  name: string,
): Promise<EntryRow | undefined> {
  const rows: EntryRow[] = await manager.query(
    `SELECT ${ENTRY_COLUMNS} FROM registry_entries WHERE namespace = $1 AND kind = $2 AND name = $3`,
    [namespace, kind, name],
  );
  return rows[0];
}

/**
 * Stores `content`: a new entry at revision 1, a tombstone revived as a new entry (new id, revision
 * counting on), or a live entry changed (revision + 1). Call under lockRegistry.
 */
export async function writeEntry(
  manager: EntityManager,
  namespace: string,
  current: EntryRow | undefined,
  content: EntryContent,
  subject: string,
  builtin = false,
): Promise<EntryRow> {
  const spec = JSON.stringify(content.spec);
  const labels = JSON.stringify(content.labels);
  let rows: EntryRow[];
  if (current === undefined) {
    rows = await manager.query(
      `INSERT INTO registry_entries (id, namespace, kind, name, spec, labels, builtin, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $8) RETURNING ${ENTRY_COLUMNS}`,
      [nextId(), namespace, content.kind, content.name, spec, labels, builtin, subject],
    );
  } else if (isLive(current)) {
    rows = await manager.query(
      returning(`UPDATE registry_entries SET spec = $2::jsonb, labels = $3::jsonb, builtin = false, revision = revision + 1,
         updated_at = now(), updated_by = $4
       WHERE id = $1 RETURNING ${ENTRY_COLUMNS}`),
      [current.id, spec, labels, subject],
    );
  } else {
    rows = await manager.query(
      returning(`UPDATE registry_entries SET id = $2, spec = $3::jsonb, labels = $4::jsonb, builtin = false,
         revision = revision + 1, created_at = now(), created_by = $5, updated_at = now(), updated_by = $5,
         deleted_at = NULL
       WHERE id = $1 RETURNING ${ENTRY_COLUMNS}`),
      [current.id, nextId(), spec, labels, subject],
    );
  }
  return rows[0];
}

/** Turns a live entry into a tombstone at the next revision. Call under lockRegistry. */
export async function tombstoneEntry(manager: EntityManager, current: EntryRow, subject: string): Promise<EntryRow> {
  const rows: EntryRow[] = await manager.query(
    returning(`UPDATE registry_entries SET spec = NULL, builtin = false, revision = revision + 1, updated_at = now(),
       updated_by = $2, deleted_at = now()
     WHERE id = $1 RETURNING ${ENTRY_COLUMNS}`),
    [current.id, subject],
  );
  return rows[0];
}

/**
 * Appends the change `row` underwent to its namespace's log and returns its sequence: the counter row,
 * locked by lockRegistry, is bumped in this transaction, so a rollback takes the number back.
 */
export async function appendChange(
  manager: EntityManager,
  row: EntryRow,
  op: ChangeOp,
  subject: string,
): Promise<number> {
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

/** How a mutation came in, for the audit log. */
export type Channel = 'registry' | 'sync';

/**
 * The change log row and the audit record of a write just made, in its transaction. Returns the
 * change's sequence.
 */
export async function recordWrite(
  manager: EntityManager,
  audit: AuditLog,
  row: EntryRow,
  action: 'create' | 'update' | 'delete',
  by: Acting,
  via: Channel,
): Promise<number> {
  const seq = await appendChange(manager, row, action === 'delete' ? 'delete' : 'upsert', by.actor.subject);
  await audit.record(manager, {
    namespace: row.namespace,
    actor: by.actor.subject,
    action: `registry.${action}`,
    target: `${row.kind}/${row.name}`,
    details: { kind: row.kind, name: row.name, id: row.id, revision: row.revision, seq, via },
    requestId: by.requestId,
  });
  return seq;
}

/**
 * Installs the built-ins in every namespace that predates the registry (its sequence row missing), in
 * the caller's transaction; idempotent. Returns those namespaces. For the start-up bootstrap.
 */
export async function installMissingBuiltins(manager: EntityManager, by: Acting): Promise<string[]> {
  const rows: { slug: string }[] = await manager.query(
    `SELECT slug FROM namespaces n WHERE NOT EXISTS (SELECT 1 FROM registry_sequences s WHERE s.namespace = n.slug)
     ORDER BY slug`,
  );
  for (const { slug } of rows) await installBuiltins(manager, slug, by);
  return rows.map((row) => row.slug);
}
