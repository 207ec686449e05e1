import { Injectable } from '@nestjs/common';
import type { DeletedEntry } from '../contract/methods/registry.js';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.service.js';
import { roleSatisfies } from '../auth/principal.js';
import type { Acting } from '../common/actor.js';
import { AuthorizationError, DuplicateEntityError, ValidationError } from '../common/domain.errors.js';
import { checkRevision } from '../common/revision.js';
import {
  decodePageToken,
  invalidPageToken,
  pageOf,
  pageSizeOf,
  type Page,
  type PageRequest,
} from '../common/paging.js';
import { readKeysetPage } from '../database/keyset-page.js';
import { isNamespaceSlug } from '../common/namespace-slug.js';
import { ModelEndpointGuard } from '../execution/model-endpoint.guard.js';
import { requireActorWriter } from './actor-writer.rule.js';
import { isRegistryKind, type RegistryKind } from './registry.kinds.js';
import {
  ENTRY_COLUMNS,
  entryNotFound,
  findEntry,
  isLive,
  lockRegistry,
  namespaceNotFound,
  recordWrite,
  toEntry,
  tombstoneEntry,
  writeEntry,
  type EntryRow,
  type RegistryEntry,
} from './registry.store.js';

export interface EntryKey {
  namespace: string;
  kind: RegistryKind;
  name: string;
}

export interface CreateEntryInput extends EntryKey {
  spec: object;
  labels?: Record<string, string>;
}

export interface UpdateEntryInput extends EntryKey {
  spec?: object;
  labels?: Record<string, string>;
  expectedRevision?: number;
}

export interface DeleteEntryInput extends EntryKey {
  expectedRevision?: number;
}

export interface ListEntriesQuery extends PageRequest {
  namespace: string;
  kind?: RegistryKind;
  labels?: Record<string, string>;
}

/** What `registry/delete` answers: the contract's. */
export type { DeletedEntry };

const PAGE_LIST = 'registry';

/**
 * The registry (SPEC.md §6.2): versioned definitions per namespace. Every mutation runs in one
 * transaction with its change-log row (src/registry/registry.store.ts) and its audit record. Specs
 * arrive validated (the params DTOs); this service checks existence, revisions, an actor's model
 * endpoint (ModelEndpointGuard) and the finer role rules: profiles, the default actor and what an
 * actor runs with take an admin (requireWriter, requireActorWriter).
 */
@Injectable()
export class RegistryService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly audit: AuditLog,
    private readonly modelEndpoints: ModelEndpointGuard,
  ) {}

  async create(input: CreateEntryInput, by: Acting): Promise<RegistryEntry> {
    requireWriter(by, input.namespace, [input.kind]);
    if (input.kind === 'actor') {
      await this.modelEndpoints.assertAdmitted(input.spec);
      requireActorWriter(by, input.namespace, input.name, undefined, plain(input.spec));
    }
    return this.dataSource.transaction(async (manager) => {
      await lockRegistry(manager, input.namespace, by);
      const current = await findEntry(manager, input.namespace, input.kind, input.name);
      if (isLive(current)) {
        throw new DuplicateEntityError(
          `A ${input.kind} named ${input.name} already exists in namespace ${input.namespace}`,
          'REGISTRY_ENTRY_EXISTS',
          { namespace: input.namespace, kind: input.kind, name: input.name, currentRevision: String(current.revision) },
        );
      }
      const content = { ...input, spec: plain(input.spec), labels: input.labels ?? {} };
      const row = await writeEntry(manager, input.namespace, current, content, by.actor.subject);
      return this.written(manager, row, 'create', by);
    });
  }

  async get(key: EntryKey): Promise<RegistryEntry> {
    const rows: EntryRow[] = isNamespaceSlug(key.namespace)
      ? await this.dataSource.query(
          `SELECT ${ENTRY_COLUMNS} FROM registry_entries
           WHERE namespace = $1 AND kind = $2 AND name = $3 AND deleted_at IS NULL`,
          [key.namespace, key.kind, key.name],
        )
      : [];
    if (rows.length > 0) return toEntry(rows[0]);
    await this.requireNamespace(key.namespace);
    throw entryNotFound(key.namespace, key.kind, key.name);
  }

  /** Live entries in (kind, name) order, keyset-paged; `labels` keeps those carrying every pair given. */
  async list(query: ListEntriesQuery): Promise<Page<RegistryEntry>> {
    const pageSize = pageSizeOf(query);
    const cursor = decodePageToken(PAGE_LIST, query.pageToken, 2);
    if (cursor && !isRegistryKind(cursor[0])) throw invalidPageToken();
    await this.requireNamespace(query.namespace);
    const labels = query.labels && Object.keys(query.labels).length > 0 ? JSON.stringify(query.labels) : undefined;
    const { rows, totalSize } = await readKeysetPage<EntryRow>(this.dataSource, {
      columns: ENTRY_COLUMNS,
      from: 'registry_entries',
      where: [
        ['namespace = $?', query.namespace],
        ['deleted_at IS NULL'],
        query.kind ? ['kind = $?', query.kind] : undefined,
        labels ? ['labels @> $?::jsonb', labels] : undefined,
      ],
      after: cursor ? ['(kind, name) > ($?, $?)', cursor[0], cursor[1]] : undefined,
      orderBy: 'kind, name',
      pageSize,
    });
    return pageOf(rows, pageSize, totalSize, PAGE_LIST, (row) => [row.kind, row.name], toEntry);
  }

  /** Replaces the spec and/or the labels (each whole); -32004 REVISION_CONFLICT on a stale expectedRevision. */
  async update(input: UpdateEntryInput, by: Acting): Promise<RegistryEntry> {
    if (input.spec === undefined && input.labels === undefined) {
      throw new ValidationError(
        ['spec', 'labels'].map((field) => ({ field, description: 'give spec or labels (or both) to update' })),
      );
    }
    requireWriter(by, input.namespace, [input.kind]);
    if (input.kind === 'actor' && input.spec !== undefined) await this.modelEndpoints.assertAdmitted(input.spec);
    return this.dataSource.transaction(async (manager) => {
      const current = await this.lockLive(manager, input, by);
      checkRevision(`The ${input.kind}`, input.name, current.revision, input.expectedRevision);
      if (input.kind === 'actor' && input.spec !== undefined) {
        requireActorWriter(by, input.namespace, input.name, current.spec ?? undefined, plain(input.spec));
      }
      const content = {
        kind: input.kind,
        name: input.name,
        spec: input.spec === undefined ? (current.spec ?? {}) : plain(input.spec),
        labels: input.labels ?? current.labels,
      };
      const row = await writeEntry(manager, input.namespace, current, content, by.actor.subject);
      return this.written(manager, row, 'update', by);
    });
  }

  async delete(input: DeleteEntryInput, by: Acting): Promise<DeletedEntry> {
    requireWriter(by, input.namespace, [input.kind]);
    return this.dataSource.transaction(async (manager) => {
      const current = await this.lockLive(manager, input, by);
      checkRevision(`The ${input.kind}`, input.name, current.revision, input.expectedRevision);
      if (input.kind === 'actor') {
        requireActorWriter(by, input.namespace, input.name, current.spec ?? undefined, undefined);
      }
      const row = await tombstoneEntry(manager, current, by.actor.subject);
      await recordWrite(manager, this.audit, row, 'delete', by, 'registry');
      return {
        namespace: row.namespace,
        kind: row.kind,
        name: row.name,
        revision: row.revision,
        deleted: true as const,
      };
    });
  }

  private async lockLive(manager: EntityManager, key: EntryKey, by: Acting): Promise<EntryRow> {
    await lockRegistry(manager, key.namespace, by);
    const current = await findEntry(manager, key.namespace, key.kind, key.name);
    if (!isLive(current)) throw entryNotFound(key.namespace, key.kind, key.name);
    return current;
  }

  private async written(
    manager: EntityManager,
    row: EntryRow,
    action: 'create' | 'update',
    by: Acting,
  ): Promise<RegistryEntry> {
    await recordWrite(manager, this.audit, row, action, by, 'registry');
    return toEntry(row);
  }

  private async requireNamespace(namespace: string): Promise<void> {
    const found: unknown[] = isNamespaceSlug(namespace)
      ? await this.dataSource.query('SELECT 1 FROM namespaces WHERE slug = $1', [namespace])
      : [];
    if (found.length === 0) throw namespaceNotFound(namespace);
  }
}

/**
 * Profiles decide the human gates and budgets (SPEC.md §5): changing one takes `admin` in the
 * namespace, above the `member` the write methods declare. -32003 ROLE_REQUIRED otherwise.
 */
export function requireWriter(by: Acting, namespace: string, kinds: Iterable<RegistryKind>): void {
  if (![...kinds].includes('profile')) return;
  const held = by.actor.roleIn(namespace);
  if (held !== undefined && roleSatisfies(held, 'admin')) return;
  throw new AuthorizationError(
    `Changing a profile requires the admin role in namespace ${namespace}; the caller holds ${held ?? 'none'}`,
    'ROLE_REQUIRED',
    { requiredRole: 'admin', heldRole: held ?? '', namespace },
  );
}

/** A validated spec (a DTO instance) as the plain JSON that is stored. */
export function plain(spec: object): Record<string, unknown> {
  return JSON.parse(JSON.stringify(spec)) as Record<string, unknown>;
}
