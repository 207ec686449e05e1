import { createHash } from 'node:crypto';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ownerCallContext } from '../database/store-scope.js';
import { TypeOrmTaskStore } from '../database/typeorm-task.store.js';
import { statusEvent, textPart } from '../execution/agent-events.js';
import { TaskPlans } from '../plan-store/task-plans.js';
import { breachOf, describeBreach, holdersOf, wallTimeLeftMs, type BudgetHolder } from '../session/budgets.js';
import { NO_USAGE, type BudgetUsage } from '../session/session.entity.js';
import { SessionService, type SessionScope } from '../session/session.service.js';
import { moveTaskPlan, planDataPart, planView } from './plan-tracker.js';
import { APPROVAL_REQUEST_TYPE, type ApprovalRequest, type ApprovalTimeout } from '@cleveragents/contract';
import type { TurnResult } from '../execution/actor-turn.js';
import { subjectHashOf } from '../approval-store/subject-hash.js';
import { shownPlanStatus } from './replies.js';
import { SessionEventBuses } from './session-event-buses.js';
import { TaskRuns } from './task-runs.js';
import { TurnUsage, type UsageTargets } from './turn-usage.js';
import { Clock, type ClockTimer } from '../common/clock.js';
import { ApprovalService } from '../approval-store/approval.service.js';
import type { ApprovalView } from '../approval-store/approval.repository.js';
import { ActorBackends } from '../execution/actor-backends.js';

/**
 * The approval-request the server records for an external agent's request for input (kind `agent`): its own
 * words and who it is; its requestId stands for the agent's task and the status message that asked, so
 * the same question met again (a re-joined task) is the same approval, and the next one another.
 */
export function agentRequestOf(result: TurnResult & { state: 'input-required' }): ApprovalRequest {
  const asker = result.asker!;
  const subject: ApprovalRequest['subject'] = {
    kind: 'agent',
    actor: asker.actor,
    origin: asker.origin,
    remoteTaskId: asker.remoteTaskId,
    text: result.text,
    ...(result.value === undefined ? {} : { data: result.value }),
  };
  const hash = createHash('sha256')
    .update(JSON.stringify([asker.remoteTaskId, asker.messageId ?? null, subjectHashOf(subject)]))
    .digest('hex');
  return {
    type: APPROVAL_REQUEST_TYPE,
    requestId: `agent-${hash.slice(0, 24)}`,
    subject,
    options: ['approve', 'reject', 'edit'],
  };
}

/** A task whose turn rested waiting for the client, on this replica. */
export interface WaitingTask {
  scope: SessionScope;
  contextId: string;
  since: number;
  /** Fails the task when a wall-time budget runs out while it waits. */
  timer?: ClockTimer;
}

/** When a task waiting for input began to wait (its status time), or undefined when it does not wait. */
export function waitingSinceOf(task: Task | undefined): number | undefined {
  if (task?.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED || !task.status.timestamp) return undefined;
  const since = Date.parse(task.status.timestamp);
  return Number.isFinite(since) ? since : undefined;
}

/**
 * The tasks whose turn rested waiting for input on this replica (for a CancelTask, and for the wall-time
 * budget, which goes on running while a task waits): a timer per task fails it, naming the budget, once
 * its wall time runs out, with what it waited counted to its session and plan.
 */
@Injectable()
export class WaitingTasks implements OnApplicationShutdown {
  private readonly logger = new Logger(WaitingTasks.name);
  private readonly waiting = new Map<string, WaitingTask>();

  constructor(
    private readonly sessions: SessionService,
    private readonly plans: TaskPlans,
    private readonly runs: TaskRuns,
    private readonly tasks: TypeOrmTaskStore,
    private readonly buses: SessionEventBuses,
    private readonly clock: Clock,
    private readonly approvals: ApprovalService,
    private readonly backends: ActorBackends,
  ) {}

  /**
   * A turn about to rest waiting at a gate (an approval-request it asks): recorded as an approval before
   * any client sees it wait, due by its profile's `timeout` if it has one. Returns the request as published,
   * carrying its approval's id (and when it times out).
   */
  async askApproval(
    scope: SessionScope,
    taskId: string,
    contextId: string,
    request: ApprovalRequest,
    timeout?: ApprovalTimeout,
  ): Promise<ApprovalRequest> {
    const approval = await this.approvals.asked(scope, taskId, contextId, request, timeout);
    return {
      ...request,
      approvalId: approval.approvalId,
      ...(approval.expiresAt && approval.onTimeout
        ? { expiresAt: approval.expiresAt, onTimeout: approval.onTimeout }
        : {}),
    };
  }

  /**
   * A waiting task ended without an answer (canceled, or its budget ran out): its approval ends with it, and
   * an external agent's task that it waited on is canceled.
   */
  async endApproval(scope: SessionScope, taskId: string, state: 'canceled' | 'expired', reason: string): Promise<void> {
    const ended = await this.approvals.ended(scope, taskId, state, reason).catch((err: unknown) => {
      this.logger.warn({ msg: 'could not end the approval of a task', taskId, error: String(err) });
      return [];
    });
    // Not waited for: an agent slow to answer does not hold up the cancel.
    for (const approval of ended) void this.cancelRemote(scope, approval);
  }

  /** The external agent's task an approval of kind `agent` waited on, canceled (failures logged). */
  private async cancelRemote(scope: SessionScope, approval: ApprovalView): Promise<void> {
    if (approval.subject.kind !== 'agent') return;
    const { actor: name, remoteTaskId } = approval.subject;
    try {
      const actor = await this.sessions.actorOf(scope, await this.sessions.get(scope, approval.sessionId));
      // The session's actor still the agent that asked: its task there is canceled with ours.
      if (actor.name === name && actor.a2a) await this.backends.cancelWaiting(scope.namespace, actor, remoteTaskId);
    } catch (err) {
      this.logger.warn({
        msg: 'could not cancel the remote task a task waited on',
        taskId: approval.taskId,
        error: String(err),
      });
    }
  }

  /** Where what a wait used is counted (read when called: the services are set by the constructor). */
  private readonly usageTargets: UsageTargets = {
    addToSession: (scope, contextId, delta) => this.sessions.addUsage(scope, contextId, delta),
    addToPlan: (scope, planId, delta) => this.plans.addUsage(scope, planId, delta),
  };

  /** Adds what a wait used to its session's and plan's counts. */
  async count(scope: SessionScope, contextId: string, planId: string | undefined, usage: BudgetUsage): Promise<void> {
    await new TurnUsage(this.usageTargets, scope, contextId, this.logger).write(usage, planId);
  }

  /** The process stops watching: its waits are recovered from the database by whichever replica runs next. */
  onApplicationShutdown(): void {
    for (const waiting of this.waiting.values()) waiting.timer?.cancel();
    this.waiting.clear();
  }

  has(taskId: string): boolean {
    return this.waiting.has(taskId);
  }

  get(taskId: string): WaitingTask | undefined {
    return this.waiting.get(taskId);
  }

  /**
   * Remembers a task that waits for input here; its wall-time budget goes on running while it waits.
   * `holders` are the budgets the turn ran under (undefined: read them when the timer fires).
   */
  start(
    scope: SessionScope,
    taskId: string,
    contextId: string,
    holders: BudgetHolder[] | undefined,
    turnMs = 0,
    since = this.clock.now(),
  ): void {
    this.stop(taskId);
    const waiting: WaitingTask = { scope, contextId, since };
    // The holders' usage was read before this turn (`turnMs` is the turn's own wall time); expire
    // reads it again when it fires.
    const left = holders ? wallTimeLeftMs(holders, turnMs) : 0;
    if (left !== undefined) {
      waiting.timer = this.clock.after(Math.max(0, left) + 1, () => void this.expire(scope, taskId));
    }
    this.waiting.set(taskId, waiting);
  }

  /** Forgets a waiting task; returns how long it waited (counted as its wall time). */
  stop(taskId: string): number {
    const waiting = this.waiting.get(taskId);
    if (!waiting) return 0;
    waiting.timer?.cancel();
    this.waiting.delete(taskId);
    return this.clock.now() - waiting.since;
  }

  /** A waiting task whose wall-time budget ran out: failed, naming the budget, with what it waited counted. */
  private async expire(scope: SessionScope, taskId: string): Promise<void> {
    const waiting = this.waiting.get(taskId);
    if (!waiting) return;
    try {
      const context = ownerCallContext(scope);
      const task = await this.tasks.load(taskId, context);
      // Answered, canceled or failed in the meantime (another replica, another path): nothing to end.
      if (task?.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED) {
        this.stop(taskId);
        return;
      }
      // The wait as stored: answered on another replica and waiting again since, it began later than
      // when this replica started watching (what came in between is counted already).
      const stored = waitingSinceOf(task);
      if (stored !== undefined) waiting.since = Math.min(Math.max(stored, waiting.since), this.clock.now());
      const session = await this.sessions.get(scope, waiting.contextId);
      const plan = await this.plans.forTask(scope, taskId);
      const holders = holdersOf({ ...session, limits: await this.sessions.budgetOf(scope, session) }, plan);
      const waited = this.clock.now() - waiting.since;
      const breach = breachOf(holders, { wallTimeMs: waited }, 'crossed');
      if (!breach) {
        const left = wallTimeLeftMs(holders, waited);
        if (left === undefined) return; // no wall-time limit: nothing to watch
        waiting.timer = this.clock.after(Math.max(0, left) + 1, () => void this.expire(scope, taskId));
        return;
      }
      this.stop(taskId);
      // Another replica watching the same wait (one that started after the task began waiting) may have
      // ended it at the same moment: the wait is counted, and the task failed, once.
      if (!(await this.runs.claimExpiry(scope, taskId))) return;
      await this.count(scope, waiting.contextId, plan?.planId, { ...NO_USAGE, wallTimeMs: waited });
      let shown: Record<string, unknown> | undefined;
      if (plan) shown = planView(await moveTaskPlan(this.plans, scope, plan, ['fail'], taskId));
      await this.endApproval(scope, taskId, 'expired', describeBreach(breach));
      const parts = [textPart(describeBreach(breach))];
      await this.publishStored(
        scope,
        taskId,
        statusEvent(
          taskId,
          waiting.contextId,
          TaskState.TASK_STATE_FAILED,
          shown ? [...parts, planDataPart(shown)] : parts,
          this.clock.date(),
        ),
      );
    } catch (err) {
      this.logger.warn({ msg: 'could not end a task whose budget ran out while waiting', taskId, error: String(err) });
    }
  }

  /**
   * The tasks of a session left waiting for input when a new message (`byTaskId`) goes on in the same
   * thread: what they waited for is gone from the thread, so each is canceled, saying why, with its wait
   * counted and its plan canceled, once whichever replica watches it.
   */
  async supersede(scope: SessionScope, contextId: string, byTaskId: string): Promise<void> {
    const waiting = await this.tasks
      .list(
        {
          tenant: '',
          contextId,
          status: TaskState.TASK_STATE_INPUT_REQUIRED,
          pageSize: 100,
          pageToken: '',
          statusTimestampAfter: undefined,
        },
        ownerCallContext(scope),
      )
      .then((page) => page.tasks)
      .catch((err: unknown) => {
        this.logger.warn({
          msg: 'could not read the tasks a new message goes on without',
          contextId,
          error: String(err),
        });
        return [];
      });
    // A paused plan waits for plan/resume, not for an answer: it stays as the person left it.
    for (const task of waiting.filter((t) => t.id !== byTaskId && shownPlanStatus(t) !== 'paused')) {
      try {
        await this.endSuperseded(scope, task, byTaskId);
      } catch (err) {
        this.logger.warn({
          msg: 'could not end a task a new message went on without',
          taskId: task.id,
          error: String(err),
        });
      }
    }
  }

  private async endSuperseded(scope: SessionScope, task: Task, byTaskId: string): Promise<void> {
    const watched = this.stop(task.id);
    if (!(await this.runs.claimExpiry(scope, task.id))) return;
    await this.endApproval(scope, task.id, 'canceled', `A new message (task ${byTaskId}) went on without answering`);
    const since = waitingSinceOf(task);
    const waited = Math.max(watched, since === undefined ? 0 : Math.max(0, this.clock.now() - since));
    const plan = await this.plans.forTask(scope, task.id);
    await this.count(scope, task.contextId, plan?.planId, { ...NO_USAGE, wallTimeMs: waited });
    const parts = [
      textPart(
        `Not answered: a new message (task ${byTaskId}) went on in this session; what this task waited for was not run.`,
      ),
    ];
    if (plan) parts.push(planDataPart(planView(await moveTaskPlan(this.plans, scope, plan, ['cancel'], task.id))));
    await this.publishStored(
      scope,
      task.id,
      statusEvent(task.id, task.contextId, TaskState.TASK_STATE_CANCELED, parts, this.clock.date()),
    );
  }

  /** Stores an event of a task no request is running for through its recording (its live bus, if any, shows it). */
  private async publishStored(
    scope: SessionScope,
    taskId: string,
    event: ReturnType<typeof statusEvent>,
  ): Promise<void> {
    const task = await this.tasks.load(taskId, ownerCallContext(scope));
    if (!task) return;
    await this.buses.publishAtRest(scope, task, event);
  }
}
