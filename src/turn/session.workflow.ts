import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Message, TaskState, type Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  ResultManager,
  ServerCallContext,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { ulid } from 'ulid';
import { TypeOrmTaskStore } from '../database/typeorm-task.store.js';
import { clientCapabilitiesOf, offeredTools } from '../execution/orchestrator/client-tools.js';
import {
  APPROVAL_REQUEST_TYPE,
  NO_CLIENT_CAPABILITIES,
  PLAN_DATA_TYPE,
  type OrchestratorSetup,
  type PlanEntry,
} from '../execution/orchestrator/protocol.js';
import type { PlanOperation } from '../plan/store/plan.states.js';
import {
  addUsage,
  breachOf,
  describeBreach,
  holdersOf,
  wallTimeLeftMs,
  type BudgetBreach,
  type BudgetHolder,
} from '../session/budgets.js';
import { approvalResponseOf, editedEntries, pendingRequestOf } from './replies.js';
import { NO_USAGE, type BudgetUsage } from '../session/session.entity.js';
import { SessionEventBuses } from './session-event-buses.js';
import { TaskPlans, type TaskPlan } from '../plan/store/task-plans.js';
import { AppConfig } from '../config/app.config.js';
import { ownerCallContext, resolveStoreScope } from '../database/store-scope.js';
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
import { DEFAULT_PROFILE, SessionService, type SessionScope } from '../session/session.service.js';
import { TaskRuns } from './task-runs.js';
import { dataPart, statusEvent, submittedTask, textPart } from '../execution/agent-events.js';
import { TurnPublisher, turnInputOf } from './turn-publisher.js';
import { TurnUsage, type UsageTargets } from './turn-usage.js';

/** How long CancelTask waits for a backend to stop before it marks the task canceled anyway. */
const CANCEL_GRACE_MS = 10_000;

/** Message metadata naming the plan a task started by `plan/execute` runs. */
export const PLAN_ID_KEY = 'cleveragents/planId';
/** How much of a message's text becomes the goal of a plan its orchestrator writes. */
const MAX_GOAL_LENGTH = 500;

interface RunningTurn {
  scope: SessionScope;
  taskId: string;
  controller: AbortController;
  publisher: TurnPublisher;
  settled: Promise<void>;
  contextId: string;
}

/** A task whose turn rested waiting for the client, on this replica. */
interface WaitingTask {
  scope: SessionScope;
  contextId: string;
  since: number;
  /** Fails the task when a wall-time budget runs out while it waits. */
  timer?: NodeJS.Timeout;
}

/** What `plan/execute` and `plan/cancel` do to tasks: through the A2A handler, like a client's call. */
export interface TaskControl {
  start(message: Message, context: ServerCallContext): Promise<Task>;
  cancel(taskId: string, context: ServerCallContext): Promise<Task>;
}

/** What a turn runs under: its gates and tools, its budgets, its plan. */
interface TurnFrame {
  setup: OrchestratorSetup;
  holders: BudgetHolder[];
  plan: TaskPlan | undefined;
  gate: OrchestratorSetup['policy']['gate'];
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

/** When a task waiting for input began to wait (its status time), or undefined when it does not wait. */
export function waitingSinceOf(task: Task | undefined): number | undefined {
  if (task?.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED || !task.status.timestamp) return undefined;
  const since = Date.parse(task.status.timestamp);
  return Number.isFinite(since) ? since : undefined;
}

/**
 * The one path from a message to its task (SPEC.md §4, §5): SendMessage is `tell()`. A message goes
 * to its session's actor, whose backend runs the turn; what the backend reports becomes the task's
 * status and artifact events on the SDK's bus (and so the task store and every stream); each turn is
 * recorded with a lease so that a restarted server finishes it (see TaskRecovery). CancelTask aborts
 * the turn's signal. In conformance mode every message goes to the TCK actor unchanged.
 */
@Injectable()
export class SessionWorkflow implements AgentExecutor, OnApplicationShutdown {
  private readonly logger = new Logger(SessionWorkflow.name);
  private readonly running = new Map<string, RunningTurn>();
  private takenUp: ((scope: SessionScope, taskId: string) => void) | undefined;
  /** Tasks whose turn rested waiting for input on this replica, for a CancelTask and the wall-time budget. */
  private readonly waiting = new Map<string, WaitingTask>();
  private control: TaskControl | undefined;

  constructor(
    private readonly sessions: SessionService,
    private readonly backends: ActorBackends,
    private readonly runs: TaskRuns,
    private readonly config: AppConfig,
    private readonly plans: TaskPlans,
    private readonly tasks: TypeOrmTaskStore,
    private readonly buses: SessionEventBuses,
  ) {}

  /** The A2A handler's entry points, set by the a2a wiring (plans start and cancel their tasks through it). */
  /**
   * Told when a turn here takes up a task that was waiting for input (an answer, `plan/resume`), or a
   * task with no bus here was canceled as it stood: another replica may hold the task's bus, with
   * subscribers waiting on it for what comes next.
   */
  onTakenUp(listener: (scope: SessionScope, taskId: string) => void): void {
    this.takenUp = listener;
  }

  useTaskControl(control: TaskControl): void {
    this.control = control;
  }

  get taskControl(): TaskControl {
    if (!this.control) throw new Error('The A2A request handler is not wired to the session workflow');
    return this.control;
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
    const task: Task = requestContext.task ?? submittedTask(taskId, contextId, userMessage);
    // The SDK requires a Task as the first event of every call, follow-ups included.
    bus.publish(AgentEvent.task(task));
    const failNow = (reason: string): void =>
      bus.publish(statusEvent(taskId, contextId, TaskState.TASK_STATE_FAILED, [textPart(reason)]));

    let actor: ActorDefinition;
    try {
      const session = await this.sessions.forTurn(scope, contextId);
      if (session.status === 'closed') return failNow(`Session ${contextId} is closed; start a new session.`);
      actor = await this.sessions.actorOf(scope, session);
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      return failNow(`The session's actor could not be resolved: ${detail}`);
    }
    const choice = this.backends.forActor(actor);
    if ('problem' in choice) return failNow(choice.problem);

    const mode = requestContext.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED ? 'resume' : 'start';
    const planId = userMessage.metadata?.[PLAN_ID_KEY];
    if (mode === 'start' && typeof planId === 'string') {
      const claimed = await this.plans.claim(scope, planId, taskId);
      if (!claimed) {
        return failNow(`Plan ${planId} is not executing: run a plan with _cleveragents/plan/execute.`);
      }
    }
    if (mode === 'resume' && requestContext.task) {
      await this.settleApproval(scope, requestContext.task, userMessage);
    }
    const remembered = await this.runs.begin(scope, {
      taskId,
      contextId,
      backend: choice.backend.name,
      actor,
      input: Message.toJSON(userMessage) as object,
    });
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
    const started = Date.now();
    // The wait this turn ends, as watched here, else (watched by another replica, or before a restart)
    // from when the stored task began to wait.
    const watched = this.stopWaiting(taskId);
    const waited = Math.max(watched, plan.waitingSince === undefined ? 0 : Date.now() - plan.waitingSince);
    let used: BudgetUsage = { ...NO_USAGE, wallTimeMs: waited };
    let breach: BudgetBreach | undefined;
    let frame: TurnFrame | undefined;
    let problem: string | undefined;
    try {
      frame = await this.frameOf(plan);
    } catch (err) {
      problem = err instanceof Error ? err.message : String(err);
    }
    const tracker = new PlanTracker(this.plans, scope, taskId, contextId, plan.message, frame, this.logger);
    const elapsed = (): BudgetUsage => ({ ...used, wallTimeMs: used.wallTimeMs + (Date.now() - started) });
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
    });
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const key = runKey(scope, taskId);
    const running: RunningTurn = { scope, taskId, controller, publisher, settled, contextId };
    this.running.set(key, running);
    if (plan.waitingSince !== undefined) this.takenUp?.(scope, taskId);
    let wallTimer: NodeJS.Timeout | undefined;
    let result: TurnResult;
    try {
      if (problem !== undefined || !frame) {
        result = { state: 'failed', reason: problem ?? 'The turn could not be prepared.' };
      } else if ((breach = breachOf(frame.holders, used, 'reached'))) {
        result = { state: 'failed', reason: describeBreach(breach) };
      } else {
        const left = wallTimeLeftMs(frame.holders, used.wallTimeMs);
        if (left !== undefined) wallTimer = setTimeout(check, Math.max(0, left) + 1);
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
      clearTimeout(wallTimer);
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
        this.startWaiting(scope, taskId, contextId, frame, elapsed().wallTimeMs);
        return paused;
      }
      const shown = await tracker.settle(result.state);
      publisher.finish(result, shown);
      if (result.state === 'input-required') this.startWaiting(scope, taskId, contextId, frame, elapsed().wallTimeMs);
      return result;
    } finally {
      this.running.delete(key);
      settle();
    }
  }

  /** The gates, tools, budgets and plan a turn of this task runs under. */
  private async frameOf(plan: TurnPlan): Promise<TurnFrame> {
    const { scope, taskId, contextId } = plan;
    const session = await this.sessions.get(scope, contextId);
    const taskPlan = await this.plans.forTask(scope, taskId);
    const profileName = taskPlan?.profile ?? session.profile ?? plan.actor.profile ?? DEFAULT_PROFILE;
    const profile = await this.sessions.profileOf(scope, profileName).catch(() => {
      throw new Error(
        `The automation profile ${profileName} is not defined in namespace ${scope.namespace}; ` +
          'define it (registry kind "profile") or choose another for the session.',
      );
    });
    const declared = clientCapabilitiesOf(plan.message.metadata ?? undefined);
    const capabilities = 'capabilities' in declared ? declared.capabilities : NO_CLIENT_CAPABILITIES;
    // A session's default budget is its own profile's (as the admission of a message reads it), even when
    // a plan runs under another profile.
    const sessionProfile = session.profile ?? plan.actor.profile ?? DEFAULT_PROFILE;
    const sessionDefault =
      sessionProfile === profile.name
        ? profile.budget
        : (await this.sessions.profileOf(scope, sessionProfile).catch(() => undefined))?.budget;
    const holders = holdersOf({ ...session, limits: session.budget ?? sessionDefault }, taskPlan);
    const setup: OrchestratorSetup = {
      policy: { gate: profile.gate, allowedTools: [...profile.allowedTools] },
      tools: offeredTools(capabilities),
    };
    if (taskPlan) {
      setup.plan = {
        planId: taskPlan.planId,
        goal: taskPlan.goal,
        entries: taskPlan.entries,
        approved: taskPlan.status === 'executing' || taskPlan.status === 'paused',
      };
    }
    return { setup, holders, plan: taskPlan, gate: profile.gate };
  }

  /** Where what turns use is counted (read when called: the services are set by the constructor). */
  private readonly usageTargets: UsageTargets = {
    addToSession: (scope, contextId, delta) => this.sessions.addUsage(scope, contextId, delta),
    addToPlan: (scope, planId, delta) => this.plans.addUsage(scope, planId, delta),
  };

  /** Adds what a wait used to its session's and plan's counts. */
  private async count(scope: SessionScope, contextId: string, planId: string | undefined, usage: BudgetUsage) {
    await new TurnUsage(this.usageTargets, scope, contextId, this.logger).write(usage, planId);
  }

  /**
   * An answer to a plan's approval gate moves the plan before the turn goes on: approved (and then
   * executing), with the edited entries for `edit`, or canceled for `reject`.
   */
  private async settleApproval(scope: SessionScope, task: Task, message: Message): Promise<void> {
    const pending = pendingRequestOf(task);
    if (pending?.type !== APPROVAL_REQUEST_TYPE || pending.subject.kind !== 'plan') return;
    const response = approvalResponseOf(turnInputOf(message));
    const plan = await this.plans.forTask(scope, task.id);
    if (!response || !plan || plan.status !== 'draft') return;
    const by = { subject: scope.owner };
    if (response.decision === 'reject') await this.plans.moveIfAllowed(scope, plan.planId, ['cancel'], by);
    else {
      const entries = response.decision === 'edit' ? editedEntries(response.edited) : undefined;
      await this.plans.moveIfAllowed(scope, plan.planId, ['approve', 'execute'], by, entries);
    }
  }

  /** Remembers a task that waits for input here; its wall-time budget goes on running while it waits. */
  private startWaiting(
    scope: SessionScope,
    taskId: string,
    contextId: string,
    frame: TurnFrame | undefined,
    turnMs = 0,
    since = Date.now(),
  ): void {
    this.stopWaiting(taskId);
    const waiting: WaitingTask = { scope, contextId, since };
    // The holders' usage was read before this turn (`turnMs` is the turn's own wall time); expireWait
    // reads it again when it fires.
    const left = frame ? wallTimeLeftMs(frame.holders, turnMs) : 0;
    if (left !== undefined) {
      waiting.timer = setTimeout(() => void this.expireWait(scope, taskId), Math.max(0, left) + 1);
      waiting.timer.unref();
    }
    this.waiting.set(taskId, waiting);
  }

  /**
   * After a restart: a task that was waiting for its client before it, whose wall-time budget keeps
   * running from when it started waiting (`since`, its stored status time).
   */
  watchWaiting(scope: SessionScope, taskId: string, contextId: string, since: Date): void {
    if (this.running.has(runKey(scope, taskId)) || this.waiting.has(taskId)) return;
    this.startWaiting(scope, taskId, contextId, undefined, 0, Math.min(since.getTime(), Date.now()));
  }

  /** Forgets a waiting task; returns how long it waited (counted as its wall time). */
  private stopWaiting(taskId: string): number {
    const waiting = this.waiting.get(taskId);
    if (!waiting) return 0;
    clearTimeout(waiting.timer);
    this.waiting.delete(taskId);
    return Date.now() - waiting.since;
  }

  /** A waiting task whose wall-time budget ran out: failed, naming the budget, with what it waited counted. */
  private async expireWait(scope: SessionScope, taskId: string): Promise<void> {
    const waiting = this.waiting.get(taskId);
    if (!waiting) return;
    try {
      const context = ownerCallContext(scope);
      const task = await this.tasks.load(taskId, context);
      // Answered, canceled or failed in the meantime (another replica, another path): nothing to end.
      if (task?.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED) {
        this.stopWaiting(taskId);
        return;
      }
      // The wait as stored: answered on another replica and waiting again since, it began later than
      // when this replica started watching (what came in between is counted already).
      const stored = waitingSinceOf(task);
      if (stored !== undefined) waiting.since = Math.min(Math.max(stored, waiting.since), Date.now());
      const session = await this.sessions.get(scope, waiting.contextId);
      const plan = await this.plans.forTask(scope, taskId);
      const holders = holdersOf({ ...session, limits: await this.sessions.budgetOf(scope, session) }, plan);
      const waited = Date.now() - waiting.since;
      const breach = breachOf(holders, { wallTimeMs: waited }, 'crossed');
      if (!breach) {
        const left = wallTimeLeftMs(holders, waited);
        if (left === undefined) return; // no wall-time limit: nothing to watch
        waiting.timer = setTimeout(() => void this.expireWait(scope, taskId), Math.max(0, left) + 1);
        waiting.timer.unref();
        return;
      }
      this.stopWaiting(taskId);
      // Another replica watching the same wait (one that started after the task began waiting) may have
      // ended it at the same moment: the wait is counted, and the task failed, once.
      if (!(await this.runs.claimExpiry(scope, taskId))) return;
      await this.count(scope, waiting.contextId, plan?.planId, { ...NO_USAGE, wallTimeMs: waited });
      let shown: Record<string, unknown> | undefined;
      if (plan) shown = planView(await this.movePlan(scope, plan, ['fail'], taskId));
      const parts = [textPart(describeBreach(breach))];
      await this.publishStored(
        scope,
        taskId,
        statusEvent(
          taskId,
          waiting.contextId,
          TaskState.TASK_STATE_FAILED,
          shown ? [...parts, dataPartOf(shown)] : parts,
        ),
      );
    } catch (err) {
      this.logger.warn({ msg: 'could not end a task whose budget ran out while waiting', taskId, error: String(err) });
    }
  }

  /** Stores an event of a task no request is running for, then hands it to the task's live bus. */
  private async publishStored(
    scope: SessionScope,
    taskId: string,
    event: ReturnType<typeof statusEvent>,
  ): Promise<void> {
    const context = ownerCallContext(scope);
    const task = await this.tasks.load(taskId, context);
    if (!task) return;
    const results = new ResultManager(this.tasks, context);
    await results.processEvent(AgentEvent.task(task));
    await results.processEvent(event);
    this.buses.getByTaskId(taskId, context)?.publish(event);
  }

  /** The task moves its plan (when the plan's state allows it); the plan as it then stands. */
  private async movePlan(
    scope: SessionScope,
    plan: TaskPlan,
    operations: PlanOperation[],
    taskId: string,
  ): Promise<TaskPlan> {
    return (await this.plans.moveIfAllowed(scope, plan.planId, operations, { subject: `task:${taskId}` })) ?? plan;
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
    const waited = this.stopWaiting(taskId);
    const parts = [textPart('Task canceled.')];
    if (waiting) {
      const plan = await this.plans.forTask(waiting.scope, taskId).catch(() => undefined);
      await this.count(waiting.scope, waiting.contextId, plan?.planId, { ...NO_USAGE, wallTimeMs: waited });
      if (plan) parts.push(dataPartOf(planView(await this.movePlan(waiting.scope, plan, ['cancel'], taskId))));
    }
    bus.publish(statusEvent(taskId, waiting?.contextId ?? '', TaskState.TASK_STATE_CANCELED, parts));
  }

  /**
   * A task the SDK canceled as it stood, with no bus of it here (waiting for its client after a restart,
   * or watched by another replica): its wait is counted from when it began to wait, and its plan is
   * canceled with it, as `cancel` does for a wait watched here. `before` is the task before the cancel.
   */
  async canceledAtRest(scope: SessionScope, before: Task): Promise<void> {
    try {
      this.stopWaiting(before.id);
      const since = waitingSinceOf(before);
      const plan = await this.plans.forTask(scope, before.id);
      if (since !== undefined) {
        const waited = Math.max(0, Date.now() - since);
        await this.count(scope, before.contextId, plan?.planId, { ...NO_USAGE, wallTimeMs: waited });
      }
      if (plan) await this.movePlan(scope, plan, ['cancel'], before.id);
      // A replica holding the task's bus (its subscribers waiting there) is told, as of a turn taken up.
      this.takenUp?.(scope, before.id);
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

function dataPartOf(plan: Record<string, unknown>) {
  return dataPart({ type: PLAN_DATA_TYPE, plan });
}

/**
 * The plan of one turn, as the orchestrator writes it: made (a ULID, at once, so the event that shows it
 * carries its id) when the orchestrator first writes one, its entries saved as they change, its status
 * moved with the task when the turn rests. Writes are queued in order; `flush` waits for them.
 */
class PlanTracker {
  private plan: TaskPlan | undefined;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly plans: TaskPlans,
    private readonly scope: SessionScope,
    private readonly taskId: string,
    private readonly contextId: string,
    private readonly message: Message,
    private readonly frame: TurnFrame | undefined,
    private readonly logger: Logger,
  ) {
    this.plan = frame?.plan;
  }

  get planId(): string | undefined {
    return this.plan?.planId;
  }

  /** The orchestrator wrote `entries`: the plan object its event carries. */
  view(entries: PlanEntry[]): Record<string, unknown> {
    if (!this.plan) {
      const goal = turnInputOf(this.message).text.slice(0, MAX_GOAL_LENGTH) || "The task's plan";
      const status = this.frame?.gate === 'autonomous' ? 'executing' : 'draft';
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

function runKey(scope: SessionScope, taskId: string): string {
  return `${scope.namespace}\u0000${scope.owner}\u0000${taskId}`;
}
