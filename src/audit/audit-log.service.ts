import { Injectable } from '@nestjs/common';
import { monotonicFactory } from 'ulid';
import { DataSource, type EntityManager } from 'typeorm';
import {
  decodePageToken,
  invalidPageToken,
  pageOf,
  pageSizeOf,
  type Page,
  type PageRequest,
} from '../common/paging.js';
import { readKeysetPage, type SqlCondition } from '../database/keyset-page.js';
import type { AuditRecord } from '../contract/methods/audit.js';

/** The actions recorded so far; other domains add theirs (`registry.update`, `plan.approve`, …). */
export type AuditAction =
  | 'namespace.create'
  | 'namespace.update'
  | 'namespace.delete'
  | 'member.set'
  | 'member.remove'
  | 'apikey.create'
  | 'apikey.revoke';

export interface AuditEntry {
  namespace: string;
  /** The acting subject. */
  actor: string;
  action: AuditAction | `${string}.${string}`;
  target: string;
  /** What changed; never a secret. */
  details?: Record<string, unknown>;
  requestId?: string;
}

/** A record as `_cleveragents/audit/list` shows it: the contract's. */
export type { AuditRecord };

export interface AuditQuery extends PageRequest {
  namespace: string;
  action?: string;
  actor?: string;
}

interface AuditRow {
  id: string;
  at: Date | string;
  namespace: string;
  actor: string;
  action: string;
  target: string;
  details: Record<string, unknown>;
  request_id: string | null;
}

const PAGE_LIST = 'audit';
/** Ids made in one millisecond still sort in the order they were made. */
const nextId = monotonicFactory();

/** The audit log of SPEC.md §8: written inside the change's transaction, read newest first. */
@Injectable()
export class AuditLog {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Records `entry` through `manager`, the EntityManager of the transaction that makes the change: a
   * rolled-back change leaves no row, a committed one always has its row.
   */
  async record(manager: EntityManager, entry: AuditEntry): Promise<void> {
    // `at` to the millisecond, from the same clock as the id, so that the (at, id) cursor round-trips exactly.
    const now = Date.now();
    await manager.query(
      `INSERT INTO audit_log (id, at, namespace, actor, action, target, details, request_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)`,
      [
        nextId(now),
        new Date(now),
        entry.namespace,
        entry.actor,
        entry.action,
        entry.target,
        JSON.stringify(entry.details ?? {}),
        entry.requestId ?? null,
      ],
    );
  }

  /** One namespace's records, newest first, optionally only one action or one actor. */
  async list(query: AuditQuery): Promise<Page<AuditRecord>> {
    const pageSize = pageSizeOf(query);
    const cursor = decodePageToken(PAGE_LIST, query.pageToken, 2);
    let after: SqlCondition | undefined;
    if (cursor) {
      const at = new Date(cursor[0]);
      if (Number.isNaN(at.getTime())) throw invalidPageToken();
      after = ['(at, id) < ($?::timestamptz, $?)', at, cursor[1]];
    }
    const { rows, totalSize } = await readKeysetPage<AuditRow>(this.dataSource, {
      columns: 'id, at, namespace, actor, action, target, details, request_id',
      from: 'audit_log',
      where: [
        ['namespace = $?', query.namespace],
        query.action ? ['action = $?', query.action] : undefined,
        query.actor ? ['actor = $?', query.actor] : undefined,
      ],
      after,
      orderBy: 'at DESC, id DESC',
      pageSize,
    });
    return pageOf(rows, pageSize, totalSize, PAGE_LIST, (row) => [new Date(row.at).toISOString(), row.id], toRecord);
  }
}

function toRecord(row: AuditRow): AuditRecord {
  return {
    id: row.id,
    at: new Date(row.at).toISOString(),
    namespace: row.namespace,
    actor: row.actor,
    action: row.action,
    target: row.target,
    details: row.details,
    requestId: row.request_id,
  };
}
