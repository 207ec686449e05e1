import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Role } from '../common/principal.js';
import { entityColumns } from '../database/entity-columns.js';
import { readKeysetPage } from '../database/keyset-page.js';
import { NamespaceMemberEntity } from './namespace-member.entity.js';

/** A membership row, without its relation. */
export type StoredMember = Omit<NamespaceMemberEntity, 'namespaceEntity'>;

/**
 * The `namespace_members` table. Writes and the reads that decide them take the EntityManager of the
 * caller's transaction (which holds the namespace row locked); lists and authentication's lookups go
 * through the DataSource.
 */
@Injectable()
export class NamespaceMemberRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get columns(): string {
    return entityColumns(this.dataSource, NamespaceMemberEntity);
  }

  async find(manager: EntityManager, namespace: string, subject: string): Promise<StoredMember | undefined> {
    const rows: StoredMember[] = await manager.query(
      `SELECT ${this.columns} FROM namespace_members WHERE namespace = $1 AND subject = $2`,
      [namespace, subject],
    );
    return rows[0];
  }

  /** Whether `subject` is a member of `namespace` (a row a concurrent create by the same subject just made counts). */
  async exists(manager: EntityManager, namespace: string, subject: string): Promise<boolean> {
    return manager.existsBy(NamespaceMemberEntity, { namespace, subject });
  }

  /** Makes `subject` an owner of the namespace it just created (created by itself). */
  async insertCreator(manager: EntityManager, namespace: string, subject: string): Promise<void> {
    await manager.query(
      `INSERT INTO namespace_members (namespace, subject, role, created_by) VALUES ($1, $2, 'owner', $2)`,
      [namespace, subject],
    );
  }

  /** Grants `role`, or changes a member's role at the next revision. */
  async upsert(
    manager: EntityManager,
    member: { namespace: string; subject: string; role: Role; createdBy: string },
  ): Promise<StoredMember> {
    const rows: StoredMember[] = await manager.query(
      `INSERT INTO namespace_members (namespace, subject, role, created_by) VALUES ($1, $2, $3, $4)
       ON CONFLICT (namespace, subject) DO UPDATE
         SET role = EXCLUDED.role, revision = namespace_members.revision + 1, updated_at = now()
       RETURNING ${this.columns}`,
      [member.namespace, member.subject, member.role, member.createdBy],
    );
    return rows[0];
  }

  async delete(manager: EntityManager, namespace: string, subject: string): Promise<void> {
    await manager.query('DELETE FROM namespace_members WHERE namespace = $1 AND subject = $2', [namespace, subject]);
  }

  /** How many owner members `namespace` has besides `leaving`. */
  async countOtherOwners(manager: EntityManager, namespace: string, leaving: string): Promise<number> {
    const [{ others }]: { others: string }[] = await manager.query(
      `SELECT count(*) AS others FROM namespace_members WHERE namespace = $1 AND role = 'owner' AND subject <> $2`,
      [namespace, leaving],
    );
    return Number(others);
  }

  /** `pageSize + 1` members of `namespace` in subject order after `afterSubject`, and how many it has. */
  async page(
    namespace: string,
    afterSubject: string | undefined,
    pageSize: number,
  ): Promise<{ rows: StoredMember[]; totalSize: number }> {
    return readKeysetPage<StoredMember>(this.dataSource, {
      columns: this.columns,
      from: 'namespace_members',
      where: [['namespace = $?', namespace]],
      after: afterSubject === undefined ? undefined : ['subject > $?', afterSubject],
      orderBy: 'subject',
      pageSize,
    });
  }

  /** The role `subject` holds in each namespace it is a member of (IDX_namespace_members_subject). */
  async rolesOf(subject: string): Promise<{ namespace: string; role: Role }[]> {
    return this.dataSource.query('SELECT namespace, role FROM namespace_members WHERE subject = $1', [subject]);
  }
}
