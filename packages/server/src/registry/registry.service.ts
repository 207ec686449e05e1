import { Injectable } from '@nestjs/common';
import type { DeletedEntry } from '@cleveragents/contract';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.service.js';
import { roleSatisfies } from '../common/principal.js';
import type { Acting } from '../common/actor.js';
import { checkRevision } from '../common/revision.js';
import {
  decodePageToken,
  invalidPageToken,
  pageOf,
  pageSizeOf,
  type Page,
  type PageRequest,
} from '../common/paging.js';
import { isNamespaceSlug } from '../common/namespace-slug.js';
import { ModelEndpointGuard } from '../execution/model-endpoint.guard.js';
import { sealActorSpec } from '../execution/a2a/a2a-credential.js';
import { SecretBox } from '../common/secret-box.js';
import { requireActorWriter } from './actor-writer.rule.js';
import { isRegistryKind, type RegistryKind } from './registry.kinds.js';
import { isLive, toEntry, type Channel, type RegistryEntry, type StoredEntry } from './registry-entry.js';
import { adminRequired, entryExists, entryNotFound, namespaceNotFound, nothingToUpdate } from './registry.errors.js';
import { RegistryRepository } from './registry.repository.js';

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
  /** null: kept as they are, a write all the same (as `registry/update` has always taken it). */
  labels?: Record<string, string> | null;
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
 * The registry (docs/protocol.md §6.2): versioned definitions per namespace. Every mutation runs in one
 * transaction with its change-log row (RegistryRepository) and its audit record. Specs
 * arrive validated (the contract's params schemas); this service checks existence, revisions, an actor's model
 * endpoint (ModelEndpointGuard) and the finer role rules: profiles, the default actor and what an
 * actor runs with take an admin (requireWriter, requireActorWriter).
 */
@Injectable()
export class RegistryService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly entries: RegistryRepository,
    private readonly audit: AuditLog,
    private readonly modelEndpoints: ModelEndpointGuard,
    private readonly secretBox: SecretBox,
  ) {}

  /**
   * The spec a write stores: an actor's A2A credential sealed (kept from `stored` when the write leaves it
   * out); other kinds as given.
   */
  sealedSpec(
    namespace: string,
    kind: RegistryKind,
    name: string,
    spec: Record<string, unknown>,
    stored: Record<string, unknown> | undefined,
  ): Record<string, unknown> {
    return kind === 'actor' ? sealActorSpec(this.secretBox, namespace, name, spec, stored) : spec;
  }

  async create(input: CreateEntryInput, by: Acting): Promise<RegistryEntry> {
    requireWriter(by, input.namespace, [input.kind]);
    if (input.kind === 'actor') {
      // The role first: a member must not learn from the endpoint check which hosts the operator admits.
      requireActorWriter(by, input.namespace, input.name, undefined, plain(input.spec));
      await this.modelEndpoints.assertAdmitted(input.spec);
    }
    return this.dataSource.transaction(async (manager) => {
      await this.lock(manager, input.namespace, by);
      const current = await this.entries.find(manager, input.namespace, input.kind, input.name);
      if (isLive(current)) {
        throw entryExists(input.namespace, input.kind, input.name, current.revision);
      }
      const spec = this.sealedSpec(input.namespace, input.kind, input.name, plain(input.spec), undefined);
      const content = { ...input, spec, labels: input.labels ?? {} };
      const row = await this.entries.write(manager, input.namespace, current, content, by.actor.subject);
      return this.written(manager, row, 'create', by);
    });
  }

  async get(key: EntryKey): Promise<RegistryEntry> {
    const found = isNamespaceSlug(key.namespace)
      ? await this.entries.findLive(key.namespace, key.kind, key.name)
      : undefined;
    if (found) return toEntry(found);
    await this.requireNamespace(key.namespace);
    throw entryNotFound(key.namespace, key.kind, key.name);
  }

  /**
   * An entry's spec as stored (an actor's A2A credential still sealed): for running the actor, never
   * for an answer. Errors as `get`.
   */
  async storedSpec(key: EntryKey): Promise<Record<string, unknown>> {
    const found = isNamespaceSlug(key.namespace)
      ? await this.entries.findLive(key.namespace, key.kind, key.name)
      : undefined;
    if (found) return found.spec ?? {};
    await this.requireNamespace(key.namespace);
    throw entryNotFound(key.namespace, key.kind, key.name);
  }

  /** Live entries in (kind, name) order, keyset-paged; `labels` keeps those carrying every pair given. */
  async list(query: ListEntriesQuery): Promise<Page<RegistryEntry>> {
    const pageSize = pageSizeOf(query);
    const cursor = decodePageToken(PAGE_LIST, query.pageToken, 2);
    if (cursor && !isRegistryKind(cursor[0])) throw invalidPageToken();
    await this.requireNamespace(query.namespace);
    const { rows, totalSize } = await this.entries.page(
      { namespace: query.namespace, kind: query.kind, labels: query.labels },
      cursor ? [cursor[0], cursor[1]] : undefined,
      pageSize,
    );
    return pageOf(rows, pageSize, totalSize, PAGE_LIST, (row) => [row.kind, row.name], toEntry);
  }

  /** Replaces the spec and/or the labels (each whole); -32004 REVISION_CONFLICT on a stale expectedRevision. */
  async update(input: UpdateEntryInput, by: Acting): Promise<RegistryEntry> {
    if (input.spec === undefined && input.labels === undefined) {
      throw nothingToUpdate();
    }
    requireWriter(by, input.namespace, [input.kind]);
    if (input.kind === 'actor' && input.spec !== undefined) {
      // The role first (against the stored spec, checked again under the lock), then the endpoint: see create.
      const stored = await this.entries.find(this.dataSource.manager, input.namespace, 'actor', input.name);
      requireActorWriter(by, input.namespace, input.name, isLive(stored) ? stored.spec : undefined, plain(input.spec));
      await this.modelEndpoints.assertAdmitted(input.spec);
    }
    return this.dataSource.transaction(async (manager) => {
      const current = await this.lockLive(manager, input, by);
      checkRevision(`The ${input.kind}`, input.name, current.revision, input.expectedRevision);
      if (input.kind === 'actor' && input.spec !== undefined) {
        requireActorWriter(by, input.namespace, input.name, current.spec ?? undefined, plain(input.spec));
      }
      const content = {
        kind: input.kind,
        name: input.name,
        spec:
          input.spec === undefined
            ? (current.spec ?? {})
            : this.sealedSpec(input.namespace, input.kind, input.name, plain(input.spec), current.spec ?? undefined),
        labels: input.labels ?? current.labels,
      };
      const row = await this.entries.write(manager, input.namespace, current, content, by.actor.subject);
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
      const row = await this.entries.tombstone(manager, current, by.actor.subject);
      await this.recordWrite(manager, row, 'delete', by, 'registry');
      return {
        namespace: row.namespace,
        kind: row.kind,
        name: row.name,
        revision: row.revision,
        deleted: true as const,
      };
    });
  }

  /**
   * Makes the caller the one writer of `namespace`'s registry until its transaction ends (see
   * RegistryRepository.lock); -32001 for a namespace that does not exist.
   */
  async lock(manager: EntityManager, namespace: string, by: Acting): Promise<void> {
    const locked = isNamespaceSlug(namespace) && (await this.entries.lock(manager, namespace, by.actor.subject));
    if (!locked) throw namespaceNotFound(namespace);
  }

  /**
   * The change log row and the audit record of a write just made, in its transaction. Returns the
   * change's sequence.
   */
  async recordWrite(
    manager: EntityManager,
    row: StoredEntry,
    action: 'create' | 'update' | 'delete',
    by: Acting,
    via: Channel,
  ): Promise<number> {
    const seq = await this.entries.appendChange(
      manager,
      row,
      action === 'delete' ? 'delete' : 'upsert',
      by.actor.subject,
    );
    await this.audit.record(manager, {
      namespace: row.namespace,
      actor: by.actor.subject,
      action: `registry.${action}`,
      target: `${row.kind}/${row.name}`,
      details: { kind: row.kind, name: row.name, id: row.id, revision: row.revision, seq, via },
      requestId: by.requestId,
    });
    return seq;
  }

  private async lockLive(manager: EntityManager, key: EntryKey, by: Acting): Promise<StoredEntry> {
    await this.lock(manager, key.namespace, by);
    const current = await this.entries.find(manager, key.namespace, key.kind, key.name);
    if (!isLive(current)) throw entryNotFound(key.namespace, key.kind, key.name);
    return current;
  }

  private async written(
    manager: EntityManager,
    row: StoredEntry,
    action: 'create' | 'update',
    by: Acting,
  ): Promise<RegistryEntry> {
    await this.recordWrite(manager, row, action, by, 'registry');
    return toEntry(row);
  }

  private async requireNamespace(namespace: string): Promise<void> {
    const found = isNamespaceSlug(namespace) && (await this.entries.namespaceExists(namespace));
    if (!found) throw namespaceNotFound(namespace);
  }
}

/**
 * Profiles decide the human gates and budgets (docs/protocol.md §5): changing one takes `admin` in the
 * namespace, above the `member` the write methods declare. -32003 ROLE_REQUIRED otherwise.
 */
export function requireWriter(by: Acting, namespace: string, kinds: Iterable<RegistryKind>): void {
  if (![...kinds].includes('profile')) return;
  const held = by.actor.roleIn(namespace);
  if (held !== undefined && roleSatisfies(held, 'admin')) return;
  throw adminRequired('Changing a profile', namespace, held);
}

/** A validated spec (a DTO instance) as the plain JSON that is stored. */
export function plain(spec: object): Record<string, unknown> {
  return JSON.parse(JSON.stringify(spec)) as Record<string, unknown>;
}
