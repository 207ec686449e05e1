import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.service.js';
import type { Acting } from '../common/actor.js';
import { ResourceNotFoundError } from '../common/domain.errors.js';
import type { Page, PageRequest } from '../common/paging.js';
import { checkRevision } from '../common/revision.js';
import { ulid } from '../common/ulid.js';
import type { DeletedPlan, PlanEntryInput, PlanStatusView } from '@cleveragents/contract';
import type { StoreScope } from '../database/store-scope.js';
import { RegistryService } from '../registry/registry.service.js';
import type { SessionBudget } from '../session/session.entity.js';
import { requireDefinition, SessionService } from '../session/session.service.js';
import type { PlanEntry, PlanEntryStatus } from './plan.entity.js';
import { planNotFound, planSessionClosed, planSessionUnknown } from './plan.errors.js';
import { PlanRepository, type PlanPatch, type PlanView } from './plan.repository.js';
import { transition, type PlanOperation, type PlanStatus } from './plan.states.js';

export type { PlanView } from './plan.repository.js';

/** Whose plans: the same (namespace, owner) scope as tasks and sessions (docs/protocol.md §4). */
export type PlanScope = StoreScope;

/** What `plan/execute` answers (the task that runs the plan), `plan/status` and `plan/delete`: the contract's. */
export type { DeletedPlan, PlanEntryInput, PlanExecution, PlanStatusView } from '@cleveragents/contract';

export interface CreatePlanInput {
  sessionId?: string;
  goal: string;
  entries?: PlanEntryInput[];
  profile?: string;
  budget?: SessionBudget;
}

/** What `plan/update` replaces; what is absent stays. */
export interface UpdatePlanInput {
  goal?: string;
  entries?: PlanEntryInput[];
  profile?: string;
  budget?: SessionBudget;
}

function entriesOf(entries: PlanEntryInput[]): PlanEntry[] {
  return entries.map((e) => ({ content: e.content, priority: e.priority ?? 'medium', status: e.status ?? 'pending' }));
}

/**
 * Plans as records (docs/protocol.md §6.5): drafted, edited, approved, moved, deleted; each change revised and
 * audited in its own transaction, in the states plan.states.ts allows. Running them is PlanRuns' (src/plan/).
 */
@Injectable()
export class PlanService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly plans: PlanRepository,
    private readonly registry: RegistryService,
    private readonly sessions: SessionService,
    private readonly audit: AuditLog,
  ) {}

  async create(scope: PlanScope, input: CreatePlanInput, by: Acting): Promise<PlanView> {
    if (input.sessionId !== undefined) await this.requireOpenSession(scope, input.sessionId);
    if (input.profile !== undefined) {
      await requireDefinition(this.registry, scope.namespace, 'profile', input.profile, 'profile');
    }
    return this.dataSource.transaction(async (manager) => {
      const plan = await this.plans.insert(manager, scope, {
        id: ulid(),
        sessionId: input.sessionId ?? null,
        goal: input.goal,
        entries: entriesOf(input.entries ?? []),
        profile: input.profile ?? null,
        budget: input.budget ?? null,
        status: 'draft',
        taskId: null,
      });
      await this.record(manager, scope, by, 'plan.create', plan, { status: plan.status });
      return plan;
    });
  }

  async get(scope: PlanScope, planId: string): Promise<PlanView> {
    const plan = await this.plans.find(scope, planId);
    if (!plan) throw planNotFound(scope, planId);
    return plan;
  }

  async status(scope: PlanScope, planId: string): Promise<PlanStatusView> {
    const plan = await this.get(scope, planId);
    const count = (status: PlanEntryStatus) => plan.entries.filter((e) => e.status === status).length;
    return {
      planId: plan.planId,
      status: plan.status,
      revision: plan.revision,
      entries: {
        total: plan.entries.length,
        pending: count('pending'),
        inProgress: count('in_progress'),
        completed: count('completed'),
        failed: count('failed'),
        skipped: count('skipped'),
      },
      taskId: plan.taskId,
    };
  }

  async list(
    scope: PlanScope,
    query: PageRequest & { status?: PlanStatus; sessionId?: string },
  ): Promise<Page<PlanView>> {
    return this.plans.list(scope, query);
  }

  /** Replaces what `input` gives, while the plan is draft or paused. */
  async update(
    scope: PlanScope,
    planId: string,
    input: UpdatePlanInput,
    expectedRevision: number | undefined,
    by: Acting,
  ): Promise<PlanView> {
    if (input.profile !== undefined) {
      await requireDefinition(this.registry, scope.namespace, 'profile', input.profile, 'profile');
    }
    return this.change(scope, planId, 'update', expectedRevision, by, {
      goal: input.goal,
      entries: input.entries ? entriesOf(input.entries) : undefined,
      profile: input.profile,
      budget: input.budget,
    });
  }

  /** Moves the plan as plan.states.ts allows (`approve`; `execute`, `pause`, `resume`, `cancel`, `fail` for PlanRuns). */
  transition(
    scope: PlanScope,
    planId: string,
    operation: Exclude<PlanOperation, 'update' | 'delete'>,
    expectedRevision: number | undefined,
    by: Acting,
  ): Promise<PlanView> {
    return this.change(scope, planId, operation, expectedRevision, by, {});
  }

  /** Deletes a plan that is not executing or paused (cancel it first). */
  async delete(
    scope: PlanScope,
    planId: string,
    expectedRevision: number | undefined,
    by: Acting,
  ): Promise<DeletedPlan> {
    return this.dataSource.transaction(async (manager) => {
      const plan = await this.lock(manager, scope, planId);
      checkRevision('Plan', planId, plan.revision, expectedRevision);
      transition(planId, plan.status, 'delete');
      await this.plans.delete(manager, scope, planId);
      await this.record(manager, scope, by, 'plan.delete', plan, { status: plan.status });
      return { planId, deleted: true as const };
    });
  }

  private change(
    scope: PlanScope,
    planId: string,
    operation: PlanOperation,
    expectedRevision: number | undefined,
    by: Acting,
    patch: PlanPatch,
  ): Promise<PlanView> {
    return this.dataSource.transaction(async (manager) => {
      const current = await this.lock(manager, scope, planId);
      checkRevision('Plan', planId, current.revision, expectedRevision);
      const next = transition(planId, current.status, operation);
      const plan = await this.plans.update(manager, scope, planId, next, patch);
      const details: Record<string, unknown> =
        operation === 'update'
          ? { changed: Object.keys(patch).filter((k) => patch[k as keyof typeof patch] !== undefined) }
          : { from: current.status, to: next };
      await this.record(manager, scope, by, `plan.${operation}`, plan, details);
      return plan;
    });
  }

  private async lock(manager: EntityManager, scope: PlanScope, planId: string): Promise<PlanView> {
    const plan = await this.plans.lock(manager, scope, planId);
    if (!plan) throw planNotFound(scope, planId);
    return plan;
  }

  private record(
    manager: EntityManager,
    scope: PlanScope,
    by: Acting,
    action: string,
    plan: PlanView,
    details: Record<string, unknown>,
  ): Promise<void> {
    return this.audit.record(manager, {
      namespace: scope.namespace,
      actor: by.actor.subject,
      action: action as `plan.${string}`,
      target: `plan/${plan.planId}`,
      details: { planId: plan.planId, owner: scope.owner, revision: plan.revision, ...details },
      requestId: by.requestId,
    });
  }

  /** The session a plan runs in, once it has one. */
  bindSession(scope: PlanScope, planId: string, contextId: string): Promise<void> {
    return this.plans.setSessionIfNone(scope, planId, contextId);
  }

  /** The task a plan runs as, once it has one. */
  bindTask(scope: PlanScope, planId: string, taskId: string): Promise<void> {
    return this.plans.setTaskIfNone(scope, planId, taskId);
  }

  /** `sessionId` must name an open session of the caller: else -32602 on `sessionId`. */
  async requireOpenSession(scope: PlanScope, sessionId: string): Promise<void> {
    let status: string;
    try {
      status = (await this.sessions.get(scope, sessionId)).status;
    } catch (err) {
      if (err instanceof ResourceNotFoundError && err.reason === 'SESSION_NOT_FOUND') {
        throw planSessionUnknown(scope.namespace, sessionId);
      }
      throw err;
    }
    if (status !== 'open') {
      throw planSessionClosed(sessionId);
    }
  }
}
