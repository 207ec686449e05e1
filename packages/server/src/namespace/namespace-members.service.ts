import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.service.js';
import { ROLES, type Role } from '../common/principal.js';
import type { Acting } from '../common/actor.js';
import { ValidationError, type FieldViolation } from '../common/domain.errors.js';
import { iso } from '../common/iso.js';
import { decodePageToken, pageOf, pageSizeOf, type Page, type PageRequest } from '../common/paging.js';
import { checkRevision } from '../common/revision.js';
import {
  MAX_SUBJECT_LENGTH,
  SUBJECT_PATTERN,
  SUBJECT_RULE,
  type MemberView,
  type RemovedMember,
} from '@cleveragents/contract';
import { lastOwner, memberNotFound, ownerRequiredForOwners } from './namespace.errors.js';
import { NamespaceMemberRepository, type StoredMember } from './namespace-member.repository.js';
import type { StoredNamespace } from './namespace.repository.js';
import { NamespaceService, slugViolations } from './namespace.service.js';

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

/** A member as `_cleveragents/namespace/member/*` shows it: the contract's. */
export type { MemberView };

export interface SetMemberInput {
  namespace: string;
  subject: string;
  role: Role;
  /** The member's current revision; 0 means "not a member yet". */
  expectedRevision?: number;
}

/**
 * The members of a namespace (docs/protocol.md §6.1): a subject's role there, which holds in every namespace
 * below too. Only an owner grants or changes `owner`; a top-level namespace keeps an owner member.
 * Every change locks the namespace row (FOR UPDATE), which serialises member changes in it.
 */
@Injectable()
export class NamespaceMembersService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly namespaces: NamespaceService,
    private readonly members: NamespaceMemberRepository,
    private readonly audit: AuditLog,
  ) {}

  /** The namespace's own members (not those inherited from above), in subject order. */
  async listMembers(namespace: string, page: PageRequest): Promise<Page<MemberView>> {
    const pageSize = pageSizeOf(page);
    const cursor = decodePageToken('members', page.pageToken, 1);
    await this.namespaces.get(namespace);
    const { rows, totalSize } = await this.members.page(namespace, cursor?.[0], pageSize);
    return pageOf(rows, pageSize, totalSize, 'members', (row) => [row.subject], toMemberView);
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
      const namespace = await this.namespaces.lock(manager, input.namespace, 'FOR UPDATE');
      const current = await this.members.find(manager, input.namespace, input.subject);
      if (input.role === 'owner' || current?.role === 'owner') requireOwner(by, input.namespace);
      checkRevision('Member', input.subject, current?.revision ?? 0, input.expectedRevision);
      if (current?.role === input.role) return toMemberView(current);
      if (current?.role === 'owner') await this.requireAnotherOwner(manager, namespace, input.subject);
      const member = await this.members.upsert(manager, {
        namespace: input.namespace,
        subject: input.subject,
        role: input.role,
        createdBy: by.actor.subject,
      });
      await this.audit.record(manager, {
        namespace: input.namespace,
        actor: by.actor.subject,
        action: 'member.set',
        target: input.subject,
        details: { role: input.role, previousRole: current?.role ?? null, revision: member.revision },
        requestId: by.requestId,
      });
      return toMemberView(member);
    });
  }

  /** Removes a membership, under the same owner rules as setMember. */
  async removeMember(given: { namespace: string; subject: string }, by: Acting): Promise<RemovedMember> {
    const violations = memberViolations(given);
    const input = isSubject(given.subject) ? { ...given, subject: canonicalSubject(given.subject) } : given;
    if (violations.length > 0) throw new ValidationError(violations);
    return this.dataSource.transaction(async (manager) => {
      const namespace = await this.namespaces.lock(manager, input.namespace, 'FOR UPDATE');
      const current = await this.members.find(manager, input.namespace, input.subject);
      if (!current) {
        throw memberNotFound(input.namespace, input.subject);
      }
      if (current.role === 'owner') {
        requireOwner(by, input.namespace);
        await this.requireAnotherOwner(manager, namespace, input.subject);
      }
      await this.members.delete(manager, input.namespace, input.subject);
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

  /** A top-level namespace keeps at least one owner member besides `leaving`. */
  private async requireAnotherOwner(
    manager: EntityManager,
    namespace: StoredNamespace,
    leaving: string,
  ): Promise<void> {
    if (namespace.parent !== null) return;
    if ((await this.members.countOtherOwners(manager, namespace.slug, leaving)) === 0) {
      throw lastOwner(namespace.slug, leaving);
    }
  }
}

function requireOwner(by: Acting, namespace: string): void {
  if (by.actor.roleIn(namespace) !== 'owner') {
    throw ownerRequiredForOwners(namespace);
  }
}

function memberViolations(input: { namespace: string; subject: string }): FieldViolation[] {
  const violations = slugViolations(input.namespace);
  if (!isSubject(input.subject)) {
    violations.push({ field: 'subject', description: SUBJECT_RULE });
  }
  return violations;
}

function toMemberView(row: StoredMember): MemberView {
  return {
    namespace: row.namespace,
    subject: row.subject,
    role: row.role,
    revision: row.revision,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    createdBy: row.createdBy,
  };
}
