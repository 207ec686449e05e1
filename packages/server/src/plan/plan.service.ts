import { Injectable } from '@nestjs/common';
import type { StoreScope } from '../database/store-scope.js';
import { DataSource, type EntityManager } from 'typeorm';
import { ulid } from '../common/ulid.js';
import { AuditLog } from '../audit/audit-log.service.js';
import type { Acting } from '../common/actor.js';
import { ResourceNotFoundError, ValidationError } from '../common/domain.errors.js';
import { checkRevision } from '../common/revision.js';
import type { Page, PageRequest } from '../common/paging.js';
import { RegistryService } from '../registry/registry.service.js';
import type { SessionBudget } from '../session/session.entity.js';
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import type { Principal } from '../common/principal.js';
import type { PlanError } from '../common/domain.errors.js';
import { isFinishedState } from '../database/finished-task.cache.js';
import { ownerCallContext } from '../database/store-scope.js';
import { TypeOrmTaskStore } from '../database/typeorm-task.store.js';
import { ActorBackends } from '../execution/actor-backends.js';
import { textPart } from '../execution/agent-events.js';
import { CLIENT_CAPABILITIES_KEY, type ClientCapabilities } from '../execution/orchestrator/protocol.js';
import { holdersOf, requireBudgetLeft } from '../session/budgets.js';
import { pendingRequestOf } from '../turn/replies.js';
import { SessionWorkflow } from '../turn/session.workflow.js';
import { PLAN_ID_KEY } from '@cleveragents/contract';
import { TaskRecovery } from '../replica/task-recovery.js';
import { TaskControl } from '../turn/task-control.js';
import { RemoteTurnControls } from '../replica/remote-turn-controls.js';
import { requireDefinition, SessionService } from '../session/session.service.js';
import type { PlanEntry, PlanEntryStatus } from './store/plan.entity.js';
import type { DeletedPlan, PlanEntryInput, PlanExecution, PlanStatusView } from '@cleveragents/contract';
import {
  noOrchestrator,
  planFailed,
  planNotFound,
  planNotStarted,
  planSessionClosed,
  planSessionNotOpen,
  planSessionUnknown,
} from './plan.errors.js';
import { transition, type PlanOperation, type PlanStatus } from './store/plan.states.js';
import { PlanRepository, type PlanPatch, type PlanView } from './store/plan.repository.js';

export type { PlanView } from './store/plan.repository.js';

/** Whose plans: the same (namespace, owner) scope as tasks and sessions (docs/protocol.md §4). */
export type PlanScope = StoreScope;

/** How long plan/pause waits for its task's paused status to be stored, when its turn stopped here. */
const STORE_WAIT_MS = 5000;
/**
 * …and when another replica was asked to stop it (a notification, then that replica's turn stops and
 * its request stores the status): as long as CancelTask waits for a relayed cancel.
 */
const RELAYED_STORE_WAIT_MS = 15_000;

/** What `plan/execute` answers (the task that runs the plan), `plan/status` and `plan/delete`: the contract's. */
export type { DeletedPlan, PlanEntryInput, PlanExecution, PlanStatusView } from '@cleveragents/contract';

/** The text of the message a plan's task starts with: its goal and its steps. */
function planText(plan: PlanView): string {
  const steps = plan.entries.map((e, i) => `${i + 1}. [${e.priority}] ${e.content}`);
  return steps.length > 0 ? `${plan.goal}\n\nPlan:\n${steps.join('\n')}` : plan.goal;
}

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
 * Plans (docs/protocol.md §6.5), without their execution: a goal and its entries, a profile and a budget, made
 * as a draft, edited while draft or paused, approved, paused, resumed, canceled, deleted. Every change
 * bumps the revision and is audited in its own transaction; the states allowed are those of
 * plan.states.ts and nowhere else.
 */
@Injectable()
export class PlanService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly plans: PlanRepository,
    private readonly registry: RegistryService,
    private readonly sessions: SessionService,
    private readonly audit: AuditLog,
    private readonly workflow: SessionWorkflow,
    private readonly recovery: TaskRecovery,
    private readonly backends: ActorBackends,
    private readonly tasks: TypeOrmTaskStore,
    private readonly turnControls: RemoteTurnControls,
    private readonly taskControl: TaskControl,
  ) {}

  /**
   * Runs an approved plan as an A2A task (docs/protocol.md §6.5) in its session (a new one when it has none):
   * the task is made and started as for a client's SendMessage, and GetTask, SubscribeToTask and
   * CancelTask work on it as on any task. -32008 when it cannot run; -32006 when its budget or its
   * session's is used up.
   */
  async execute(
    scope: PlanScope,
    planId: string,
    expectedRevision: number | undefined,
    by: Acting & { principal: Principal },
    capabilities: ClientCapabilities | undefined,
  ): Promise<PlanExecution> {
    const plan = await this.get(scope, planId);
    if (!this.backends.runsOrchestrators) {
      throw noOrchestrator(planId, this.backends.name);
    }
    requireBudgetLeft(holdersOf(undefined, plan));
    if (plan.sessionId !== null) {
      await this.requireOpenSession(scope, plan.sessionId).catch((err: unknown) => {
        throw planSessionNotOpen(
          planId,
          plan.sessionId ?? '',
          err instanceof ValidationError ? err.violations[0]?.description : String(err),
        );
      });
    }
    const contextId = await this.sessions.admit(scope, plan.sessionId ?? undefined);
    await this.change(scope, planId, 'execute', expectedRevision, by, {});
    await this.plans.setSessionIfNone(scope, planId, contextId);
    const metadata: Record<string, unknown> = { [PLAN_ID_KEY]: planId };
    if (capabilities) metadata[CLIENT_CAPABILITIES_KEY] = capabilities;
    const message: Message = {
      messageId: randomUUID(),
      contextId,
      taskId: '',
      role: Role.ROLE_USER,
      parts: [textPart(planText(plan))],
      metadata,
      extensions: [],
      referenceTaskIds: [],
    };
    let task: Task;
    try {
      task = await this.taskControl.start(message, ownerCallContext(scope, by.principal));
    } catch (err) {
      await this.change(scope, planId, 'fail', undefined, by, {}).catch(() => undefined);
      throw planNotStarted(planId, err instanceof Error ? err.message : String(err));
    }
    await this.plans.setTaskIfNone(scope, planId, task.id);
    return { planId, taskId: task.id, contextId: task.contextId, status: 'executing' };
  }

  /**
   * Pauses an executing plan: a turn of its task stops where it is — here, or on the replica running it,
   * asked through the database (docs/protocol.md §10) — and its task waits. Answers once the task's paused status
   * is stored, so that a GetTask after plan/pause, on any replica, shows the task paused.
   */
  async pause(scope: PlanScope, planId: string, expectedRevision: number | undefined, by: Acting): Promise<PlanView> {
    const paused = await this.change(scope, planId, 'pause', expectedRevision, by, {});
    if (paused.taskId) {
      // The paused status is on the task's bus; the request that started the task (or took it up
      // again), on the replica running it, stores it.
      if (await this.workflow.pauseHere(scope, paused.taskId)) {
        await this.storedState(scope, paused.taskId, TaskState.TASK_STATE_INPUT_REQUIRED, STORE_WAIT_MS);
      } else if (await this.turnControls.requestElsewhere(scope, paused.taskId, 'pause')) {
        await this.storedState(scope, paused.taskId, TaskState.TASK_STATE_INPUT_REQUIRED, RELAYED_STORE_WAIT_MS);
      }
      // Otherwise no turn of it runs: it waits for its client already, or has ended.
    }
    return this.get(scope, planId);
  }

  /**
   * Resumes a paused plan: a task stopped mid-turn goes on from where it stopped; a task waiting for the
   * client's answer keeps waiting for it. -32006 when the plan's budget is used up.
   */
  async resume(scope: PlanScope, planId: string, expectedRevision: number | undefined, by: Acting): Promise<PlanView> {
    const plan = await this.get(scope, planId);
    requireBudgetLeft(holdersOf(undefined, plan));
    if (plan.sessionId !== null) {
      const session = await this.sessions.get(scope, plan.sessionId).catch(() => undefined);
      if (session) await this.sessions.requireBudgetLeft(scope, session);
    }
    const resumed = await this.change(scope, planId, 'resume', expectedRevision, by, {});
    if (resumed.taskId) {
      const task = await this.tasks.load(resumed.taskId, ownerCallContext(scope));
      const state = task?.status?.state;
      if (state === undefined || isFinishedState(state)) {
        // The task ended (or is gone) while its plan was paused: the plan broke.
        await this.change(scope, planId, 'fail', undefined, by, {});
        throw await this.failedPlan(scope, resumed);
      }
      const stoppedMidTurn = state === TaskState.TASK_STATE_INPUT_REQUIRED && pendingRequestOf(task!) === undefined;
      if (stoppedMidTurn && !(await this.recovery.resumePaused(scope, resumed.taskId))) {
        await this.change(scope, planId, 'fail', undefined, by, {});
        throw await this.failedPlan(scope, resumed);
      }
    }
    return resumed;
  }

  /** Cancels a plan; its task, if it has one still going, is canceled as by CancelTask. */
  async cancel(scope: PlanScope, planId: string, expectedRevision: number | undefined, by: Acting): Promise<PlanView> {
    const canceled = await this.change(scope, planId, 'cancel', expectedRevision, by, {});
    if (canceled.taskId) {
      const context = ownerCallContext(scope);
      const task = await this.tasks.load(canceled.taskId, context);
      const state = task?.status?.state;
      if (state !== undefined && !isFinishedState(state)) {
        await this.taskControl.cancel(canceled.taskId, context).catch((err: unknown) => {
          // Finished in between: the plan is canceled all the same.
          if (!(err instanceof Error && /not cancelable|cannot be canceled/i.test(err.message))) throw err;
        });
      }
    }
    return this.get(scope, planId);
  }

  /** Waits (`waitMs` at most) until the stored task is in `state`, or has ended. */
  private async storedState(scope: PlanScope, taskId: string, state: TaskState, waitMs: number): Promise<void> {
    const context = ownerCallContext(scope);
    const deadline = Date.now() + waitMs;
    while (Date.now() < deadline) {
      const now = (await this.tasks.load(taskId, context))?.status?.state;
      if (now === undefined || now === state || isFinishedState(now)) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** -32008 for a plan that broke while running, with the reason its task gave. */
  private async failedPlan(scope: PlanScope, plan: PlanView): Promise<PlanError> {
    let reason = '';
    if (plan.taskId) {
      const task = await this.tasks.load(plan.taskId, ownerCallContext(scope)).catch(() => undefined);
      const part = task?.status?.message?.parts.find((p) => p.content?.$case === 'text');
      if (part?.content?.$case === 'text') reason = `: ${part.content.value}`;
    }
    return planFailed(plan.planId, plan.taskId, reason);
  }

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

  /** `approve`: moves the plan as plan.states.ts allows. */
  transition(
    scope: PlanScope,
    planId: string,
    operation: 'approve',
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

  /** `sessionId` must name an open session of the caller: else -32602 on `sessionId`. */
  private async requireOpenSession(scope: PlanScope, sessionId: string): Promise<void> {
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
