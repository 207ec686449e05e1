import { Column, Entity, Generated, Index } from 'typeorm';
import type { Budget, BudgetUsage } from '@cleveragents/contract';
import type { SessionStatus } from '@cleveragents/contract';
import { BudgetedColumns } from '../database/budgeted-columns.js';

export { SESSION_STATUSES, type SessionStatus } from '@cleveragents/contract';
/** What a session's or plan's work has used so far, counted from what actually ran: the contract's. */
export type { BudgetUsage };

/** Limits a session's work may not cross (docs/protocol.md §5); counted and enforced by the plan and budget work. */
export type SessionBudget = Budget;

export const NO_USAGE: BudgetUsage = { tokens: 0, toolCalls: 0, wallTimeMs: 0 };

/**
 * A session: an A2A context (`id` = contextId) of one owner in one namespace (docs/protocol.md §6.4), the
 * actor that answers in it and its automation profile. Scoped like tasks: the same id in another
 * (namespace, owner) scope is another session, never visible here.
 */
@Entity({ name: 'sessions' })
@Index('IDX_sessions_scope_recent', ['namespace', 'owner', 'createdSeq'])
export class SessionEntity extends BudgetedColumns {
  /** Registry name of the session's actor (kind `actor`), resolved at each turn. */
  @Column({ type: 'text' })
  actor: string;

  /** Registry name of the automation profile; null means the actor's own default. */
  @Column({ type: 'text', nullable: true })
  profile: string | null;

  @Column({ type: 'text', nullable: true })
  title: string | null;

  @Column({ type: 'text', default: 'open' })
  status: SessionStatus;

  /** How the session began: `session/create`, or a message that named no (or a new) contextId. */
  @Column({ type: 'text', default: 'create' })
  origin: 'create' | 'message';

  /** Insertion order: lists page on it (ids chosen by clients do not sort by time). */
  @Column({ name: 'created_seq', type: 'bigint' })
  @Generated('increment')
  createdSeq: string;

  @Column({ name: 'closed_at', type: 'timestamptz', nullable: true })
  closedAt: Date | null;
}
