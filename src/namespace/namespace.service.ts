import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.service.js';
import { ROLES, type Role } from '../auth/principal.js';
import type { Acting } from '../common/actor.js';
import {
  AuthorizationError,
  BusinessRuleViolation,
  DuplicateEntityError,
  ResourceNotFoundError,
  ValidationError,
  type FieldViolation,
} from '../common/domain.errors.js';
import { checkRevision } from '../common/revision.js';
import { decodePageToken, pageOf, pageSizeOf, type Page, type PageRequest } from '../common/paging.js';
import { AppConfig } from '../config/app.config.js';
import type { DeletedNamespace, MemberView, NamespaceView, RemovedMember } from '../contract/methods/namespace.js';
import { installBuiltins } from '../registry/registry.store.js';
import { isNamespaceSlug, leafOf, parentOf, slugRule } from '../common/namespace-slug.js';
import { visibilityFilter } from './namespace-visibility.js';

export const MAX_DISPLAY_NAME_LENGTH = 200;
export const MAX_DESCRIPTION_LENGTH = 2000;
/** A subject as `auth/whoami` prints it: `<scheme>:<id>`, no whitespace or control characters. */
export const SUBJECT_PATTERN = /^[a-zA-Z][a-zA-Z0-9+.-]*:[^\s\p{Cc}]+$/u;
export const MAX_SUBJECT_LENGTH = 300;
export const SUBJECT_RULE =
  `subject must be "<scheme>:<id>" as auth/whoami prints it (e.g. "oidc:alice", "apikey:01J…"), ` +
  `without spaces, at most ${MAX_SUBJECT_LENGTH} characters`;

/**
 * A subject as stored: an API key's id is a ULID, case-insensitive, stored upper case (as whoami
 * prints it), so `apikey:01j…` and `apikey:01J…` name the same key. Other subjects are kept as given.
 */
export function canonicalSubject(subject: string): string {
  return /^apikey:[0-9a-z]{26}$/i.test(subject) ? `apikey:${subject.slice(7).toUpperCase()}` : subject;
}

export function isSubject(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_SUBJECT_LENGTH && SUBJECT_PATTERN.test(value);
}

/** A namespace and a member as `_cleveragents/namespace/*` shows them: the contract's. */
export type { MemberView, NamespaceView };

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

export interface SetMemberInput {
  namespace: string;
  subject: string;
  role: Role;
  /** The member's current revision; 0 means "not a member yet". */
  expectedRevision?: number;
}

interface NamespaceRow {
  slug: string;
  parent: string | null;
  display_name: string;
  description: string;
  revision: number;
  created_at: Date | string;
  updated_at: Date | string;
  created_by: string;
}

interface MemberRow {
  namespace: string;
  subject: string;
  role: Role;
  revision: number;
  created_at: Date | string;
  updated_at: Date | string;
  created_by: string;
}

const NAMESPACE_COLUMNS = 'slug, parent, display_name, description, revision, created_at, updated_at, created_by';
const MEMBER_COLUMNS = 'namespace, subject, role, revision, created_at, updated_at, created_by';

/**
 * Namespaces and their members (SPEC.md §6.1). Method-level roles are checked before a call (the
 * dispatcher, or the admin CLI acting as owner); the finer rules are checked here: only an owner
 * grants or changes `owner`, a top-level namespace keeps an owner member, a namespace is deleted
 * only when empty and never when it is the configured default.
 *
 * The creator of a namespace becomes its `owner` member, unless it already is owner there through a
 * grant (an owner of the parent, a `*` owner such as local mode): that membership would add nothing
 * and would outlive the grant that made it pointless.
 */
@Injectable()
export class NamespaceService {
  constructor(
    private readonly dataSource: DataSource,
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
      if (parent !== undefined && (await lockNamespace(manager, parent, 'FOR SHARE')) === undefined) {
        throw namespaceNotFound(parent);
      }
      const inserted: NamespaceRow[] = await manager.query(
        `INSERT INTO namespaces (slug, parent, display_name, description, created_by)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (slug) DO NOTHING RETURNING ${NAMESPACE_COLUMNS}`,
        [slug, parent ?? null, input.displayName ?? leafOf(slug), input.description ?? '', by.actor.subject],
      );
      if (inserted.length === 0) {
        // Only who may see it learns it exists; anyone else gets what a missing namespace gets.
        if (!by.actor.roleIn(slug) && !(await isMember(manager, slug, by.actor.subject))) throw namespaceNotFound(slug);
        throw new DuplicateEntityError(`Namespace ${slug} already exists`, 'NAMESPACE_EXISTS', { namespace: slug });
      }
      await installBuiltins(manager, slug, by);
      const becomesOwner = by.actor.roleIn(slug) !== 'owner';
      if (becomesOwner) {
        await manager.query(
          `INSERT INTO namespace_members (namespace, subject, role, created_by) VALUES ($1, $2, 'owner', $2)`,
          [slug, by.actor.subject],
        );
      }
      await this.audit.record(manager, {
        namespace: slug,
        actor: by.actor.subject,
        action: 'namespace.create',
        target: slug,
        details: {
          displayName: inserted[0].display_name,
          description: inserted[0].description,
          ownerMember: becomesOwner ? by.actor.subject : null,
        },
        requestId: by.requestId,
      });
      return toNamespaceView(inserted[0]);
    });
  }

  async get(namespace: string): Promise<NamespaceView> {
    const rows: NamespaceRow[] = isNamespaceSlug(namespace)
      ? await this.dataSource.query(`SELECT ${NAMESPACE_COLUMNS} FROM namespaces WHERE slug = $1`, [namespace])
      : [];
    if (rows.length === 0) throw namespaceNotFound(namespace);
    return toNamespaceView(rows[0]);
  }

  /**
   * The namespaces a principal with these grant keys (namespace slugs, or `*` for all) has a role in,
   * in slug order: each granted namespace and the ones below it.
   */
  async listVisible(grantKeys: Iterable<string>, page: PageRequest): Promise<Page<NamespaceView>> {
    const pageSize = pageSizeOf(page);
    const cursor = decodePageToken('namespaces', page.pageToken, 1);
    const filter = visibilityFilter(grantKeys);
    const counted: { total: string }[] = await this.dataSource.query(
      `SELECT count(*) AS total FROM namespaces WHERE ${filter.sql}`,
      filter.values,
    );
    const values: unknown[] = [...filter.values];
    let where = filter.sql;
    if (cursor) {
      values.push(cursor[0]);
      where += ` AND slug > $${values.length}`;
    }
    values.push(pageSize + 1);
    const rows: NamespaceRow[] = await this.dataSource.query(
      `SELECT ${NAMESPACE_COLUMNS} FROM namespaces WHERE ${where} ORDER BY slug LIMIT $${values.length}`,
      values,
    );
    return pageOf(rows, pageSize, Number(counted[0]?.total ?? 0), 'namespaces', (row) => [row.slug], toNamespaceView);
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
      const current = await lockNamespace(manager, input.namespace, 'FOR UPDATE');
      if (!current) throw namespaceNotFound(input.namespace);
      checkRevision('Namespace', input.namespace, current.revision, input.expectedRevision);
      const rows: NamespaceRow[] = await manager.query(
        `WITH updated AS (
           UPDATE namespaces SET display_name = COALESCE($2, display_name), description = COALESCE($3, description),
             revision = revision + 1, updated_at = now()
           WHERE slug = $1 RETURNING ${NAMESPACE_COLUMNS})
         SELECT * FROM updated`,
        [input.namespace, input.displayName ?? null, input.description ?? null],
      );
      const details: Record<string, unknown> = { revision: rows[0].revision };
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
      return toNamespaceView(rows[0]);
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
      throw new BusinessRuleViolation(
        `Namespace ${slug} is the server's default namespace (CLEVERAGENTS_DEFAULT_NAMESPACE) and cannot be deleted`,
        'DEFAULT_NAMESPACE',
        { namespace: slug },
      );
    }
    return this.dataSource.transaction(async (manager) => {
      const current = await lockNamespace(manager, slug, 'FOR UPDATE');
      if (!current) throw namespaceNotFound(slug);
      checkRevision('Namespace', slug, current.revision, input.expectedRevision);
      const [contents]: Record<string, boolean>[] = await manager.query(
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
      const holds = Object.keys(contents).filter((kind) => contents[kind]);
      if (holds.length > 0) {
        throw new BusinessRuleViolation(
          `Namespace ${slug} is not empty: it holds ${holds.join(', ')}; delete or move them (revoke its API keys) first`,
          'NAMESPACE_NOT_EMPTY',
          { namespace: slug, holds: holds.join(',') },
        );
      }
      await manager.query('DELETE FROM namespaces WHERE slug = $1', [slug]);
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

  /** The namespace's own members (not those inherited from above), in subject order. */
  async listMembers(namespace: string, page: PageRequest): Promise<Page<MemberView>> {
    const pageSize = pageSizeOf(page);
    const cursor = decodePageToken('members', page.pageToken, 1);
    await this.get(namespace);
    const counted: { total: string }[] = await this.dataSource.query(
      'SELECT count(*) AS total FROM namespace_members WHERE namespace = $1',
      [namespace],
    );
    const values: unknown[] = [namespace];
    let where = 'namespace = $1';
    if (cursor) {
      values.push(cursor[0]);
      where += ` AND subject > $${values.length}`;
    }
    values.push(pageSize + 1);
    const rows: MemberRow[] = await this.dataSource.query(
      `SELECT ${MEMBER_COLUMNS} FROM namespace_members WHERE ${where} ORDER BY subject LIMIT $${values.length}`,
      values,
    );
    return pageOf(rows, pageSize, Number(counted[0]?.total ?? 0), 'members', (row) => [row.subject], toMemberView);
  }

  /**
   * Grants `subject` a role, or changes it. Only an owner grants `owner` or changes an owner's role
   * (-32003); demoting the last owner member of a top-level namespace is -32004 LAST_OWNER (below the
   * top, the parent's owners remain owners). Setting the role a member already has changes nothing.
   */
  async setMember(given: SetMemberInput, by: Acting): Promise<MemberView> {
    const violations = memberViolations(given);
    const input = isSubject(given.subject) ? { ...given, subject: canonicalSubject(given.subject) } : given;
    if (!(ROLES as readonly string[]).includes(input.role)) {
      violations.push({ field: 'role', description: `role must be one of ${ROLES.join(', ')}` });
    }
    if (violations.length > 0) throw new ValidationError(violations);
    return this.dataSource.transaction(async (manager) => {
      // Locking the namespace row serialises member changes in it, so two demotions cannot both pass the owner count.
      const namespace = await lockNamespace(manager, input.namespace, 'FOR UPDATE');
      if (!namespace) throw namespaceNotFound(input.namespace);
      const current = await findMember(manager, input.namespace, input.subject);
      if (input.role === 'owner' || current?.role === 'owner') requireOwner(by, input.namespace);
      checkRevision('Member', input.subject, current?.revision ?? 0, input.expectedRevision);
      if (current?.role === input.role) return toMemberView(current);
      if (current?.role === 'owner') await requireAnotherOwner(manager, namespace, input.subject);
      const rows: MemberRow[] = await manager.query(
        `INSERT INTO namespace_members (namespace, subject, role, created_by) VALUES ($1, $2, $3, $4)
         ON CONFLICT (namespace, subject) DO UPDATE
           SET role = EXCLUDED.role, revision = namespace_members.revision + 1, updated_at = now()
         RETURNING ${MEMBER_COLUMNS}`,
        [input.namespace, input.subject, input.role, by.actor.subject],
      );
      await this.audit.record(manager, {
        namespace: input.namespace,
        actor: by.actor.subject,
        action: 'member.set',
        target: input.subject,
        details: { role: input.role, previousRole: current?.role ?? null, revision: rows[0].revision },
        requestId: by.requestId,
      });
      return toMemberView(rows[0]);
    });
  }

  /** Removes a membership, under the same owner rules as setMember. */
  async removeMember(given: { namespace: string; subject: string }, by: Acting): Promise<RemovedMember> {
    const violations = memberViolations(given);
    const input = isSubject(given.subject) ? { ...given, subject: canonicalSubject(given.subject) } : given;
    if (violations.length > 0) throw new ValidationError(violations);
    return this.dataSource.transaction(async (manager) => {
      const namespace = await lockNamespace(manager, input.namespace, 'FOR UPDATE');
      if (!namespace) throw namespaceNotFound(input.namespace);
      const current = await findMember(manager, input.namespace, input.subject);
      if (!current) {
        throw new ResourceNotFoundError(
          `${input.subject} is not a member of namespace ${input.namespace}`,
          'MEMBER_NOT_FOUND',
          { namespace: input.namespace, subject: input.subject },
        );
      }
      if (current.role === 'owner') {
        requireOwner(by, input.namespace);
        await requireAnotherOwner(manager, namespace, input.subject);
      }
      await manager.query('DELETE FROM namespace_members WHERE namespace = $1 AND subject = $2', [
        input.namespace,
        input.subject,
      ]);
      await this.audit.record(manager, {
        namespace: input.namespace,
        actor: by.actor.subject,
        action: 'member.remove',
        target: input.subject,
        details: { previousRole: current.role },
        requestId: by.requestId,
      });
      return { namespace: input.namespace, subject: input.subject, removed: true as const };
    });
  }
}

async function lockNamespace(
  manager: EntityManager,
  slug: string,
  lock: 'FOR SHARE' | 'FOR UPDATE',
): Promise<NamespaceRow | undefined> {
  if (!isNamespaceSlug(slug)) return undefined;
  const rows: NamespaceRow[] = await manager.query(
    `SELECT ${NAMESPACE_COLUMNS} FROM namespaces WHERE slug = $1 ${lock}`,
    [slug],
  );
  return rows[0];
}

async function findMember(manager: EntityManager, namespace: string, subject: string): Promise<MemberRow | undefined> {
  const rows: MemberRow[] = await manager.query(
    `SELECT ${MEMBER_COLUMNS} FROM namespace_members WHERE namespace = $1 AND subject = $2`,
    [namespace, subject],
  );
  return rows[0];
}

/** A member row of `subject` in `namespace` (one a concurrent create by the same subject just made counts). */
async function isMember(manager: EntityManager, namespace: string, subject: string): Promise<boolean> {
  const rows: unknown[] = await manager.query('SELECT 1 FROM namespace_members WHERE namespace = $1 AND subject = $2', [
    namespace,
    subject,
  ]);
  return rows.length > 0;
}

function requireOwner(by: Acting, namespace: string): void {
  if (by.actor.roleIn(namespace) !== 'owner') {
    throw new AuthorizationError(
      `Only an owner of namespace ${namespace} may grant the owner role or change an owner`,
      'OWNER_REQUIRED',
      { namespace, requiredRole: 'owner' },
    );
  }
}

/** A top-level namespace keeps at least one owner member besides `leaving`. */
async function requireAnotherOwner(manager: EntityManager, namespace: NamespaceRow, leaving: string): Promise<void> {
  if (namespace.parent !== null) return;
  const [{ others }]: { others: string }[] = await manager.query(
    `SELECT count(*) AS others FROM namespace_members WHERE namespace = $1 AND role = 'owner' AND subject <> $2`,
    [namespace.slug, leaving],
  );
  if (Number(others) === 0) {
    throw new BusinessRuleViolation(
      `${leaving} is the last owner of namespace ${namespace.slug}; make another member owner first`,
      'LAST_OWNER',
      { namespace: namespace.slug, subject: leaving },
    );
  }
}

function namespaceNotFound(slug: string): ResourceNotFoundError {
  return new ResourceNotFoundError(`Namespace ${slug} does not exist`, 'NAMESPACE_NOT_FOUND', { namespace: slug });
}

function slugViolations(slug: unknown): FieldViolation[] {
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

function memberViolations(input: { namespace: string; subject: string }): FieldViolation[] {
  const violations = slugViolations(input.namespace);
  if (!isSubject(input.subject)) {
    violations.push({ field: 'subject', description: SUBJECT_RULE });
  }
  return violations;
}

function iso(value: Date | string): string {
  return new Date(value).toISOString();
}

function toNamespaceView(row: NamespaceRow): NamespaceView {
  return {
    namespace: row.slug,
    parent: row.parent,
    displayName: row.display_name,
    description: row.description,
    revision: row.revision,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    createdBy: row.created_by,
  };
}

function toMemberView(row: MemberRow): MemberView {
  return {
    namespace: row.namespace,
    subject: row.subject,
    role: row.role,
    revision: row.revision,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    createdBy: row.created_by,
  };
}
