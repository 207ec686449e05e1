import type { Logger } from '@nestjs/common';
import type { Message, Task } from '@a2a-js/sdk';
import { ulid } from '../common/ulid.js';
import { dataPart } from '../execution/agent-events.js';
import type { TurnResult } from '../execution/actor-turn.js';
import {
  APPROVAL_REQUEST_TYPE,
  PLAN_DATA_TYPE,
  type OrchestratorSetup,
  type PlanEntry,
} from '../execution/orchestrator/protocol.js';
import type { PlanOperation } from '../plan-store/plan.states.js';
import { TaskPlans, type TaskPlan } from '../plan-store/task-plans.js';
import { NO_USAGE } from '../session/session.entity.js';
import type { SessionScope } from '../session/session.service.js';
import { approvalResponseOf, editedEntries, pendingRequestOf } from './replies.js';
import { turnInputOf } from './turn-publisher.js';

/** How much of a message's text becomes the goal of a plan its orchestrator writes. */
const MAX_GOAL_LENGTH = 500;

/** A plan as the `cleveragents/plan` data part shows it. */
export function planView(plan: TaskPlan): Record<string, unknown> {
  return {
    planId: plan.planId,
    goal: plan.goal,
    status: plan.status,
    revision: plan.revision,
    entries: plan.entries,
  };
}

export function planDataPart(plan: Record<string, unknown>) {
  return dataPart({ type: PLAN_DATA_TYPE, plan });
}

/**
 * The plan of one turn, as the orchestrator writes it: made (a ULID, at once, so the event that shows it
 * carries its id) when the orchestrator first writes one, its entries saved as they change, its status
 * moved with the task when the turn rests. Writes are queued in order; `flush` waits for them.
 */
export class PlanTracker {
  private plan: TaskPlan | undefined;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly plans: TaskPlans,
    private readonly scope: SessionScope,
    private readonly taskId: string,
    private readonly contextId: string,
    private readonly message: Message,
    initial: TaskPlan | undefined,
    /** The gate the turn runs under: a plan written under `autonomous` executes at once. */
    private readonly gate: OrchestratorSetup['policy']['gate'] | undefined,
    private readonly logger: Logger,
  ) {
    this.plan = initial;
  }

  get planId(): string | undefined {
    return this.plan?.planId;
  }

  /** The orchestrator wrote `entries`: the plan object its event carries. */
  view(entries: PlanEntry[]): Record<string, unknown> {
    if (!this.plan) {
      const goal = turnInputOf(this.message).text.slice(0, MAX_GOAL_LENGTH) || "The task's plan";
      const status = this.gate === 'autonomous' ? 'executing' : 'draft';
      const now = new Date().toISOString();
      const created: TaskPlan = {
        planId: ulid(),
        namespace: this.scope.namespace,
        owner: this.scope.owner,
        sessionId: this.contextId,
        goal,
        entries,
        profile: null,
        budget: null,
        usage: { ...NO_USAGE },
        status,
        revision: 1,
        taskId: this.taskId,
        createdAt: now,
        updatedAt: now,
      };
      this.plan = created;
      this.queue(() =>
        this.plans.create(
          this.scope,
          { planId: created.planId, sessionId: this.contextId, taskId: this.taskId, goal, entries, status },
          { subject: `task:${this.taskId}` },
        ),
      );
    } else if (JSON.stringify(entries) !== JSON.stringify(this.plan.entries)) {
      const planId = this.plan.planId;
      this.plan = { ...this.plan, entries, revision: this.plan.revision + 1 };
      this.queue(() => this.plans.saveEntries(this.scope, planId, entries));
    }
    return planView(this.plan);
  }

  flush(): Promise<unknown> {
    return this.writes;
  }

  /** Moves the plan with the task's new state; the plan as it then stands (undefined: no plan). */
  async settle(state: TurnResult['state']): Promise<Record<string, unknown> | undefined> {
    await this.flush();
    if (!this.plan) return undefined;
    const operations: Partial<Record<TurnResult['state'], PlanOperation[]>> = {
      completed: ['complete'],
      failed: ['fail'],
      canceled: ['cancel'],
    };
    const wanted = operations[state];
    // Else a task that ends otherwise than completed takes its plan with it (a draft that never ran).
    const ended = state === 'canceled' || state === 'failed' || state === 'rejected';
    const moves: PlanOperation[] | undefined =
      wanted && this.plan.status !== 'draft' ? wanted : ended ? ['cancel'] : undefined;
    const by = { subject: `task:${this.taskId}` };
    const moved = moves ? await this.plans.moveIfAllowed(this.scope, this.plan.planId, moves, by) : undefined;
    // Not moved by this task: the plan as the user may have left it meanwhile (paused, canceled).
    this.plan = moved ?? (await this.plans.get(this.scope, this.plan.planId)) ?? this.plan;
    return planView(this.plan);
  }

  private queue(write: () => Promise<unknown>): void {
    this.writes = this.writes
      .then(write)
      .catch((err: unknown) =>
        this.logger.warn({ msg: 'could not store a plan change', taskId: this.taskId, error: String(err) }),
      );
  }
}

/** The task moves its plan (when the plan's state allows it); the plan as it then stands. */
export async function moveTaskPlan(
  plans: TaskPlans,
  scope: SessionScope,
  plan: TaskPlan,
  operations: PlanOperation[],
  taskId: string,
): Promise<TaskPlan> {
  return (await plans.moveIfAllowed(scope, plan.planId, operations, { subject: `task:${taskId}` })) ?? plan;
}

/**
 * An answer to a plan's approval gate moves the plan before the turn goes on: approved (and then
 * executing), with the edited entries for `edit`, or canceled for `reject`.
 */
export async function settleApproval(
  plans: TaskPlans,
  scope: SessionScope,
  task: Task,
  message: Message,
): Promise<void> {
  const pending = pendingRequestOf(task);
  if (pending?.type !== APPROVAL_REQUEST_TYPE || pending.subject.kind !== 'plan') return;
  const response = approvalResponseOf(turnInputOf(message));
  const plan = await plans.forTask(scope, task.id);
  if (!response || !plan || plan.status !== 'draft') return;
  const by = { subject: scope.owner };
  if (response.decision === 'reject') {
    const reason = typeof response.reason === 'string' && response.reason !== '' ? response.reason : undefined;
    await plans.moveIfAllowed(scope, plan.planId, ['cancel'], { ...by, reason });
  } else {
    const entries = response.decision === 'edit' ? editedEntries(response.edited) : undefined;
    await plans.moveIfAllowed(scope, plan.planId, ['approve', 'execute'], by, entries);
  }
}
