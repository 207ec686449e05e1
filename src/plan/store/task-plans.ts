import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditLog } from '../../audit/audit-log.service.js';
import { BusinessRuleViolation } from '../../common/domain.errors.js';
import type { PlanEntry } from '../../execution/orchestrator/protocol.js';
import { transition, type PlanOperation, type PlanStatus } from './plan.states.js';
import type { BudgetUsage } from '../../session/session.entity.js';
import { PLAN_COLUMNS, planOfRow, type PlanRow, type PlanView } from './plan.rows.js';
import type { SessionScope } from '../../session/session.service.js';

/** A plan as a task running it sees it: the plan's own view. */
export type TaskPlan = PlanView;

/** Who the audit log names for a change the orchestrator or the task's client made. */
export interface PlanChangeBy {
  /** `task:<taskId>` for the orchestrator; the client's user for an approval. */
  subject: string;
  requestId?: string;
}

/**
 * The plans tasks run (SPEC.md §5, §6.5), as the session workflow reads and moves them: the plan a task
 * executes (`plan/execute`) or the one its orchestrator wrote, its entries as the orchestrator updates
 * them, its status as the task moves, and what it used. Every status change goes through the one
 * transition table (src/plan/store/plan.states.ts) and is audited.
 */
@Injectable()
export class TaskPlans {
  constructor(
    private readonly dataSource: DataSource,
    private readonly audit: AuditLog,
  ) {}

  async forTask(scope: SessionScope, taskId: string): Promise<TaskPlan | undefined> {
    const rows: PlanRow[] = await this.dataSource.query(
      `SELECT ${PLAN_COLUMNS} FROM plans WHERE namespace = $1 AND owner = $2 AND task_id = $3 ORDER BY created_seq LIMIT 1`,
      [scope.namespace, scope.owner, taskId],
    );
    return rows[0] ? planOfRow(rows[0]) : undefined;
  }

  async get(scope: SessionScope, planId: string): Promise<TaskPlan | undefined> {
    const rows: PlanRow[] = await this.dataSource.query(
      `SELECT ${PLAN_COLUMNS} FROM plans WHERE namespace = $1 AND owner = $2 AND id = $3`,
      [scope.namespace, scope.owner, planId],
    );
    return rows[0] ? planOfRow(rows[0]) : undefined;
  }

  /** Ties an executing plan to the task `plan/execute` started for it; undefined if it is not that plan's task. */
  async claim(scope: SessionScope, planId: string, taskId: string): Promise<TaskPlan | undefined> {
    const rows: PlanRow[] = await this.dataSource.query(
      `WITH claimed AS (
         UPDATE plans SET task_id = $4, updated_at = now()
         WHERE namespace = $1 AND owner = $2 AND id = $3 AND status = 'executing' AND (task_id IS NULL OR task_id = $4)
         RETURNING ${PLAN_COLUMNS})
       SELECT * FROM claimed`,
      [scope.namespace, scope.owner, planId, taskId],
    );
    return rows[0] ? planOfRow(rows[0]) : undefined;
  }

  /** The plan an orchestrator wrote in a task: `draft` when a gate will ask for it, else `executing`. */
  async create(
    scope: SessionScope,
    plan: { planId: string; sessionId: string; taskId: string; goal: string; entries: PlanEntry[]; status: PlanStatus },
    by: PlanChangeBy,
  ): Promise<TaskPlan> {
    return this.dataSource.transaction(async (manager) => {
      const rows: PlanRow[] = await manager.query(
        `INSERT INTO plans (namespace, owner, id, session_id, goal, entries, status, task_id)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8) RETURNING ${PLAN_COLUMNS}`,
        [
          scope.namespace,
          scope.owner,
          plan.planId,
          plan.sessionId,
          plan.goal,
          JSON.stringify(plan.entries),
          plan.status,
          plan.taskId,
        ],
      );
      const created = planOfRow(rows[0]);
      await this.record(manager, scope, by, 'plan.create', created, { taskId: plan.taskId, status: plan.status });
      return created;
    });
  }

  /** The orchestrator's new entry list (a plan that has ended keeps its entries). */
  async saveEntries(scope: SessionScope, planId: string, entries: PlanEntry[]): Promise<TaskPlan | undefined> {
    const rows: PlanRow[] = await this.dataSource.query(
      `WITH changed AS (
         UPDATE plans SET entries = $4::jsonb, revision = revision + 1, updated_at = now()
         WHERE namespace = $1 AND owner = $2 AND id = $3 AND status IN ('draft', 'approved', 'executing', 'paused')
         RETURNING ${PLAN_COLUMNS})
       SELECT * FROM changed`,
      [scope.namespace, scope.owner, planId, JSON.stringify(entries)],
    );
    return rows[0] ? planOfRow(rows[0]) : undefined;
  }

  /**
   * Moves the plan by `operations` in order (e.g. approve then execute), in one transaction; an
   * operation its state does not allow throws INVALID_TRANSITION and nothing changes. `entries`
   * replaces the entries (an edited plan).
   */
  async move(
    scope: SessionScope,
    planId: string,
    operations: PlanOperation[],
    by: PlanChangeBy,
    entries?: PlanEntry[],
  ): Promise<TaskPlan | undefined> {
    return this.dataSource.transaction(async (manager) => {
      const rows: PlanRow[] = await manager.query(
        `SELECT ${PLAN_COLUMNS} FROM plans WHERE namespace = $1 AND owner = $2 AND id = $3 FOR UPDATE`,
        [scope.namespace, scope.owner, planId],
      );
      if (!rows[0]) return undefined;
      const from = rows[0].status;
      let status = from;
      for (const operation of operations) status = transition(planId, status, operation);
      const updated: PlanRow[] = await manager.query(
        `WITH changed AS (
           UPDATE plans SET status = $4, entries = COALESCE($5::jsonb, entries), revision = revision + 1, updated_at = now()
           WHERE namespace = $1 AND owner = $2 AND id = $3 RETURNING ${PLAN_COLUMNS})
         SELECT * FROM changed`,
        [scope.namespace, scope.owner, planId, status, entries ? JSON.stringify(entries) : null],
      );
      const plan = planOfRow(updated[0]);
      const action = `plan.${operations.at(-1) ?? 'update'}`;
      await this.record(manager, scope, by, action, plan, { from, to: status, edited: entries !== undefined });
      return plan;
    });
  }

  /**
   * `move`, for the moves a task makes on its own (its plan follows it): a plan whose state does not allow
   * them (the user paused or canceled it meanwhile) stays as it is; undefined then, or when it is gone.
   */
  async moveIfAllowed(
    scope: SessionScope,
    planId: string,
    operations: PlanOperation[],
    by: PlanChangeBy,
    entries?: PlanEntry[],
  ): Promise<TaskPlan | undefined> {
    try {
      return await this.move(scope, planId, operations, by, entries);
    } catch (err) {
      if (err instanceof BusinessRuleViolation) return undefined;
      throw err;
    }
  }

  /** Adds what a turn used to the plan's count. */
  async addUsage(scope: SessionScope, planId: string, delta: BudgetUsage): Promise<void> {
    await this.dataSource.query(
      `UPDATE plans SET usage = jsonb_build_object(
         'tokens', COALESCE((usage->>'tokens')::bigint, 0) + $4,
         'toolCalls', COALESCE((usage->>'toolCalls')::bigint, 0) + $5,
         'wallTimeMs', COALESCE((usage->>'wallTimeMs')::bigint, 0) + $6)
       WHERE namespace = $1 AND owner = $2 AND id = $3`,
      [scope.namespace, scope.owner, planId, delta.tokens, delta.toolCalls, Math.round(delta.wallTimeMs)],
    );
  }

  private record(
    manager: EntityManager,
    scope: SessionScope,
    by: PlanChangeBy,
    action: string,
    plan: TaskPlan,
    details: Record<string, unknown>,
  ): Promise<void> {
    return this.audit.record(manager, {
      namespace: scope.namespace,
      actor: by.subject,
      action: action as `plan.${string}`,
      target: `plan/${plan.planId}`,
      details: { planId: plan.planId, owner: scope.owner, revision: plan.revision, ...details },
      requestId: by.requestId,
    });
  }
}
