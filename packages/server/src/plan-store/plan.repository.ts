import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { entityColumns } from '../database/entity-columns.js';
import type { Page, PageRequest } from '../common/paging.js';
import { readNewestFirstPage } from '../database/keyset-page.js';
import type { PlanView } from '@cleveragents/contract';
import type { StoreScope } from '../database/store-scope.js';
import { usageOf } from '../session/budgets.js';
import type { BudgetUsage, SessionBudget } from '../session/session.entity.js';
import { PlanEntity, type PlanEntry } from './plan.entity.js';
import type { PlanStatus } from './plan.states.js';

/** A plan as `_cleveragents/plan/*` and the tasks that run plans show it: the contract's. */
export type { PlanView };

const PLAN_LIST = 'plan/list';

/** A plan row as the entity maps it. */
type PlanRow = Omit<PlanEntity, 'usage'> & { usage: Partial<BudgetUsage> | null };

function planOf(row: PlanRow): PlanView {
  return {
    planId: row.id,
    namespace: row.namespace,
    owner: row.owner,
    sessionId: row.sessionId,
    goal: row.goal,
    entries: row.entries,
    profile: row.profile,
    budget: row.budget,
    usage: usageOf(row.usage),
    status: row.status,
    revision: row.revision,
    taskId: row.taskId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** A plan to insert. */
export interface NewPlan {
  id: string;
  sessionId: string | null;
  goal: string;
  entries: PlanEntry[];
  profile: string | null;
  budget: SessionBudget | null;
  status: PlanStatus;
  taskId: string | null;
}

/** What a change of a plan replaces besides its status; what is absent stays. */
export interface PlanPatch {
  goal?: string;
  entries?: PlanEntry[];
  profile?: string;
  budget?: SessionBudget;
}

/**
 * The `plans` table (docs/protocol.md §6.5): the only place its SQL lives. Writes that a caller makes in one
 * transaction with its audit entry take that transaction's EntityManager (the embedded database has one
 * connection: a statement outside the running transaction would wait for it forever).
 */
@Injectable()
export class PlanRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The columns of a `plans` row, named as PlanEntity names them: every read yields the entity's shape, and `planOf` maps it once. */
  private get columns(): string {
    return entityColumns(this.dataSource, PlanEntity);
  }

  async insert(manager: EntityManager, scope: StoreScope, plan: NewPlan): Promise<PlanView> {
    const rows: PlanRow[] = await manager.query(
      `INSERT INTO plans (namespace, owner, id, session_id, goal, entries, profile, budget, status, task_id)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8::jsonb, $9, $10) RETURNING ${this.columns}`,
      [
        scope.namespace,
        scope.owner,
        plan.id,
        plan.sessionId,
        plan.goal,
        JSON.stringify(plan.entries),
        plan.profile,
        plan.budget ? JSON.stringify(plan.budget) : null,
        plan.status,
        plan.taskId,
      ],
    );
    return planOf(rows[0]);
  }

  async find(scope: StoreScope, planId: string): Promise<PlanView | undefined> {
    const row = await this.dataSource.manager.findOneBy(PlanEntity, {
      namespace: scope.namespace,
      owner: scope.owner,
      id: planId,
    });
    return row ? planOf(row) : undefined;
  }

  /** The first plan the task was given (the one it runs). */
  async findByTask(scope: StoreScope, taskId: string): Promise<PlanView | undefined> {
    const row = await this.dataSource.manager.findOne(PlanEntity, {
      where: { namespace: scope.namespace, owner: scope.owner, taskId },
      order: { createdSeq: 'ASC' },
    });
    return row ? planOf(row) : undefined;
  }

  /** The scope's plans, newest first, optionally of one status or one session. */
  list(scope: StoreScope, query: PageRequest & { status?: PlanStatus; sessionId?: string }): Promise<Page<PlanView>> {
    return readNewestFirstPage<PlanRow & { created_seq: string }, PlanView>(this.dataSource, {
      list: PLAN_LIST,
      columns: `${this.columns}, created_seq`,
      from: 'plans',
      where: [
        ['namespace = $?', scope.namespace],
        ['owner = $?', scope.owner],
        query.status ? ['status = $?', query.status] : undefined,
        query.sessionId ? ['session_id = $?', query.sessionId] : undefined,
      ],
      page: query,
      toItem: planOf,
    });
  }

  /** The plan, locked until `manager`'s transaction ends. */
  async lock(manager: EntityManager, scope: StoreScope, planId: string): Promise<PlanView | undefined> {
    const rows: PlanRow[] = await manager.query(
      `SELECT ${this.columns} FROM plans WHERE namespace = $1 AND owner = $2 AND id = $3 FOR UPDATE`,
      [scope.namespace, scope.owner, planId],
    );
    return rows[0] ? planOf(rows[0]) : undefined;
  }

  /** Sets the plan's status and what `patch` gives, in `manager`'s transaction: its next revision. */
  async update(
    manager: EntityManager,
    scope: StoreScope,
    planId: string,
    status: PlanStatus,
    patch: PlanPatch,
  ): Promise<PlanView> {
    // An UPDATE's RETURNING comes back from TypeORM as [rows, count]; a CTE's SELECT as rows.
    const updated: PlanRow[] = await manager.query(
      `WITH changed AS (
         UPDATE plans SET status = $4, goal = COALESCE($5, goal), entries = COALESCE($6::jsonb, entries),
           profile = COALESCE($7, profile), budget = COALESCE($8::jsonb, budget),
           revision = revision + 1, updated_at = now()
         WHERE namespace = $1 AND owner = $2 AND id = $3 RETURNING ${this.columns})
       SELECT * FROM changed`,
      [
        scope.namespace,
        scope.owner,
        planId,
        status,
        patch.goal ?? null,
        patch.entries ? JSON.stringify(patch.entries) : null,
        patch.profile ?? null,
        patch.budget ? JSON.stringify(patch.budget) : null,
      ],
    );
    return planOf(updated[0]);
  }

  async delete(manager: EntityManager, scope: StoreScope, planId: string): Promise<void> {
    await manager.query('DELETE FROM plans WHERE namespace = $1 AND owner = $2 AND id = $3', [
      scope.namespace,
      scope.owner,
      planId,
    ]);
  }

  /** Ties an executing plan to `taskId`; undefined when it is not executing or has another task. */
  async claim(scope: StoreScope, planId: string, taskId: string): Promise<PlanView | undefined> {
    const rows: PlanRow[] = await this.dataSource.query(
      `WITH claimed AS (
         UPDATE plans SET task_id = $4, updated_at = now()
         WHERE namespace = $1 AND owner = $2 AND id = $3 AND status = 'executing' AND (task_id IS NULL OR task_id = $4)
         RETURNING ${this.columns})
       SELECT * FROM claimed`,
      [scope.namespace, scope.owner, planId, taskId],
    );
    return rows[0] ? planOf(rows[0]) : undefined;
  }

  /** Replaces the entries of a plan that has not ended; undefined when it has (or is gone). */
  async saveEntries(scope: StoreScope, planId: string, entries: PlanEntry[]): Promise<PlanView | undefined> {
    const rows: PlanRow[] = await this.dataSource.query(
      `WITH changed AS (
         UPDATE plans SET entries = $4::jsonb, revision = revision + 1, updated_at = now()
         WHERE namespace = $1 AND owner = $2 AND id = $3 AND status IN ('draft', 'approved', 'executing', 'paused')
         RETURNING ${this.columns})
       SELECT * FROM changed`,
      [scope.namespace, scope.owner, planId, JSON.stringify(entries)],
    );
    return rows[0] ? planOf(rows[0]) : undefined;
  }

  /** Gives the plan `sessionId` when it has no session. */
  async setSessionIfNone(scope: StoreScope, planId: string, sessionId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE plans SET session_id = COALESCE(session_id, $4) WHERE namespace = $1 AND owner = $2 AND id = $3`,
      [scope.namespace, scope.owner, planId, sessionId],
    );
  }

  /** Gives the plan `taskId` when it has no task. */
  async setTaskIfNone(scope: StoreScope, planId: string, taskId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE plans SET task_id = $4 WHERE namespace = $1 AND owner = $2 AND id = $3 AND task_id IS NULL`,
      [scope.namespace, scope.owner, planId, taskId],
    );
  }

  /** Adds what a turn used to the plan's count. */
  async addUsage(scope: StoreScope, planId: string, delta: BudgetUsage): Promise<void> {
    await this.dataSource.query(
      `UPDATE plans SET usage = jsonb_build_object(
         'tokens', COALESCE((usage->>'tokens')::bigint, 0) + $4,
         'toolCalls', COALESCE((usage->>'toolCalls')::bigint, 0) + $5,
         'wallTimeMs', COALESCE((usage->>'wallTimeMs')::bigint, 0) + $6)
       WHERE namespace = $1 AND owner = $2 AND id = $3`,
      [scope.namespace, scope.owner, planId, delta.tokens, delta.toolCalls, Math.round(delta.wallTimeMs)],
    );
  }
}
