import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Message, TaskState, type Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { AppConfig } from '../config/app.config.js';
import { resolveStoreScope } from '../database/store-scope.js';
import { ActorBackends } from '../execution/actor-backends.js';
import {
  TURN_CANCELED,
  TURN_DETACHED,
  type ActorDefinition,
  type ActorTurn,
  type TurnBackend,
  type TurnResult,
} from '../execution/actor-turn.js';
import { SessionService, type SessionScope } from './session.service.js';
import { TaskRuns } from './task-runs.js';
import { statusEvent, submittedTask, textPart } from '../execution/agent-events.js';
import { TurnPublisher, turnInputOf } from './turn-publisher.js';

/** How long CancelTask waits for a backend to stop before it marks the task canceled anyway. */
const CANCEL_GRACE_MS = 10_000;

interface RunningTurn {
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
  /** Tasks whose turn rested waiting for input on this replica: their contextId, for a CancelTask. */
  private readonly waiting = new Map<string, string>();

  constructor(
    private readonly sessions: SessionService,
    private readonly backends: ActorBackends,
    private readonly runs: TaskRuns,
    private readonly config: AppConfig,
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
    });
  }

  /**
   * Runs one turn to rest and publishes how it rested. Resolves when the final status is on the bus
   * (or, when the server is stopping, when the turn let go: then nothing is published and the run
   * stays leased for recovery).
   */
  async drive(bus: ExecutionEventBus, plan: TurnPlan): Promise<TurnResult | undefined> {
    const { scope, taskId, contextId } = plan;
    const controller = new AbortController();
    const publisher = new TurnPublisher(bus, taskId, contextId, `answer-${plan.message.messageId}`, {
      remember: (data) => this.runs.remember(scope, taskId, data),
    });
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const key = runKey(scope, taskId);
    this.running.set(key, { controller, publisher, settled, contextId });
    this.waiting.delete(taskId);
    const turn: ActorTurn = {
      taskId,
      contextId,
      namespace: scope.namespace,
      owner: scope.owner,
      actor: plan.actor,
      mode: plan.mode,
      input: turnInputOf(plan.message),
      setup: { policy: { gate: 'autonomous', allowedTools: [] }, tools: [] },
      remembered: plan.remembered,
      signal: controller.signal,
      output: publisher,
    };
    let result: TurnResult;
    try {
      result = await plan.backend.run(turn);
    } catch (err) {
      this.logger.error(
        { msg: 'actor backend threw', backend: plan.backend.name, taskId },
        err instanceof Error ? err : undefined,
      );
      result = { state: 'failed', reason: 'The actor failed unexpectedly; the server log has the details.' };
    }
    try {
      if (controller.signal.aborted && controller.signal.reason === TURN_DETACHED) return undefined;
      if (controller.signal.aborted && controller.signal.reason === TURN_CANCELED) result = { state: 'canceled' };
      await this.runs
        .rest(scope, taskId)
        .catch((err: unknown) =>
          this.logger.warn({ msg: 'could not record the end of a turn', taskId, error: String(err) }),
        );
      publisher.finish(result);
      if (result.state === 'input-required') this.waiting.set(taskId, contextId);
      return result;
    } finally {
      this.running.delete(key);
      settle();
    }
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
    const contextId = this.waiting.get(taskId) ?? '';
    this.waiting.delete(taskId);
    bus.publish(statusEvent(taskId, contextId, TaskState.TASK_STATE_CANCELED, [textPart('Task canceled.')]));
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

function runKey(scope: SessionScope, taskId: string): string {
  return `${scope.namespace}\u0000${scope.owner}\u0000${taskId}`;
}
