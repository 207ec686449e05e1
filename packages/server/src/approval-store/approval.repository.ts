import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type {
  ApprovalChannel,
  ApprovalState,
  ApprovalSubject,
  ApprovalTimeoutAction,
  ApprovalView,
} from '@cleveragents/contract';
import type { Page, PageRequest } from '../common/paging.js';
import { entityColumns } from '../database/entity-columns.js';
import { readNewestFirstPage } from '../database/keyset-page.js';
import type { StoreScope } from '../database/store-scope.js';
import { ApprovalEntity } from './approval.entity.js';

export type { ApprovalView };

const APPROVAL_LIST = 'approval/list';

function approvalOf(row: ApprovalEntity): ApprovalView {
  return {
    approvalId: row.id,
    namespace: row.namespace,
    requester: row.owner,
    sessionId: row.sessionId,
    taskId: row.taskId,
    requestId: row.requestId,
    subject: row.subject,
    subjectHash: row.subjectHash,
    options: row.options as ApprovalView['options'],
    state: row.state,
    askedAt: row.askedAt.toISOString(),
    answeredAt: row.answeredAt ? row.answeredAt.toISOString() : null,
    answeredBy: row.answeredBy,
    channel: row.channel,
    reason: row.reason,
    expiresAt: row.expiresAt ? row.expiresAt.toISOString() : null,
    onTimeout: row.onTimeout,
    ...(row.edited === null || row.edited === undefined ? {} : { edited: row.edited }),
  };
}

/** An approval a task asks for. */
export interface NewApproval {
  id: string;
  sessionId: string;
  taskId: string;
  requestId: string;
  subject: ApprovalSubject;
  subjectHash: string;
  options: readonly string[];
  /** When it was asked, by the server's clock (its timeout counts from then). */
  askedAt: Date;
  /** When the profile's timeout runs out, and what happens then; absent without one. */
  timeout?: { expiresAt: Date; onTimeout: ApprovalTimeoutAction };
  /** The traceparent of the turn that asks, null when nothing records. */
  traceParent: string | null;
}

/** An approval just ended, with the traceparent of the turn that asked it (null when it was not traced). */
export interface EndedApproval {
  approval: ApprovalView;
  traceParent: string | null;
}

function endedOf(row: ApprovalEntity): EndedApproval {
  return { approval: approvalOf(row), traceParent: row.traceParent ?? null };
}

/** How a pending approval ends: answered (approved, rejected, edited) or not (canceled, expired). */
export interface ApprovalSettlement {
  state: Exclude<ApprovalState, 'pending'>;
  answeredBy: string | null;
  channel: ApprovalChannel | null;
  reason: string | null;
  edited?: unknown;
  /** Only if the approval's timeout ran out by then (a timeout's denial, never early whichever replica sends it). */
  expiredBy?: Date;
}

/** The `approvals` table (docs/plans.md#approvals): the only place its SQL lives. */
@Injectable()
export class ApprovalRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get columns(): string {
    return entityColumns(this.dataSource, ApprovalEntity);
  }

  /**
   * Records that a task asks `approval`, in `manager`'s transaction: a pending approval of the task that asks
   * something else is canceled first (the task no longer waits for it). Returns the pending approval, and
   * whether this call made it (a turn taken up again asks again with the same request id: the same approval).
   */
  async ask(
    manager: EntityManager,
    scope: StoreScope,
    approval: NewApproval,
  ): Promise<{ approval: ApprovalView; created: boolean; superseded: EndedApproval[] }> {
    // An UPDATE's RETURNING comes back from TypeORM as [rows, count]; a CTE's SELECT as rows.
    const superseded: ApprovalEntity[] = await manager.query(
      `WITH ended AS (
         UPDATE approvals SET state = 'canceled', answered_at = now(), reason = 'The task asks something else now'
         WHERE namespace = $1 AND owner = $2 AND task_id = $3 AND state = 'pending' AND request_id <> $4
         RETURNING ${this.columns})
       SELECT * FROM ended`,
      [scope.namespace, scope.owner, approval.taskId, approval.requestId],
    );
    const inserted: ApprovalEntity[] = await manager.query(
      `INSERT INTO approvals (namespace, owner, id, session_id, task_id, request_id, subject, subject_hash, options,
         asked_at, expires_at, on_timeout, trace_parent)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9::jsonb, $10, $11, $12, $13)
       ON CONFLICT (namespace, owner, task_id) WHERE state = 'pending' DO NOTHING
       RETURNING ${this.columns}`,
      [
        scope.namespace,
        scope.owner,
        approval.id,
        approval.sessionId,
        approval.taskId,
        approval.requestId,
        JSON.stringify(approval.subject),
        approval.subjectHash,
        JSON.stringify(approval.options),
        approval.askedAt,
        approval.timeout?.expiresAt ?? null,
        approval.timeout?.onTimeout ?? null,
        approval.traceParent,
      ],
    );
    const ended = superseded.map(endedOf);
    if (inserted[0]) return { approval: approvalOf(inserted[0]), created: true, superseded: ended };
    const pending = await this.pendingOfTask(scope, approval.taskId, manager);
    if (!pending) throw new Error(`task ${approval.taskId} has neither a new nor a pending approval`);
    return { approval: pending, created: false, superseded: ended };
  }

  /** The task's pending approval, if it has one. */
  async pendingOfTask(
    scope: StoreScope,
    taskId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<ApprovalView | undefined> {
    const rows: ApprovalEntity[] = await manager.query(
      `SELECT ${this.columns} FROM approvals WHERE namespace = $1 AND owner = $2 AND task_id = $3 AND state = 'pending'`,
      [scope.namespace, scope.owner, taskId],
    );
    return rows[0] ? approvalOf(rows[0]) : undefined;
  }

  /** An approval of the namespace, whoever asked it (for its approvers). */
  async findInNamespace(namespace: string, approvalId: string): Promise<ApprovalView | undefined> {
    const rows: ApprovalEntity[] = await this.dataSource.query(
      `SELECT ${this.columns} FROM approvals WHERE namespace = $1 AND id = $2`,
      [namespace, approvalId],
    );
    return rows[0] ? approvalOf(rows[0]) : undefined;
  }

  /** The task's latest approval of `requestId`, whatever its state. */
  async latestOfRequest(scope: StoreScope, taskId: string, requestId: string): Promise<ApprovalView | undefined> {
    const rows: ApprovalEntity[] = await this.dataSource.query(
      `SELECT ${this.columns} FROM approvals WHERE namespace = $1 AND owner = $2 AND task_id = $3 AND request_id = $4
       ORDER BY created_seq DESC LIMIT 1`,
      [scope.namespace, scope.owner, taskId, requestId],
    );
    return rows[0] ? approvalOf(rows[0]) : undefined;
  }

  async find(
    scope: StoreScope,
    approvalId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<ApprovalView | undefined> {
    const row = await manager.findOneBy(ApprovalEntity, {
      namespace: scope.namespace,
      owner: scope.owner,
      id: approvalId,
    });
    return row ? approvalOf(row) : undefined;
  }

  /** A namespace's approvals (of one requester, or every one's), newest first, optionally of one state or session. */
  list(
    scope: { namespace: string; owner: string | undefined },
    query: PageRequest & { state?: ApprovalState; sessionId?: string },
  ): Promise<Page<ApprovalView>> {
    return readNewestFirstPage<ApprovalEntity & { created_seq: string }, ApprovalView>(this.dataSource, {
      list: APPROVAL_LIST,
      columns: `${this.columns}, created_seq`,
      from: 'approvals',
      where: [
        ['namespace = $?', scope.namespace],
        scope.owner === undefined ? undefined : ['owner = $?', scope.owner],
        query.state ? ['state = $?', query.state] : undefined,
        query.sessionId ? ['session_id = $?', query.sessionId] : undefined,
      ],
      page: query,
      toItem: approvalOf,
    });
  }

  /**
   * Ends a pending approval as `settlement` says, in `manager`'s transaction: the settled approval, or undefined
   * when it was no longer pending (another answer came first). One statement: of two answers at once, one wins.
   */
  async settle(
    manager: EntityManager,
    scope: StoreScope,
    approvalId: string,
    settlement: ApprovalSettlement,
  ): Promise<EndedApproval | undefined> {
    const rows: ApprovalEntity[] = await manager.query(
      `WITH settled AS (
         UPDATE approvals SET state = $4, answered_at = now(), answered_by = $5, channel = $6, reason = $7,
           edited = $8::jsonb
         WHERE namespace = $1 AND owner = $2 AND id = $3 AND state = 'pending'
           AND ($9::timestamptz IS NULL OR expires_at <= $9::timestamptz)
         RETURNING ${this.columns})
       SELECT * FROM settled`,
      [
        scope.namespace,
        scope.owner,
        approvalId,
        settlement.state,
        settlement.answeredBy,
        settlement.channel,
        settlement.reason,
        settlement.edited === undefined ? null : JSON.stringify(settlement.edited),
        settlement.expiredBy ?? null,
      ],
    );
    return rows[0] ? endedOf(rows[0]) : undefined;
  }

  /**
   * The pending approvals, of every namespace, that their timeout denies (`on_timeout` deny), soonest first:
   * what a starting server arms again.
   */
  async pendingToDeny(): Promise<(ApprovalView & { expiresAt: string })[]> {
    const rows: ApprovalEntity[] = await this.dataSource.query(
      `SELECT ${this.columns} FROM approvals WHERE state = 'pending' AND on_timeout = 'deny' AND expires_at IS NOT NULL
       ORDER BY expires_at`,
    );
    return rows.map(approvalOf) as (ApprovalView & { expiresAt: string })[];
  }

  /** Ends the task's pending approval unanswered (the task was canceled, or gave up waiting): the ended approvals. */
  async endPending(
    manager: EntityManager,
    scope: StoreScope,
    taskId: string,
    state: 'canceled' | 'expired',
    reason: string,
  ): Promise<EndedApproval[]> {
    const rows: ApprovalEntity[] = await manager.query(
      `WITH ended AS (
         UPDATE approvals SET state = $4, answered_at = now(), reason = $5
         WHERE namespace = $1 AND owner = $2 AND task_id = $3 AND state = 'pending'
         RETURNING ${this.columns})
       SELECT * FROM ended`,
      [scope.namespace, scope.owner, taskId, state, reason],
    );
    return rows.map(endedOf);
  }
}
