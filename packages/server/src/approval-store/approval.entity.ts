import { Check, Column, Entity, Generated, Index } from 'typeorm';
import type { ApprovalChannel, ApprovalState, ApprovalSubject, ApprovalTimeoutAction } from '@cleveragents/contract';
import { OwnerScopedColumns } from '../database/owner-scoped-columns.js';
import { TRACE_PARENT_CHECK } from '../telemetry/stored-trace.js';

/**
 * A gate a task waits at (docs/plans.md#approvals): what it asks approval of, of whom (`owner`, the session's
 * owner) and how it was answered. At most one approval of a task is pending: its answer is claimed once.
 */
@Entity({ name: 'approvals' })
@Index('IDX_approvals_scope_recent', ['namespace', 'owner', 'createdSeq'])
@Index('IDX_approvals_namespace_recent', ['namespace', 'createdSeq'])
@Index('IDX_approvals_task', ['namespace', 'owner', 'taskId'])
@Index('IDX_approvals_pending_task', ['namespace', 'owner', 'taskId'], { unique: true, where: `"state" = 'pending'` })
@Index('IDX_approvals_pending_deadline', ['expiresAt'], { where: `"state" = 'pending' AND "on_timeout" = 'deny'` })
@Check('CHK_approvals_trace_parent', TRACE_PARENT_CHECK)
export class ApprovalEntity extends OwnerScopedColumns {
  /** The session (contextId) of the task. */
  @Column({ name: 'session_id', type: 'text' })
  sessionId: string;

  @Column({ name: 'task_id', type: 'text' })
  taskId: string;

  /** The approval-request's id, as the task's status message carries it. */
  @Column({ name: 'request_id', type: 'text' })
  requestId: string;

  @Column({ type: 'jsonb' })
  subject: ApprovalSubject;

  /** sha-256 (hex) of the subject's canonical JSON. */
  @Column({ name: 'subject_hash', type: 'text' })
  subjectHash: string;

  @Column({ type: 'jsonb' })
  options: string[];

  @Column({ type: 'text', default: 'pending' })
  state: ApprovalState;

  @Column({ name: 'asked_at', type: 'timestamptz', default: () => 'now()' })
  askedAt: Date;

  @Column({ name: 'answered_at', type: 'timestamptz', nullable: true })
  answeredAt: Date | null;

  @Column({ name: 'answered_by', type: 'text', nullable: true })
  answeredBy: string | null;

  @Column({ type: 'text', nullable: true })
  channel: ApprovalChannel | null;

  @Column({ type: 'text', nullable: true })
  reason: string | null;

  /** When the profile's timeout runs out (docs/plans.md#approval-timeouts); null: it waits until answered. */
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  /** What happens at `expiresAt`: the gate is denied, or keeps waiting (shown overdue). */
  @Column({ name: 'on_timeout', type: 'text', nullable: true })
  onTimeout: ApprovalTimeoutAction | null;

  /** What an `edit` answer gave instead of the subject's entries or arguments. */
  @Column({ type: 'jsonb', nullable: true })
  edited: unknown;

  /** The traceparent of the turn that asked; null when nothing was traced. The gate's wait is recorded under it. */
  @Column({ name: 'trace_parent', type: 'text', nullable: true })
  traceParent: string | null;

  /** Insertion order: lists page on it. */
  @Column({ name: 'created_seq', type: 'bigint' })
  @Generated('increment')
  createdSeq: string;
}
