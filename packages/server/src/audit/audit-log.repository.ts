import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager, type QueryDeepPartialEntity } from 'typeorm';
import { entityColumns } from '../database/entity-columns.js';
import { readKeysetPage } from '../database/keyset-page.js';
import { AuditLogEntity } from './audit-log.entity.js';

/** Which records a list reads: one namespace's, optionally one action, one actor, a time range. */
export interface AuditFilter {
  namespace: string;
  action?: string;
  actor?: string;
  /** Only records about this target (a slug, a subject, a key id, an approval id). */
  target?: string;
  /** At or after. */
  since?: Date;
  /** Before. */
  until?: Date;
}

/**
 * The `audit_log` table. Records are inserted through the EntityManager of the transaction that makes
 * the change (never on their own: a rolled-back change must leave no record) and read newest first.
 */
@Injectable()
export class AuditLogRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, record: AuditLogEntity): Promise<void> {
    // `details` is any JSON object: TypeORM's deep-partial type cannot say that of a Record.
    await manager.insert(AuditLogEntity, record as QueryDeepPartialEntity<AuditLogEntity>);
  }

  /**
   * `pageSize + 1` records matching `filter`, newest first (at, then id), after the `(at, id)` position
   * `after`; and how many match the filter in all.
   */
  async page(
    filter: AuditFilter,
    after: { at: Date; id: string } | undefined,
    pageSize: number,
  ): Promise<{ rows: AuditLogEntity[]; totalSize: number }> {
    return readKeysetPage<AuditLogEntity>(this.dataSource, {
      columns: entityColumns(this.dataSource, AuditLogEntity),
      from: 'audit_log',
      where: [
        ['namespace = $?', filter.namespace],
        filter.action ? ['action = $?', filter.action] : undefined,
        filter.actor ? ['actor = $?', filter.actor] : undefined,
        filter.target ? ['target = $?', filter.target] : undefined,
        filter.since ? ['at >= $?::timestamptz', filter.since] : undefined,
        filter.until ? ['at < $?::timestamptz', filter.until] : undefined,
      ],
      after: after ? ['(at, id) < ($?::timestamptz, $?)', after.at, after.id] : undefined,
      orderBy: 'at DESC, id DESC',
      pageSize,
    });
  }
}
