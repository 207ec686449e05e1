import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import type { Acting } from '../common/actor.js';
import { ValidationError, type PlanError } from '../common/domain.errors.js';
import type { Principal } from '../common/principal.js';
import { PLAN_ID_KEY } from '@cleveragents/contract';
import type { PlanExecution } from '@cleveragents/contract';
import { isFinishedState } from '../database/finished-task.cache.js';
import { ownerCallContext } from '../database/store-scope.js';
import { TypeOrmTaskStore } from '../database/typeorm-task.store.js';
import { ActorBackends } from '../execution/actor-backends.js';
import { textPart } from '../execution/agent-events.js';
import { CLIENT_CAPABILITIES_KEY, type ClientCapabilities } from '../execution/orchestrator/protocol.js';
import { noOrchestrator, planFailed, planNotStarted, planSessionNotOpen } from '../plan-store/plan.errors.js';
import { PlanService, type PlanScope, type PlanView } from '../plan-store/plan.service.js';
import { TaskRecovery } from '../replica/task-recovery.js';
import { TurnStops } from '../replica/turn-stops.js';
import { holdersOf, requireBudgetLeft } from '../session/budgets.js';
import { SessionService } from '../session/session.service.js';
import { pendingRequestOf } from '../turn/replies.js';
import { TaskControl } from '../turn/task-control.js';

/** The text of the message a plan's task starts with: its goal and its steps. */
function planText(plan: PlanView): string {
  const steps = plan.entries.map((e, i) => `${i + 1}. [${e.priority}] ${e.content}`);
  return steps.length > 0 ? `${plan.goal}\n\nPlan:\n${steps.join('\n')}` : plan.goal;
}

/**
 * Plans as they run (docs/protocol.md §6.5): `plan/execute` starts a plan's task as a client's SendMessage
 * would, pause, resume and cancel reach the turn wherever it runs. The plan's record is PlanService's.
 */
@Injectable()
export class PlanRuns {
  constructor(
    private readonly plans: PlanService,
    private readonly sessions: SessionService,
    private readonly backends: ActorBackends,
    private readonly tasks: TypeOrmTaskStore,
    private readonly recovery: TaskRecovery,
    private readonly stops: TurnStops,
    private readonly taskControl: TaskControl,
  ) {}

  /**
   * Runs an approved plan as an A2A task in its session (a new one when it has none); GetTask,
   * SubscribeToTask and CancelTask work on it as on any task. -32008 when it cannot run; -32006 when its
   * budget or its session's is used up.
   */
  async execute(
    scope: PlanScope,
    planId: string,
    expectedRevision: number | undefined,
    by: Acting & { principal: Principal },
    capabilities: ClientCapabilities | undefined,
  ): Promise<PlanExecution> {
    const plan = await this.plans.get(scope, planId);
    if (!this.backends.runsOrchestrators) {
      throw noOrchestrator(planId, this.backends.name);
    }
    requireBudgetLeft(holdersOf(undefined, plan));
    if (plan.sessionId !== null) {
      await this.plans.requireOpenSession(scope, plan.sessionId).catch((err: unknown) => {
        throw planSessionNotOpen(
          planId,
          plan.sessionId ?? '',
          err instanceof ValidationError ? err.violations[0]?.description : String(err),
        );
      });
    }
    const contextId = await this.sessions.admit(scope, plan.sessionId ?? undefined);
    await this.plans.transition(scope, planId, 'execute', expectedRevision, by);
    await this.plans.bindSession(scope, planId, contextId);
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
      await this.plans.transition(scope, planId, 'fail', undefined, by).catch(() => undefined);
      throw planNotStarted(planId, err instanceof Error ? err.message : String(err));
    }
    await this.plans.bindTask(scope, planId, task.id);
    return { planId, taskId: task.id, contextId: task.contextId, status: 'executing' };
  }

  /**
   * Pauses an executing plan: a turn of its task stops where it is, here or on the replica running it, and
   * its task waits. Answers once the paused status is stored, so that a GetTask after it shows it anywhere.
   */
  async pause(scope: PlanScope, planId: string, expectedRevision: number | undefined, by: Acting): Promise<PlanView> {
    const paused = await this.plans.transition(scope, planId, 'pause', expectedRevision, by);
    if (paused.taskId) await this.stops.pause(scope, paused.taskId);
    return this.plans.get(scope, planId);
  }

  /**
   * Resumes a paused plan: a task stopped mid-turn goes on from where it stopped; a task waiting for the
   * client's answer keeps waiting for it. -32006 when the plan's budget is used up.
   */
  async resume(scope: PlanScope, planId: string, expectedRevision: number | undefined, by: Acting): Promise<PlanView> {
    const plan = await this.plans.get(scope, planId);
    requireBudgetLeft(holdersOf(undefined, plan));
    if (plan.sessionId !== null) {
      const session = await this.sessions.get(scope, plan.sessionId).catch(() => undefined);
      if (session) await this.sessions.requireBudgetLeft(scope, session);
    }
    const resumed = await this.plans.transition(scope, planId, 'resume', expectedRevision, by);
    if (resumed.taskId) {
      const task = await this.tasks.load(resumed.taskId, ownerCallContext(scope));
      const state = task?.status?.state;
      if (state === undefined || isFinishedState(state)) {
        // The task ended (or is gone) while its plan was paused: the plan broke.
        await this.plans.transition(scope, planId, 'fail', undefined, by);
        throw await this.failedPlan(scope, resumed);
      }
      const stoppedMidTurn = state === TaskState.TASK_STATE_INPUT_REQUIRED && pendingRequestOf(task!) === undefined;
      if (stoppedMidTurn && !(await this.recovery.resumePaused(scope, resumed.taskId))) {
        await this.plans.transition(scope, planId, 'fail', undefined, by);
        throw await this.failedPlan(scope, resumed);
      }
    }
    return resumed;
  }

  /** Cancels a plan; its task, if it has one still going, is canceled as by CancelTask. */
  async cancel(scope: PlanScope, planId: string, expectedRevision: number | undefined, by: Acting): Promise<PlanView> {
    const canceled = await this.plans.transition(scope, planId, 'cancel', expectedRevision, by);
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
    return this.plans.get(scope, planId);
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
}
