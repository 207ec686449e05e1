import { Injectable } from '@nestjs/common';
import { monotonicFactory } from '../common/ulid.js';
import type { EntityManager } from 'typeorm';
import {
  decodePageToken,
  invalidPageToken,
  pageOf,
  pageSizeOf,
  type Page,
  type PageRequest,
} from '../common/paging.js';
import { iso } from '../common/iso.js';
import type { AuditRecord } from '@cleveragents/contract';
import type { AuditLogEntity } from './audit-log.entity.js';
import { AuditLogRepository } from './audit-log.repository.js';

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
  /** Only records about this target (an approval's id: its request, answer and end). */
  target?: string;
  /** At or after. */
  since?: Date;
  /** Before. */
  until?: Date;
}

const PAGE_LIST = 'audit';
/** Ids made in one millisecond still sort in the order they were made. */
const nextId = monotonicFactory();

/** The audit log of docs/protocol.md §8: written inside the change's transaction, read newest first. */
@Injectable()
export class AuditLog {
  constructor(private readonly records: AuditLogRepository) {}

  /**
   * Records `entry` through `manager`, the EntityManager of the transaction that makes the change: a
   * rolled-back change leaves no row, a committed one always has its row.
   */
  async record(manager: EntityManager, entry: AuditEntry): Promise<void> {
    // `at` to the millisecond, from the same clock as the id, so that the (at, id) cursor round-trips exactly.
    const now = Date.now();
    await this.records.insert(manager, {
      id: nextId(now),
      at: new Date(now),
      namespace: entry.namespace,
      actor: entry.actor,
      action: entry.action,
      target: entry.target,
      details: entry.details ?? {},
      requestId: entry.requestId ?? null,
    });
  }

  /** One namespace's records, newest first, optionally only one action, one actor or a time range. */
  async list(query: AuditQuery): Promise<Page<AuditRecord>> {
    const pageSize = pageSizeOf(query);
    const cursor = decodePageToken(PAGE_LIST, query.pageToken, 2);
    let after: { at: Date; id: string } | undefined;
    if (cursor) {
      after = { at: new Date(cursor[0]), id: cursor[1] };
      if (Number.isNaN(after.at.getTime())) throw invalidPageToken();
    }
    const { rows, totalSize } = await this.records.page(query, after, pageSize);
    return pageOf(rows, pageSize, totalSize, PAGE_LIST, (row) => [iso(row.at), row.id], toRecord);
  }
}

function toRecord(row: AuditLogEntity): AuditRecord {
  return {
    id: row.id,
    at: iso(row.at),
    namespace: row.namespace,
    actor: row.actor,
    action: row.action,
    target: row.target,
    details: row.details,
    requestId: row.requestId,
  };
}
