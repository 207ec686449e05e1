import { Column } from 'typeorm';
import type { Budget, BudgetUsage } from '@cleveragents/contract';
import { OwnerScopedColumns } from './owner-scoped-columns.js';

/**
 * What sessions and plans share after their key: a budget and what their work used, a revision, and the
 * database's `now()` as created_at and updated_at (plain columns: no TypeORM Create/UpdateDateColumn).
 */
export abstract class BudgetedColumns extends OwnerScopedColumns {
  @Column({ type: 'jsonb', nullable: true })
  budget: Budget | null;

  /** What its work used; null until that first ran. */
  @Column({ type: 'jsonb', nullable: true })
  usage: BudgetUsage | null;

  @Column({ type: 'integer', default: 1 })
  revision: number;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}
