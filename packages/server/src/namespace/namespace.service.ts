import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.service.js';
import type { Acting } from '../common/actor.js';
import { ValidationError, type FieldViolation } from '../common/domain.errors.js';
import { iso } from '../common/iso.js';
import { isNamespaceSlug, leafOf, parentOf, slugRule } from '../common/namespace-slug.js';
import { decodePageToken, pageOf, pageSizeOf, type Page, type PageRequest } from '../common/paging.js';
import { checkRevision } from '../common/revision.js';
import { AppConfig } from '../config/app.config.js';
import {
  MAX_DESCRIPTION_LENGTH,
  MAX_DISPLAY_NAME_LENGTH,
  type DeletedNamespace,
  type NamespaceView,
} from '@cleveragents/contract';
import {
  defaultNamespaceUndeletable,
  namespaceExists,
  namespaceNotEmpty,
  namespaceNotFound,
} from './namespace.errors.js';
import { NamespaceMemberRepository } from './namespace-member.repository.js';
import { NamespaceBuiltins } from './namespace.ports.js';
import { NamespaceRepository, type StoredNamespace } from './namespace.repository.js';

/** A namespace as `_cleveragents/namespace/*` shows it: the contract's. */
export type { NamespaceView };

export interface CreateNamespaceInput {
  namespace: string;
  displayName?: string;
  description?: string;
}

export interface UpdateNamespaceInput {
  namespace: string;
  displayName?: string;
  description?: string;
  expectedRevision?: number;
}

export interface DeleteNamespaceInput {
  namespace: string;
  expectedRevision?: number;
}

/**
 * Namespaces (docs/protocol.md §6.1), with the rules past the method's role: delete only when empty and
 * not the default; the creator becomes owner (docs/design-notes.md#namespace-rules).
 */
@Injectable()
export class NamespaceService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly namespaces: NamespaceRepository,
    private readonly members: NamespaceMemberRepository,
    private readonly builtins: NamespaceBuiltins,
    private readonly audit: AuditLog,
    private readonly config: AppConfig,
  ) {}

  async create(input: CreateNamespaceInput, by: Acting): Promise<NamespaceView> {
    const violations = [...slugViolations(input.namespace), ...detailViolations(input)];
    if (violations.length > 0) throw new ValidationError(violations);
    const slug = input.namespace;
    const parent = parentOf(slug);
    return this.dataSource.transaction(async (manager) => {
      // FOR SHARE: a parent being deleted (FOR UPDATE) either finishes first or waits for this child.
      if (parent !== undefined) await this.lock(manager, parent, 'FOR SHARE');
      const inserted = await this.namespaces.insertIfAbsent(manager, {
        slug,
        parent: parent ?? null,
        displayName: input.displayName ?? leafOf(slug),
        description: input.description ?? '',
        createdBy: by.actor.subject,
      });
      if (!inserted) {
        // Only who may see it learns it exists; anyone else gets what a missing namespace gets.
        if (!by.actor.roleIn(slug) && !(await this.members.exists(manager, slug, by.actor.subject))) {
          throw namespaceNotFound(slug);
        }
        throw namespaceExists(slug);
      }
      await this.builtins.installBuiltins(manager, slug, by.actor.subject);
      const becomesOwner = by.actor.roleIn(slug) !== 'owner';
      if (becomesOwner) await this.members.insertCreator(manager, slug, by.actor.subject);
      await this.audit.record(manager, {
        namespace: slug,
        actor: by.actor.subject,
        action: 'namespace.create',
        target: slug,
        details: {
          displayName: inserted.displayName,
          description: inserted.description,
          ownerMember: becomesOwner ? by.actor.subject : null,
        },
        requestId: by.requestId,
      });
      return toNamespaceView(inserted);
    });
  }

  async get(namespace: string): Promise<NamespaceView> {
    const found = isNamespaceSlug(namespace) ? await this.namespaces.find(namespace) : undefined;
    if (!found) throw namespaceNotFound(namespace);
    return toNamespaceView(found);
  }

  /**
   * The namespaces a principal with these grant keys (namespace slugs, or `*` for all) has a role in,
   * in slug order: each granted namespace and the ones below it.
   */
  async listVisible(grantKeys: Iterable<string>, page: PageRequest): Promise<Page<NamespaceView>> {
    const pageSize = pageSizeOf(page);
    const cursor = decodePageToken('namespaces', page.pageToken, 1);
    const { rows, totalSize } = await this.namespaces.pageVisible(grantKeys, cursor?.[0], pageSize);
    return pageOf(rows, pageSize, totalSize, 'namespaces', (row) => [row.slug], toNamespaceView);
  }

  async update(input: UpdateNamespaceInput, by: Acting): Promise<NamespaceView> {
    const violations = detailViolations(input);
    if (input.displayName === undefined && input.description === undefined) {
      for (const field of ['displayName', 'description']) {
        violations.push({ field, description: 'give displayName or description (or both) to update' });
      }
    }
    if (violations.length > 0) throw new ValidationError(violations);
    return this.dataSource.transaction(async (manager) => {
      const current = await this.lock(manager, input.namespace, 'FOR UPDATE');
      checkRevision('Namespace', input.namespace, current.revision, input.expectedRevision);
      const updated = await this.namespaces.updateDetails(manager, input.namespace, {
        displayName: input.displayName ?? null,
        description: input.description ?? null,
      });
      const details: Record<string, unknown> = { revision: updated.revision };
      if (input.displayName !== undefined) details.displayName = input.displayName;
      if (input.description !== undefined) details.description = input.description;
      await this.audit.record(manager, {
        namespace: input.namespace,
        actor: by.actor.subject,
        action: 'namespace.update',
        target: input.namespace,
        details,
        requestId: by.requestId,
      });
      return toNamespaceView(updated);
    });
  }

  /**
   * Deletes an empty namespace (its members, revoked keys, unchanged built-in registry definitions and
   * registry change log go with it). Refused (-32004) while it holds child namespaces, tasks,
   * push-notification configs, unrevoked API keys or registry entries someone created or changed, sessions, plans, and
   * for the configured default namespace.
   */
  async delete(input: DeleteNamespaceInput, by: Acting): Promise<DeletedNamespace> {
    const slug = input.namespace;
    if (slug === this.config.defaultNamespace) {
      throw defaultNamespaceUndeletable(slug);
    }
    return this.dataSource.transaction(async (manager) => {
      const current = await this.lock(manager, slug, 'FOR UPDATE');
      checkRevision('Namespace', slug, current.revision, input.expectedRevision);
      const holds = await this.namespaces.contents(manager, slug);
      if (holds.length > 0) {
        throw namespaceNotEmpty(slug, holds);
      }
      await this.namespaces.delete(manager, slug);
      await this.audit.record(manager, {
        namespace: slug,
        actor: by.actor.subject,
        action: 'namespace.delete',
        target: slug,
        details: { revision: current.revision, parent: current.parent },
        requestId: by.requestId,
      });
      return { namespace: slug, deleted: true as const };
    });
  }

  /**
   * The namespace, its row locked until the caller's transaction ends (FOR SHARE holds it against
   * deletion, FOR UPDATE against any other writer); -32001 when it does not exist.
   */
  async lock(manager: EntityManager, slug: string, mode: 'FOR SHARE' | 'FOR UPDATE'): Promise<StoredNamespace> {
    const found = isNamespaceSlug(slug) ? await this.namespaces.lock(manager, slug, mode) : undefined;
    if (!found) throw namespaceNotFound(slug);
    return found;
  }
}

export function slugViolations(slug: unknown): FieldViolation[] {
  return isNamespaceSlug(slug) ? [] : [{ field: 'namespace', description: slugRule('namespace') }];
}

function detailViolations(input: { displayName?: string; description?: string }): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const name = input.displayName;
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '' || name.length > MAX_DISPLAY_NAME_LENGTH)) {
    violations.push({
      field: 'displayName',
      description: `displayName must be 1 to ${MAX_DISPLAY_NAME_LENGTH} characters, not only spaces`,
    });
  }
  const description = input.description;
  if (description !== undefined && (typeof description !== 'string' || description.length > MAX_DESCRIPTION_LENGTH)) {
    violations.push({
      field: 'description',
      description: `description must be at most ${MAX_DESCRIPTION_LENGTH} characters`,
    });
  }
  return violations;
}

function toNamespaceView(row: StoredNamespace): NamespaceView {
  return {
    namespace: row.slug,
    parent: row.parent,
    displayName: row.displayName,
    description: row.description,
    revision: row.revision,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    createdBy: row.createdBy,
  };
}
