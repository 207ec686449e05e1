import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type {
  ApprovalChannel,
  ApprovalDecision,
  ApprovalRequest,
  ApprovalState,
  ApprovalTimeout,
} from '@cleveragents/contract';
import { AuditLog } from '../audit/audit-log.service.js';
import { Clock } from '../common/clock.js';
import type { Page, PageRequest } from '../common/paging.js';
import { ulid } from '../common/ulid.js';
import type { StoreScope } from '../database/store-scope.js';
import { traceParentToStore } from '../telemetry/stored-trace.js';
import { alreadyAnswered, approvalNotFound } from './approval.errors.js';
import { ApprovalEvents } from './approval-events.js';
import { GateWaits } from './gate-waits.js';
import { subjectHashOf } from './subject-hash.js';
import { ApprovalRepository, type ApprovalSettlement, type ApprovalView } from './approval.repository.js';

/** The state an answer leaves its approval in. */
const ANSWERED: Record<ApprovalDecision, ApprovalSettlement['state']> = {
  approve: 'approved',
  reject: 'rejected',
  edit: 'edited',
};

const ANSWERED_STATES = Object.values(ANSWERED);

/** Who answers a gate whose profile's timeout ran out: the server itself (`answeredBy`, the audit's actor). */
export const TIMEOUT_ANSWERER = 'system';

/** Called with an approval just asked that its timeout will deny (the replica that asked it arms it). */
export type DeadlineListener = (approval: ApprovalView & { expiresAt: string }) => void;

/** An answer to an approval-request, as the data part or `approval/answer` gives it. */
export interface ApprovalAnswer {
  requestId: string;
  decision: ApprovalDecision;
  edited?: unknown;
  reason?: string;
}

/** Who asks to see or answer approvals: a subject, and whether it answers the namespace's (admins, owners). */
export interface Caller {
  subject: string;
  approver: boolean;
}

/** Who answers, and how. */
export interface Answering {
  subject: string;
  channel: ApprovalChannel;
  requestId?: string;
  /**
   * A timeout's denial: the approval ends `expired` (unanswered by a person), and only if its timeout ran out
   * by this time.
   */
  expiredBy?: Date;
}

/**
 * Approvals (docs/plans.md#approvals): a task waiting at a gate is recorded as one (`asked`), its answer claimed
 * once whichever client sends it (`claim`: the loser gets -32004 ALREADY_ANSWERED), and one that ends
 * unanswered is closed (`ended`). Every change is audited in its own transaction.
 */
@Injectable()
export class ApprovalService {
  private readonly deadlineListeners = new Set<DeadlineListener>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly approvals: ApprovalRepository,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly events: ApprovalEvents,
    private readonly gates: GateWaits,
  ) {}

  /** Tells `listener` of each approval asked here that its timeout denies (docs/plans.md#approval-timeouts). */
  onDeadline(listener: DeadlineListener): () => void {
    this.deadlineListeners.add(listener);
    return () => this.deadlineListeners.delete(listener);
  }

  /**
   * A task of `scope`'s owner waits for `request`: its approval, pending (the same one when asked again), due
   * by its profile's `timeout` when it has one.
   */
  async asked(
    scope: StoreScope,
    taskId: string,
    sessionId: string,
    request: ApprovalRequest,
    timeout?: ApprovalTimeout,
  ): Promise<ApprovalView> {
    // The turn asking: the gate's wait is recorded in its trace when it ends.
    const traceParent = traceParentToStore();
    const asked = await this.dataSource.transaction(async (manager) => {
      const subjectHash = subjectHashOf(request.subject);
      const now = this.clock.now();
      const { approval, created, superseded } = await this.approvals.ask(manager, scope, {
        id: ulid(),
        sessionId,
        taskId,
        requestId: request.requestId,
        subject: request.subject,
        subjectHash,
        options: request.options,
        askedAt: new Date(now),
        ...(timeout
          ? {
              timeout: {
                expiresAt: new Date(now + timeout.seconds * 1000),
                onTimeout: timeout.onTimeout ?? 'deny',
              },
            }
          : {}),
        traceParent,
      });
      for (const ended of superseded) await this.record(manager, 'approval.cancel', scope.owner, ended.approval);
      if (created) await this.record(manager, 'approval.request', scope.owner, approval);
      return { approval, created, superseded };
    });
    const { approval, created } = asked;
    for (const ended of asked.superseded) this.gates.onEnded(ended);
    if (created) this.gates.onAsked(approval);
    if (created && approval.onTimeout === 'deny' && approval.expiresAt !== null) {
      for (const listener of this.deadlineListeners) listener({ ...approval, expiresAt: approval.expiresAt });
    }
    if (created) this.events.requested(approval);
    return approval;
  }

  /** The task's pending approval, if it has one. */
  pendingOf(scope: StoreScope, taskId: string): Promise<ApprovalView | undefined> {
    return this.approvals.pendingOfTask(scope, taskId);
  }

  /** The pending approvals, of every namespace, that their timeout denies: a starting server arms them. */
  pendingToDeny(): Promise<(ApprovalView & { expiresAt: string })[]> {
    return this.approvals.pendingToDeny();
  }

  /**
   * Claims the answer to the task's pending approval of `answer.requestId`: the approval as answered, or
   * undefined when the task's request was never recorded (it began waiting before approvals were). -32004
   * ALREADY_ANSWERED when another answer came first or the approval ended.
   */
  async claim(
    scope: StoreScope,
    taskId: string,
    answer: ApprovalAnswer,
    by: Answering,
  ): Promise<ApprovalView | undefined> {
    const pending = await this.approvals.pendingOfTask(scope, taskId);
    if (!pending || pending.requestId !== answer.requestId) {
      const latest = await this.approvals.latestOfRequest(scope, taskId, answer.requestId);
      if (latest) throw alreadyAnswered(latest.approvalId, latest.state);
      return undefined;
    }
    return this.settle(
      scope,
      pending.approvalId,
      {
        state: by.expiredBy ? 'expired' : ANSWERED[answer.decision],
        answeredBy: by.subject,
        channel: by.channel,
        reason: answer.decision === 'reject' ? (answer.reason ?? null) : null,
        edited: answer.decision === 'edit' ? answer.edited : undefined,
        ...(by.expiredBy ? { expiredBy: by.expiredBy } : {}),
      },
      by.requestId,
      answer.decision,
    );
  }

  /**
   * -32004 ALREADY_ANSWERED when the task's latest approval of `requestId` was answered (an answer that lost
   * the race to the task), by a person or by its timeout; nothing when it is pending or ended unanswered
   * otherwise (then the task simply waits no more).
   */
  async refuseAnswered(scope: StoreScope, taskId: string, requestId: string): Promise<void> {
    const latest = await this.approvals.latestOfRequest(scope, taskId, requestId);
    if (latest && ((ANSWERED_STATES as readonly string[]).includes(latest.state) || latest.channel === 'timeout')) {
      throw alreadyAnswered(latest.approvalId, latest.state);
    }
  }

  /** The task's pending approval ends unanswered (canceled with its task, or expired waiting). */
  async ended(
    scope: StoreScope,
    taskId: string,
    state: 'canceled' | 'expired',
    reason: string,
  ): Promise<ApprovalView[]> {
    const ended = await this.dataSource.transaction(async (manager) => {
      const rows = await this.approvals.endPending(manager, scope, taskId, state, reason);
      const action = state === 'expired' ? 'approval.expire' : 'approval.cancel';
      for (const { approval } of rows) await this.record(manager, action, scope.owner, approval);
      return rows;
    });
    for (const one of ended) this.gates.onEnded(one);
    return ended.map((one) => one.approval);
  }

  /** Ends one pending approval, audited: -32004 ALREADY_ANSWERED when it was no longer pending. */
  async settle(
    scope: StoreScope,
    approvalId: string,
    settlement: ApprovalSettlement,
    requestId?: string,
    decision?: ApprovalDecision,
  ): Promise<ApprovalView> {
    const settled = await this.dataSource.transaction(async (manager) => {
      const settled = await this.approvals.settle(manager, scope, approvalId, settlement);
      if (!settled) {
        // In the transaction: the embedded database's one connection is its until it ends.
        const now = await this.approvals.find(scope, approvalId, manager);
        throw alreadyAnswered(approvalId, now?.state ?? 'gone');
      }
      let action: 'approval.answer' | 'approval.cancel' | 'approval.expire' = 'approval.answer';
      if (settlement.state === 'expired') action = 'approval.expire';
      else if (settlement.answeredBy === null) action = 'approval.cancel';
      await this.record(manager, action, settlement.answeredBy ?? scope.owner, settled.approval, requestId, decision);
      return settled;
    });
    this.gates.onEnded(settled);
    return settled.approval;
  }

  /** An approval `caller` may see: its own, or any of the namespace's for an approver. -32001 otherwise. */
  async get(namespace: string, approvalId: string, caller: Caller): Promise<ApprovalView> {
    const approval = caller.approver
      ? await this.approvals.findInNamespace(namespace, approvalId)
      : await this.approvals.find({ namespace, owner: caller.subject }, approvalId);
    if (!approval) throw approvalNotFound(namespace, approvalId);
    return approval;
  }

  /** The approvals of `requester` (undefined: every requester's) in a namespace, newest first. */
  list(
    namespace: string,
    requester: string | undefined,
    query: PageRequest & { state?: ApprovalState; sessionId?: string },
  ): Promise<Page<ApprovalView>> {
    return this.approvals.list({ namespace, owner: requester }, query);
  }

  private record(
    manager: EntityManager,
    action: 'approval.request' | 'approval.answer' | 'approval.cancel' | 'approval.expire',
    actor: string,
    approval: ApprovalView,
    requestId?: string,
    decision?: ApprovalDecision,
  ): Promise<void> {
    return this.audit.record(manager, {
      namespace: approval.namespace,
      actor,
      action,
      target: approval.approvalId,
      details: {
        requester: approval.requester,
        taskId: approval.taskId,
        sessionId: approval.sessionId,
        subjectKind: approval.subject.kind,
        subjectHash: approval.subjectHash,
        state: approval.state,
        ...(decision ? { decision } : {}),
        ...(approval.expiresAt ? { expiresAt: approval.expiresAt } : {}),
        ...(approval.channel ? { channel: approval.channel } : {}),
        ...(approval.reason ? { reason: approval.reason } : {}),
      },
      requestId,
    });
  }
}
