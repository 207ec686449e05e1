import { Column, Entity, Generated, Index } from 'typeorm';
import { BudgetedColumns } from '../database/budgeted-columns.js';
import type { PlanStatus } from './plan.states.js';

export {
  PLAN_ENTRY_PRIORITIES,
  PLAN_ENTRY_STATUSES,
  type PlanEntry,
  type PlanEntryPriority,
  type PlanEntryStatus,
} from '../execution/orchestrator/protocol.js';
import type { PlanEntry } from '../execution/orchestrator/protocol.js';

/**
 * A plan (docs/protocol.md §6.5): a goal and its steps, owned like tasks and sessions by one (namespace, owner)
 * scope, optionally inside one of the owner's sessions. Its status moves only as src/plan-store/plan.states.ts
 * allows; `task_id` is the A2A task that runs it, once executed (a later step).
 */
@Entity({ name: 'plans' })
@Index('IDX_plans_scope_recent', ['namespace', 'owner', 'createdSeq'])
@Index('IDX_plans_task', ['namespace', 'owner', 'taskId'])
export class PlanEntity extends BudgetedColumns {
  /** The owner's session the plan belongs to, if any (its contextId). */
  @Column({ name: 'session_id', type: 'text', nullable: true })
  sessionId: string | null;

  @Column({ type: 'text' })
  goal: string;

  @Column({ type: 'jsonb' })
  entries: PlanEntry[];

  /** Registry name of the automation profile; null means the actor's own default. */
  @Column({ type: 'text', nullable: true })
  profile: string | null;

  @Column({ type: 'text', default: 'draft' })
  status: PlanStatus;

  /** The A2A task executing the plan; null until it is executed. */
  @Column({ name: 'task_id', type: 'text', nullable: true })
  taskId: string | null;

  /** Insertion order: lists page on it. */
  @Column({ name: 'created_seq', type: 'bigint' })
  @Generated('increment')
  createdSeq: string;
}
