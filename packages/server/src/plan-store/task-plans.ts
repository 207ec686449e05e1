import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.service.js';
import { BusinessRuleViolation } from '../common/domain.errors.js';
import type { PlanEntry } from '../execution/orchestrator/protocol.js';
import { transition, type PlanOperation, type PlanStatus } from './plan.states.js';
import type { BudgetUsage } from '../session/session.entity.js';
import { PlanRepository, type PlanView } from './plan.repository.js';
import type { SessionScope } from '../session/session.service.js';

/** A plan as a task running it sees it: the plan's own view. */
export type TaskPlan = PlanView;

/** Who the audit log names for a change the orchestrator or the task's client made. */
export interface PlanChangeBy {
  /** `task:<taskId>` for the orchestrator; the client's user for an approval. */
  subject: string;
  requestId?: string;
  /** The person's reason for a rejection, as they gave it: on record with the decision. */
  reason?: string;
}

/**
 * The plans tasks run (docs/protocol.md §5, §6.5), as the session workflow reads and moves them: the plan a task
 * executes (`plan/execute`) or the one its orchestrator wrote, its entries as the orchestrator updates
 * them, its status as the task moves, and what it used. Every status change goes through the one
 * transition table (src/plan-store/plan.states.ts) and is audited.
 */
@Injectable()
export class TaskPlans {
  constructor(
    private readonly dataSource: DataSource,
    private readonly plans: PlanRepository,
    private readonly audit: AuditLog,
  ) {}

  /** The plan the task runs (or its orchestrator wrote), if any. */
  forTask(scope: SessionScope, taskId: string): Promise<TaskPlan | undefined> {
    return this.plans.findByTask(scope, taskId);
  }

  /** The plan, or undefined when it is gone. */
  get(scope: SessionScope, planId: string): Promise<TaskPlan | undefined> {
    return this.plans.find(scope, planId);
  }

  /** Ties an executing plan to the task `plan/execute` started for it; undefined if it is not that plan's task. */
  claim(scope: SessionScope, planId: string, taskId: string): Promise<TaskPlan | undefined> {
    return this.plans.claim(scope, planId, taskId);
  }

  /** The plan an orchestrator wrote in a task: `draft` when a gate will ask for it, else `executing`. */
  async create(
    scope: SessionScope,
    plan: { planId: string; sessionId: string; taskId: string; goal: string; entries: PlanEntry[]; status: PlanStatus },
    by: PlanChangeBy,
  ): Promise<TaskPlan> {
    return this.dataSource.transaction(async (manager) => {
      const created = await this.plans.insert(manager, scope, {
        id: plan.planId,
        sessionId: plan.sessionId,
        goal: plan.goal,
        entries: plan.entries,
        profile: null,
        budget: null,
        status: plan.status,
        taskId: plan.taskId,
      });
      await this.record(manager, scope, by, 'plan.create', created, { taskId: plan.taskId, status: plan.status });
      return created;
    });
  }

  /** The orchestrator's new entry list (a plan that has ended keeps its entries). */
  saveEntries(scope: SessionScope, planId: string, entries: PlanEntry[]): Promise<TaskPlan | undefined> {
    return this.plans.saveEntries(scope, planId, entries);
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
      const locked = await this.plans.lock(manager, scope, planId);
      if (!locked) return undefined;
      const from = locked.status;
      let status = from;
      for (const operation of operations) status = transition(planId, status, operation);
      const plan = await this.plans.update(manager, scope, planId, status, { entries });
      const action = `plan.${operations.at(-1) ?? 'update'}`;
      await this.record(manager, scope, by, action, plan, {
        from,
        to: status,
        edited: entries !== undefined,
        ...(by.reason === undefined ? {} : { reason: by.reason }),
      });
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
    await this.plans.addUsage(scope, planId, delta);
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
