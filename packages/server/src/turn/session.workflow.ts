import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { PLAN_ID_KEY } from '@cleveragents/contract';
import { ModuleRef } from '@nestjs/core';
import { Message, TaskState, type Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { AppConfig } from '../config/app.config.js';
import { resolveStoreScope } from '../database/store-scope.js';
import { ActorBackends } from '../execution/actor-backends.js';
import {
  TURN_CANCELED,
  TURN_DETACHED,
  TURN_PAUSED,
  type ActorDefinition,
  type ActorTurn,
  type TurnBackend,
  type TurnResult,
} from '../execution/actor-turn.js';
import { statusEvent, submittedTask, textPart } from '../execution/agent-events.js';
import { TaskPlans, type TaskPlan } from '../plan/store/task-plans.js';
import { addUsage, breachOf, describeBreach, wallTimeLeftMs, type BudgetBreach } from '../session/budgets.js';
import { NO_USAGE, type BudgetUsage } from '../session/session.entity.js';
import { SessionService, type SessionScope } from '../session/session.service.js';
import { moveTaskPlan, planDataPart, planView, PlanTracker, settleApproval } from './plan-tracker.js';
import { SessionEventBuses } from './session-event-buses.js';
import { TaskRuns } from './task-runs.js';
import { TakenUpTasks } from './taken-up-tasks.js';
import { frameOf, type TurnFrame } from './turn-frame.js';
import { TurnPublisher, turnInputOf } from './turn-publisher.js';
import { TurnUsage, type UsageTargets } from './turn-usage.js';
import { waitingSinceOf, WaitingTasks } from './waiting-tasks.js';
import { Clock, type ClockTimer } from '../common/clock.js';

/** How long CancelTask waits for a backend to stop before it marks the task canceled anyway. */
const CANCEL_GRACE_MS = 10_000;

interface RunningTurn {
  scope: SessionScope;
  taskId: string;
  controller: AbortController;
  publisher: TurnPublisher;
  settled: Promise<void>;
  contextId: string;
}

/** What a turn needs besides its backend: enough to start it now or to pick it up after a restart. */
export interface TurnPlan {
  scope: SessionScope;
  taskId: string;
  contextId: string;
  actor: ActorDefinition;
  backend: TurnBackend;
  mode: ActorTurn['mode'];
  message: Message;
  remembered: Record<string, unknown>;
  /**
   * When the task began waiting for input, if this turn takes up a waiting task (epoch ms, its stored
   * status time): the wait counts as wall time, whichever replica watched it.
   */
  waitingSince?: number;
}

/**
 * The one path from a message to its task (docs/protocol.md §4, §5): SendMessage is `tell()`. A message goes
 * to its session's actor, whose backend runs the turn; what the backend reports becomes the task's
 * status and artifact events on the SDK's bus (and so the task store and every stream); each turn is
 * recorded with a lease so that a restarted server finishes it (see TaskRecovery). CancelTask aborts
 * the turn's signal. In conformance mode every message goes to the TCK actor unchanged.
 */
@Injectable()
export class SessionWorkflow implements AgentExecutor, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(SessionWorkflow.name);
  private readonly running = new Map<string, RunningTurn>();
  private takenUpTasks!: TakenUpTasks;

  constructor(
    private readonly sessions: SessionService,
    private readonly backends: ActorBackends,
    private readonly runs: TaskRuns,
    private readonly config: AppConfig,
    private readonly plans: TaskPlans,
    private readonly waiting: WaitingTasks,
    private readonly moduleRef: ModuleRef,
    private readonly clock: Clock,
    buses: SessionEventBuses,
  ) {
    // A turn whose events cannot be stored (the database away past CLEVERAGENTS_TURN_OUTAGE_SECONDS, or the task
    // taken over elsewhere) lets go here, publishing nothing: its run stays recorded, and is taken over.
    buses.onLoss((ref) => this.running.get(runKey(ref, ref.id))?.controller.abort(TURN_DETACHED));
  }

  /**
   * TakenUpTasks is provided by src/replica, whose RemoteTurnControls itself depends on this workflow:
   * resolved once every provider exists, rather than injected, to break that cycle.
   */
  onModuleInit(): void {
    this.takenUpTasks = this.moduleRef.get(TakenUpTasks, { strict: false });
  }

  /**
   * `plan/pause` of a plan whose task runs here: the turn stops where it is (TURN_PAUSED: a local graph
   * stops at its checkpoint, a remote run is cancelled keeping its thread's last checkpoint) and the task
   * rests waiting, its plan shown paused. False when no turn of it runs here.
   */
  pauseHere(scope: SessionScope, taskId: string): Promise<boolean> {
    const turn = this.running.get(runKey(scope, taskId));
    if (!turn) return Promise.resolve(false);
    turn.controller.abort(TURN_PAUSED);
    return turn.settled.then(() => true);
  }

  /** The SDK's executor entry: a new message (or an answer to a waiting task). */
  execute(requestContext: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const conformance = this.backends.conformance;
    if (conformance) return conformance.execute(requestContext, bus);
    return this.tell(requestContext, bus);
  }

  cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    const conformance = this.backends.conformance;
    if (conformance) return conformance.cancelTask(taskId, bus);
    return this.cancel(taskId, bus);
  }

  /** Cancels the task's turn if it runs on this replica (a request relayed by another replica). */
  cancelHere(scope: SessionScope, taskId: string): boolean {
    const turn = this.running.get(runKey(scope, taskId));
    if (!turn) return false;
    turn.controller.abort(TURN_CANCELED);
    return true;
  }

  /** Turns in flight on this replica (graceful shutdown, diagnostics, tests). */
  get runningTurns(): number {
    return this.running.size;
  }

  /** The tasks whose turns run here now: the leases this replica renews. */
  runningTasks(): (SessionScope & { taskId: string })[] {
    return [...this.running.values()].map((turn) => ({ ...turn.scope, taskId: turn.taskId }));
  }

  async tell(requestContext: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage } = requestContext;
    const scope = resolveStoreScope(requestContext.context, this.config.defaultNamespace);
    const task: Task = requestContext.task ?? submittedTask(taskId, contextId, userMessage, this.clock.date());
    // The SDK requires a Task as the first event of every call, follow-ups included.
    bus.publish(AgentEvent.task(task));
    const failNow = (reason: string): void =>
      bus.publish(statusEvent(taskId, contextId, TaskState.TASK_STATE_FAILED, [textPart(reason)], this.clock.date()));
    const closed = `Session ${contextId} is closed; start a new session.`;

    let actor: ActorDefinition;
    try {
      const session = await this.sessions.forTurn(scope, contextId);
      if (session.status === 'closed') return failNow(closed);
      actor = await this.sessions.actorOf(scope, session);
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      return failNow(`The session's actor could not be resolved: ${detail}`);
    }
    const choice = this.backends.forActor(actor);
    if ('problem' in choice) return failNow(choice.problem);

    const mode = requestContext.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED ? 'resume' : 'start';
    const planId: unknown = userMessage.metadata?.[PLAN_ID_KEY];
    let claimed: TaskPlan | undefined;
    if (mode === 'start' && typeof planId === 'string') {
      claimed = await this.plans.claim(scope, planId, taskId);
      if (!claimed) {
        return failNow(`Plan ${planId} is not executing: run a plan with _cleveragents/plan/execute.`);
      }
    }
    if (mode === 'resume' && requestContext.task) {
      await settleApproval(this.plans, scope, requestContext.task, userMessage);
    }
    const remembered = await this.runs.begin(scope, {
      taskId,
      contextId,
      backend: choice.backend.name,
      actor,
      input: Message.toJSON(userMessage) as object,
    });
    if (remembered === undefined) {
      // Closed since it was read: session/close found no run of this turn, so none may run. A plan this
      // turn claimed fails with its task, as it would had the turn run and failed.
      if (claimed) await moveTaskPlan(this.plans, scope, claimed, ['fail'], taskId);
      return failNow(closed);
    }
    await this.drive(bus, {
      scope,
      taskId,
      contextId,
      actor,
      backend: choice.backend,
      mode,
      message: userMessage,
      remembered,
      waitingSince: waitingSinceOf(requestContext.task),
    });
  }

  /**
   * Runs one turn to rest and publishes how it rested. Resolves when the final status is on the bus
   * (or, when the server is stopping, when the turn let go: then nothing is published and the run
   * stays leased for recovery). Budgets are counted as it runs: crossing one stops the turn and fails
   * the task naming the budget.
   */
  async drive(bus: ExecutionEventBus, plan: TurnPlan): Promise<TurnResult | undefined> {
    const { scope, taskId, contextId } = plan;
    const controller = new AbortController();
    const started = this.clock.now();
    // The wait this turn ends, as watched here, else (watched by another replica, or before a restart)
    // from when the stored task began to wait.
    const watched = this.waiting.stop(taskId);
    const waited = Math.max(watched, plan.waitingSince === undefined ? 0 : this.clock.now() - plan.waitingSince);
    let used: BudgetUsage = { ...NO_USAGE, wallTimeMs: waited };
    let breach: BudgetBreach | undefined;
    let frame: TurnFrame | undefined;
    let problem: string | undefined;
    try {
      frame = await frameOf(this.sessions, this.plans, plan);
    } catch (err) {
      problem = err instanceof Error ? err.message : String(err);
    }
    const tracker = new PlanTracker(
      this.plans,
      scope,
      taskId,
      contextId,
      plan.message,
      frame?.plan,
      frame?.gate,
      this.logger,
    );
    const elapsed = (): BudgetUsage => ({ ...used, wallTimeMs: used.wallTimeMs + (this.clock.now() - started) });
    const check = (): void => {
      if (!frame || breach || controller.signal.aborted) return;
      breach = breachOf(frame.holders, elapsed(), 'crossed');
      if (breach) controller.abort(TURN_BUDGET);
    };
    const counter = new TurnUsage(this.usageTargets, scope, contextId, this.logger);
    // Written as the turn goes, so that a crash loses little of it; the plan's row first, if it is new.
    const countSoFar = (): Promise<void> => counter.write(elapsed(), tracker.planId, tracker.flush());
    const publisher = new TurnPublisher(bus, taskId, contextId, `answer-${plan.message.messageId}`, {
      remember: (data) => this.runs.remember(scope, taskId, data),
      plan: (entries) => {
        const view = tracker.view(entries);
        void countSoFar(); // a plan made now is given what the turn used so far
        return view;
      },
      usage: (delta) => {
        used = addUsage(used, delta);
        check();
        void countSoFar();
      },
      now: () => this.clock.date(),
    });
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const key = runKey(scope, taskId);
    const running: RunningTurn = { scope, taskId, controller, publisher, settled, contextId };
    this.running.set(key, running);
    if (plan.waitingSince !== undefined) this.takenUpTasks.announce(scope, taskId);
    let wallTimer: ClockTimer | undefined;
    let result: TurnResult;
    try {
      if (problem !== undefined || !frame) {
        result = { state: 'failed', reason: problem ?? 'The turn could not be prepared.' };
      } else if ((breach = breachOf(frame.holders, used, 'reached'))) {
        result = { state: 'failed', reason: describeBreach(breach) };
      } else {
        const left = wallTimeLeftMs(frame.holders, used.wallTimeMs);
        if (left !== undefined) wallTimer = this.clock.after(Math.max(0, left) + 1, check);
        if (plan.mode === 'start' && frame.plan) publisher.plan(frame.plan.entries);
        const turn: ActorTurn = {
          taskId,
          contextId,
          namespace: scope.namespace,
          owner: scope.owner,
          actor: plan.actor,
          mode: plan.mode,
          input: turnInputOf(plan.message),
          setup: frame.setup,
          remembered: plan.remembered,
          subAgents: frame.subAgents,
          signal: controller.signal,
          output: publisher,
        };
        try {
          result = await plan.backend.run(turn);
        } catch (err) {
          this.logger.error(
            { msg: 'actor backend threw', backend: plan.backend.name, taskId },
            err instanceof Error ? err : undefined,
          );
          result = { state: 'failed', reason: 'The actor failed unexpectedly; the server log has the details.' };
        }
      }
    } finally {
      wallTimer?.cancel();
    }
    try {
      await countSoFar();
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : undefined;
      if (reason === TURN_DETACHED) return undefined;
      if (reason === TURN_CANCELED) result = { state: 'canceled' };
      if (reason === TURN_BUDGET && breach) result = { state: 'failed', reason: describeBreach(breach) };
      await this.runs
        .rest(scope, taskId)
        .catch((err: unknown) =>
          this.logger.warn({ msg: 'could not record the end of a turn', taskId, error: String(err) }),
        );
      await tracker.flush();
      if (reason === TURN_PAUSED) {
        const paused = {
          state: 'input-required' as const,
          text: `Plan ${tracker.planId ?? ''} is paused; resume it with _cleveragents/plan/resume.`,
        };
        publisher.finish(paused, await tracker.settle('input-required'));
        this.waiting.start(scope, taskId, contextId, frame?.holders, elapsed().wallTimeMs);
        return paused;
      }
      const shown = await tracker.settle(result.state);
      publisher.finish(result, shown);
      if (result.state === 'input-required') {
        this.waiting.start(scope, taskId, contextId, frame?.holders, elapsed().wallTimeMs);
      }
      return result;
    } finally {
      this.running.delete(key);
      settle();
    }
  }

  /** Where what turns use is counted (read when called: the services are set by the constructor). */
  private readonly usageTargets: UsageTargets = {
    addToSession: (scope, contextId, delta) => this.sessions.addUsage(scope, contextId, delta),
    addToPlan: (scope, planId, delta) => this.plans.addUsage(scope, planId, delta),
  };

  /**
   * After a restart: a task that was waiting for its client before it, whose wall-time budget keeps
   * running from when it started waiting (`since`, its stored status time).
   */
  watchWaiting(scope: SessionScope, taskId: string, contextId: string, since: Date): void {
    if (this.running.has(runKey(scope, taskId)) || this.waiting.has(taskId)) return;
    this.waiting.start(scope, taskId, contextId, undefined, 0, Math.min(since.getTime(), this.clock.now()));
  }

  private async cancel(taskId: string, bus: ExecutionEventBus): Promise<void> {
    const entry = [...this.running.entries()].find(([key]) => key.endsWith(`\u0000${taskId}`));
    if (entry) {
      const [, turn] = entry;
      turn.controller.abort(TURN_CANCELED);
      const timedOut = await Promise.race([
        turn.settled.then(() => false),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(true), CANCEL_GRACE_MS).unref()),
      ]);
      if (timedOut) {
        this.logger.warn({ msg: 'actor backend did not stop within the cancel grace period', taskId });
        turn.publisher.finish({ state: 'canceled' });
      }
      return;
    }
    // No turn running here: the task waits for input (its bus is kept alive). Cancel it as it stands.
    const waiting = this.waiting.get(taskId);
    const waited = this.waiting.stop(taskId);
    const parts = [textPart('Task canceled.')];
    if (waiting) {
      const plan = await this.plans.forTask(waiting.scope, taskId).catch(() => undefined);
      await this.waiting.count(waiting.scope, waiting.contextId, plan?.planId, { ...NO_USAGE, wallTimeMs: waited });
      if (plan) {
        parts.push(planDataPart(planView(await moveTaskPlan(this.plans, waiting.scope, plan, ['cancel'], taskId))));
      }
    }
    bus.publish(statusEvent(taskId, waiting?.contextId ?? '', TaskState.TASK_STATE_CANCELED, parts, this.clock.date()));
  }

  /**
   * A task the SDK canceled as it stood, with no bus of it here (waiting for its client after a restart,
   * or watched by another replica): its wait is counted from when it began to wait, and its plan is
   * canceled with it, as `cancel` does for a wait watched here. `before` is the task before the cancel.
   */
  async canceledAtRest(scope: SessionScope, before: Task): Promise<void> {
    try {
      this.waiting.stop(before.id);
      const since = waitingSinceOf(before);
      const plan = await this.plans.forTask(scope, before.id);
      if (since !== undefined) {
        const waited = Math.max(0, this.clock.now() - since);
        await this.waiting.count(scope, before.contextId, plan?.planId, { ...NO_USAGE, wallTimeMs: waited });
      }
      if (plan) await moveTaskPlan(this.plans, scope, plan, ['cancel'], before.id);
      // A replica holding the task's bus (its subscribers waiting there) is told, as of a turn taken up.
      this.takenUpTasks.announce(scope, before.id);
    } catch (err) {
      this.logger.warn({ msg: 'could not settle a task canceled at rest', taskId: before.id, error: String(err) });
    }
  }

  /**
   * Lets go of every running turn: backends stop working here but cancel nothing remote, nothing is
   * published, and the runs stay recorded as running with their leases given up, so that the next
   * process (or another replica) picks them up at once. Called by the graceful shutdown once in-flight
   * calls had their grace period; again, harmlessly, when the application closes.
   */
  async detachAll(): Promise<void> {
    const turns = [...this.running.values()];
    for (const turn of turns) turn.controller.abort(TURN_DETACHED);
    await Promise.all(turns.map((t) => t.settled));
    await this.runs
      .release()
      .catch((err: unknown) => this.logger.warn({ msg: 'could not give up task leases', error: String(err) }));
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.running.size > 0) await this.detachAll();
  }
}

/** `signal.reason` when a budget ran out: the turn stops (a remote run is canceled) and the task fails. */
const TURN_BUDGET = 'budget';

function runKey(scope: SessionScope, taskId: string): string {
  return `${scope.namespace}\u0000${scope.owner}\u0000${taskId}`;
}
