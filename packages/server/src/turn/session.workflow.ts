import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ApprovalRequest, PLAN_ID_KEY, type ApprovalTimeout } from '@cleveragents/contract';
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
import { TaskPlans, type TaskPlan } from '../plan-store/task-plans.js';
import { addUsage, breachOf, describeBreach, wallTimeLeftMs, type BudgetBreach } from '../session/budgets.js';
import { NO_USAGE, type BudgetUsage } from '../session/session.entity.js';
import { SessionService, type SessionScope, type SessionView } from '../session/session.service.js';
import { moveTaskPlan, planDataPart, planView, PlanTracker, settleApproval } from './plan-tracker.js';
import { RunningTurns, type RunningTurn } from './running-turns.js';
import { TaskRuns } from './task-runs.js';
import { frameOf, type TurnFrame } from './turn-frame.js';
import { TurnPublisher, turnInputOf } from './turn-publisher.js';
import { TurnUsage, type UsageTargets } from './turn-usage.js';
import { agentRequestOf, waitingSinceOf, WaitingTasks } from './waiting-tasks.js';
import { Clock, type ClockTimer } from '../common/clock.js';
import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import {
  CA_ACTOR,
  CA_BACKEND,
  CA_NAMESPACE,
  CA_PROFILE,
  CA_SESSION,
  CA_TASK_ID,
  CA_TURN_MODE,
  CA_TURN_STATE,
  CA_TURN_WAITED_SECONDS,
  ERROR_TYPE,
  GEN_AI_AGENT_NAME,
  GEN_AI_CONVERSATION_ID,
  GEN_AI_OPERATION_NAME,
  GEN_AI_REQUEST_MODEL,
} from '../telemetry/attributes.js';
import { serverTracer } from '../telemetry/tracing.js';
import { TurnMetrics, watchedOutput, type MeasuredTurn, type TurnOutcome } from './turn-metrics.js';

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

/** The backends that run a session's tasks in one thread: a new message there ends what an earlier task waited for. */
const THREADED: readonly string[] = ['local', 'langgraph'];

/** `signal.reason` when a budget ran out: the turn stops (a remote run is canceled) and the task fails. */
const TURN_BUDGET = 'budget';

/** What a turn used so far (its wall time running on), and the budget it crossed, if any. */
class TurnMeter {
  breach: BudgetBreach | undefined;
  private used: BudgetUsage;
  private readonly started: number;

  constructor(
    private readonly clock: Clock,
    private readonly controller: AbortController,
    private readonly frame: TurnFrame | undefined,
    waitedMs: number,
  ) {
    this.used = { ...NO_USAGE, wallTimeMs: waitedMs };
    this.started = clock.now();
  }

  elapsed(): BudgetUsage {
    return { ...this.used, wallTimeMs: this.used.wallTimeMs + (this.clock.now() - this.started) };
  }

  add(delta: Partial<BudgetUsage>): void {
    this.used = addUsage(this.used, delta);
    this.check();
  }

  /** Stops the turn (TURN_BUDGET) once a budget is crossed. */
  check(): void {
    if (!this.frame || this.breach || this.controller.signal.aborted) return;
    this.breach = breachOf(this.frame.holders, this.elapsed(), 'crossed');
    if (this.breach) this.controller.abort(TURN_BUDGET);
  }

  /** A budget used up before the turn starts. */
  reachedBefore(): BudgetBreach | undefined {
    if (!this.frame) return undefined;
    return (this.breach = breachOf(this.frame.holders, this.used, 'reached'));
  }

  /** Arms the wall-time budget's timer, if there is one. */
  armWallTime(): ClockTimer | undefined {
    const left = this.frame ? wallTimeLeftMs(this.frame.holders, this.used.wallTimeMs) : undefined;
    return left === undefined ? undefined : this.clock.after(Math.max(0, left) + 1, () => this.check());
  }
}

/** One turn being driven: its frame (or why it has none), meter, plan, publisher and running entry. */
interface DrivenTurn {
  frame: TurnFrame | undefined;
  problem: string | undefined;
  meter: TurnMeter;
  tracker: PlanTracker;
  publisher: TurnPublisher;
  countSoFar: () => Promise<void>;
  running: RunningTurn;
  settle: () => void;
  /** Set when the backend threw: the `error.type` of the turn's span (its class name, never its message). */
  threw?: string;
  /** How long the task waited for the input this turn takes up (0 for a new task). */
  waitedMs: number;
}

/** A failed turn's `error.type`: the stable code its reason starts with (`MODEL_UNAVAILABLE: …`), else what failed it. */
function failureType(turn: DrivenTurn | undefined, reason: string): string {
  if (turn?.threw) return turn.threw;
  if (turn?.meter.breach) return 'budget_exceeded';
  if (!turn || turn.problem !== undefined || !turn.frame) return 'turn_not_prepared';
  return /^([A-Z][A-Z0-9_]{2,63}):/.exec(reason)?.[1] ?? 'turn_failed';
}

/**
 * Says on the turn's span how it rested: its state, and for a failure status ERROR with the reason the
 * client is shown (written for the client: no secret, no stack) and an `error.type`.
 */
function restOnSpan(span: Span, turn: DrivenTurn | undefined, result: TurnResult | undefined): TurnOutcome {
  const outcome: TurnOutcome = result?.state ?? 'detached';
  span.setAttribute(CA_TURN_STATE, outcome);
  if (result?.state === 'failed') {
    span.setAttribute(ERROR_TYPE, failureType(turn, result.reason));
    span.setStatus({ code: SpanStatusCode.ERROR, message: result.reason.slice(0, 500) });
  }
  return outcome;
}

/**
 * The one path from a message to its task (docs/protocol.md §4, §5): SendMessage is `tell()`, whose turn runs
 * on the session actor's backend; what it reports becomes the task's events on the SDK's bus, each turn
 * leased so that a restarted server finishes it (TaskRecovery). In conformance mode the TCK actor answers.
 */
@Injectable()
export class SessionWorkflow implements AgentExecutor, OnApplicationShutdown {
  private readonly logger = new Logger(SessionWorkflow.name);

  // Nine: the SDK's executor entry is where a message meets its session, actor, plan, run and wait.
  constructor(
    private readonly sessions: SessionService,
    private readonly backends: ActorBackends,
    private readonly runs: TaskRuns,
    private readonly config: AppConfig,
    private readonly plans: TaskPlans,
    private readonly waiting: WaitingTasks,
    private readonly clock: Clock,
    private readonly running: RunningTurns,
    private readonly metrics: TurnMetrics,
  ) {}

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

  /** Turns in flight on this replica (graceful shutdown, diagnostics, tests). */
  get runningTurns(): number {
    return this.running.size;
  }

  /** The tasks whose turns run here now: the leases this replica renews. */
  runningTasks(): (SessionScope & { taskId: string })[] {
    return this.running.tasks();
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
    let session: SessionView;
    try {
      session = await this.sessions.forTurn(scope, contextId);
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
    if (remembered !== undefined && !requestContext.task) {
      // Written once the turn is recorded (a close under way holds the session's row until then); a title
      // is a nicety, and a failure to write one fails no turn.
      await this.sessions
        .titleFromMessage(scope, session, turnInputOf(userMessage).text)
        .catch((err: unknown) => this.logger.warn({ msg: 'could not title a session', contextId, error: String(err) }));
    }
    // One thread per session: a new message there leaves no earlier task waiting on what it dropped.
    if (remembered !== undefined && mode === 'start' && THREADED.includes(choice.backend.name)) {
      await this.waiting.supersede(scope, contextId, taskId);
    }
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
    // The turn's span (GenAI `invoke_agent`), a child of whatever is active (the SendMessage call's span, a
    // recovery's), and the active one while the backend runs: its model, tool and outbound spans are its children.
    return serverTracer().startActiveSpan(
      `invoke_agent ${plan.actor.name}`,
      { kind: SpanKind.INTERNAL, attributes: this.turnAttributes(plan) },
      async (span) => {
        const measured = this.metrics.start({
          namespace: plan.scope.namespace,
          actor: plan.actor.name,
          backend: plan.backend.name,
        });
        let turn: DrivenTurn | undefined;
        let result: TurnResult | undefined;
        let crashed = false;
        try {
          turn = await this.prepare(bus, plan);
          if (turn.waitedMs > 0) span.setAttribute(CA_TURN_WAITED_SECONDS, turn.waitedMs / 1000);
          this.running.add(turn.running);
          try {
            if (plan.waitingSince !== undefined) this.running.announceTakenUp(plan.scope, plan.taskId);
            const ran = await this.runOn(turn, plan, measured);
            result = await this.rest(turn, plan, ran);
            return result;
          } finally {
            this.running.remove(turn.running);
            turn.settle();
          }
        } catch (err) {
          // A bug, not how a turn rests: its class name only (its message may say anything).
          crashed = true;
          span.setAttribute(CA_TURN_STATE, 'failed');
          span.setAttribute(ERROR_TYPE, err instanceof Error ? err.name : 'Error');
          span.setStatus({ code: SpanStatusCode.ERROR, message: 'the turn failed unexpectedly' });
          measured.finish('failed');
          throw err;
        } finally {
          if (!crashed) measured.finish(restOnSpan(span, turn, result));
          span.end();
        }
      },
    );
  }

  /** What the turn's span says of it from the start: who runs it, for whom, how it began. */
  private turnAttributes(plan: TurnPlan): Record<string, string> {
    const attributes: Record<string, string | undefined> = {
      [GEN_AI_OPERATION_NAME]: 'invoke_agent',
      [GEN_AI_AGENT_NAME]: plan.actor.name,
      [GEN_AI_CONVERSATION_ID]: plan.contextId,
      [CA_NAMESPACE]: plan.scope.namespace,
      [CA_SESSION]: plan.contextId,
      [CA_TASK_ID]: plan.taskId,
      [CA_ACTOR]: plan.actor.name,
      [CA_PROFILE]: plan.actor.profile,
      [CA_TURN_MODE]: plan.mode,
      [CA_BACKEND]: plan.backend.name,
      [GEN_AI_REQUEST_MODEL]:
        plan.actor.model?.model ?? (plan.backend.name === 'local' ? this.config.model.model : undefined),
    };
    const defined: Record<string, string> = {};
    for (const [key, value] of Object.entries(attributes)) if (typeof value === 'string') defined[key] = value;
    return defined;
  }

  /** The frame, meter, plan tracker and publisher of a turn about to run. */
  private async prepare(bus: ExecutionEventBus, plan: TurnPlan): Promise<DrivenTurn> {
    const { scope, taskId, contextId } = plan;
    const controller = new AbortController();
    // The wait this turn ends, as watched here, else (watched by another replica, or before a restart)
    // from when the stored task began to wait.
    const watched = this.waiting.stop(taskId);
    const waited = Math.max(watched, plan.waitingSince === undefined ? 0 : this.clock.now() - plan.waitingSince);
    let frame: TurnFrame | undefined;
    let problem: string | undefined;
    try {
      frame = await frameOf(this.sessions, this.plans, plan);
      // The gates a client asked its task to run under are the server's to grant, and on record.
      if (plan.mode === 'start' && frame.gates) {
        await this.sessions.recordGates(scope, contextId, { taskId, ...frame.gates });
      }
    } catch (err) {
      problem = err instanceof Error ? err.message : String(err);
    }
    const meter = new TurnMeter(this.clock, controller, frame, waited);
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
    const counter = new TurnUsage(this.usageTargets, scope, contextId, this.logger);
    // Written as the turn goes, so that a crash loses little of it; the plan's row first, if it is new.
    const countSoFar = (): Promise<void> => counter.write(meter.elapsed(), tracker.planId, tracker.flush());
    const publisher = new TurnPublisher(bus, taskId, contextId, `answer-${plan.message.messageId}`, {
      remember: (data) => this.runs.remember(scope, taskId, data),
      plan: (entries) => {
        const view = tracker.view(entries);
        void countSoFar(); // a plan made now is given what the turn used so far
        return view;
      },
      usage: (delta) => {
        meter.add(delta);
        void countSoFar();
      },
      now: () => this.clock.date(),
    });
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const running: RunningTurn = { scope, taskId, contextId, controller, publisher, settled };
    return { frame, problem, meter, tracker, publisher, countSoFar, running, settle, waitedMs: waited };
  }

  /** Runs the turn on its backend, unless it cannot start (no frame, a budget used up). */
  private async runOn(turn: DrivenTurn, plan: TurnPlan, measured: MeasuredTurn): Promise<TurnResult> {
    const { frame, meter, publisher } = turn;
    if (turn.problem !== undefined || !frame) {
      return { state: 'failed', reason: turn.problem ?? 'The turn could not be prepared.' };
    }
    const breach = meter.reachedBefore();
    if (breach) return { state: 'failed', reason: describeBreach(breach) };
    const wallTimer = meter.armWallTime();
    try {
      if (plan.mode === 'start' && frame.plan) publisher.plan(frame.plan.entries);
      return await plan.backend.run({
        taskId: plan.taskId,
        contextId: plan.contextId,
        namespace: plan.scope.namespace,
        owner: plan.scope.owner,
        actor: plan.actor,
        mode: plan.mode,
        input: turnInputOf(plan.message),
        setup: frame.setup,
        remembered: plan.remembered,
        subAgents: frame.subAgents,
        signal: turn.running.controller.signal,
        output: watchedOutput(publisher, () => measured.firstEvent()),
      });
    } catch (err) {
      turn.threw = err instanceof Error ? err.name : 'Error';
      this.logger.error(
        { msg: 'actor backend threw', backend: plan.backend.name, taskId: plan.taskId },
        err instanceof Error ? err : undefined,
      );
      return { state: 'failed', reason: 'The actor failed unexpectedly; the server log has the details.' };
    } finally {
      wallTimer?.cancel();
    }
  }

  /** Counts the turn, ends its run and publishes how it rested (nothing, when it let go here). */
  private async rest(turn: DrivenTurn, plan: TurnPlan, ran: TurnResult): Promise<TurnResult | undefined> {
    const { scope, taskId, contextId } = plan;
    const { meter, tracker, publisher, frame } = turn;
    await turn.countSoFar();
    const signal = turn.running.controller.signal;
    const reason: unknown = signal.aborted ? signal.reason : undefined;
    if (reason === TURN_DETACHED) return undefined;
    let result = ran;
    if (reason === TURN_CANCELED) result = { state: 'canceled' };
    if (reason === TURN_BUDGET && meter.breach) result = { state: 'failed', reason: describeBreach(meter.breach) };
    await this.runs
      .rest(scope, taskId)
      .catch((err: unknown) =>
        this.logger.warn({ msg: 'could not record the end of a turn', taskId, error: String(err) }),
      );
    await tracker.flush();
    result = await this.gateRecorded(scope, taskId, contextId, result, frame?.approvalTimeout);
    if (reason === TURN_PAUSED) {
      result = {
        state: 'input-required',
        text: `Plan ${tracker.planId ?? ''} is paused; resume it with _cleveragents/plan/resume.`,
      };
      publisher.finish(result, await tracker.settle('input-required'));
    } else {
      publisher.finish(result, await tracker.settle(result.state));
    }
    if (result.state === 'input-required') {
      this.waiting.start(scope, taskId, contextId, frame?.holders, meter.elapsed().wallTimeMs);
    }
    return result;
  }

  /** A turn resting at a gate: its approval-request recorded as an approval, published with the approval's id. */
  private async gateRecorded(
    scope: SessionScope,
    taskId: string,
    contextId: string,
    result: TurnResult,
    timeout: ApprovalTimeout | undefined,
  ): Promise<TurnResult> {
    if (result.state !== 'input-required') return result;
    if (result.foreign) {
      if (!result.asker) return result;
      try {
        const asked = await this.waiting.askApproval(scope, taskId, contextId, agentRequestOf(result), timeout);
        const gate = {
          approvalId: asked.approvalId ?? '',
          requestId: asked.requestId,
          ...(asked.expiresAt && asked.onTimeout ? { expiresAt: asked.expiresAt, onTimeout: asked.onTimeout } : {}),
        };
        return { ...result, gate };
      } catch (err) {
        this.logger.warn({ msg: 'could not record an approval', taskId, error: String(err) });
        return result;
      }
    }
    const asked = ApprovalRequest.safeParse(result.value);
    if (!asked.success) return result;
    try {
      return { ...result, value: await this.waiting.askApproval(scope, taskId, contextId, asked.data, timeout) };
    } catch (err) {
      // The gate still waits for its answer on the task; only the other clients do not see it.
      this.logger.warn({ msg: 'could not record an approval', taskId, error: String(err) });
      return result;
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
    if (this.running.has(scope, taskId) || this.waiting.has(taskId)) return;
    this.waiting.start(scope, taskId, contextId, undefined, 0, Math.min(since.getTime(), this.clock.now()));
  }

  private async cancel(taskId: string, bus: ExecutionEventBus): Promise<void> {
    if (await this.running.cancel(taskId)) return;
    // No turn running here: the task waits for input (its bus is kept alive). Cancel it as it stands.
    const waiting = this.waiting.get(taskId);
    const waited = this.waiting.stop(taskId);
    const parts = [textPart('Task canceled.')];
    if (waiting) {
      await this.waiting.endApproval(waiting.scope, taskId, 'canceled', 'The task was canceled');
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
      await this.waiting.endApproval(scope, before.id, 'canceled', 'The task was canceled');
      const since = waitingSinceOf(before);
      const plan = await this.plans.forTask(scope, before.id);
      if (since !== undefined) {
        const waited = Math.max(0, this.clock.now() - since);
        await this.waiting.count(scope, before.contextId, plan?.planId, { ...NO_USAGE, wallTimeMs: waited });
      }
      if (plan) await moveTaskPlan(this.plans, scope, plan, ['cancel'], before.id);
      // A replica holding the task's bus (its subscribers waiting there) is told, as of a turn taken up.
      this.running.announceTakenUp(scope, before.id);
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
    await this.running.detachAll();
    await this.runs
      .release()
      .catch((err: unknown) => this.logger.warn({ msg: 'could not give up task leases', error: String(err) }));
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.running.size > 0) await this.detachAll();
  }
}
