import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Message, TaskState, type Task } from '@a2a-js/sdk';
import { isFinishedState } from '../database/finished-task.cache.js';
import { AgentEvent, ServerCallContext, type ExecutionEventBus } from '@a2a-js/sdk/server';
import { AppConfig } from '../config/app.config.js';
import { ownerCallContext } from '../database/store-scope.js';
import { TaskEventLog } from '../database/task-event-log.js';
import { TypeOrmTaskStore } from '../database/typeorm-task.store.js';
import { ActorBackends } from '../execution/actor-backends.js';
import type { ActorDefinition } from '../execution/actor-turn.js';
import { SessionEventBuses } from '../turn/session-event-buses.js';
import type { SessionScope } from '../session/session.service.js';
import { SessionWorkflow } from '../turn/session.workflow.js';
import { waitingSinceOf } from '../turn/waiting-tasks.js';
import { TaskRuns, type StaleRun } from '../turn/task-runs.js';
import { statusEvent, textPart } from '../execution/agent-events.js';
import { TakeOvers, type TakeOverOutcome } from './take-overs.js';

/** Whether a task has ended: the finished-task cache's own definition. */
function finished(task: Task): boolean {
  return isFinishedState(task.status?.state);
}

/**
 * Finishes what a dead process left (docs/protocol.md §5, §10). At boot and then every lease period, it takes
 * over the running turns whose lease expired — all of them on the embedded database, where no other
 * process can be running — and continues each on its backend (a remote run is re-joined, a local one
 * resumes from its checkpoint), or fails it with a reason when it cannot. Tasks left submitted or
 * working with no turn behind them are failed with a reason. Nothing is left hanging.
 */
@Injectable()
export class TaskRecovery implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(TaskRecovery.name);
  private timer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private stopped = false;
  private readonly bootedAt = new Date();
  /** Recovered turns still running: awaited at shutdown. */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly runs: TaskRuns,
    private readonly workflow: SessionWorkflow,
    private readonly backends: ActorBackends,
    private readonly buses: SessionEventBuses,
    private readonly tasks: TypeOrmTaskStore,
    private readonly config: AppConfig,
    private readonly log: TaskEventLog,
    private readonly takeOvers: TakeOvers,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const leaseMs = this.config.taskLeaseSeconds * 1000;
    this.heartbeat = setInterval(
      () => {
        this.runs
          .heartbeat(this.workflow.runningTasks())
          .catch((err: unknown) => this.logger.warn({ msg: 'lease heartbeat failed', error: String(err) }));
      },
      Math.max(500, leaseMs / 3),
    );
    this.heartbeat.unref();
    this.timer = setInterval(() => void this.sweep(false), leaseMs);
    this.timer.unref();
    // Awaited up to the point where each recovered task has its bus (before the server listens, so that a
    // SubscribeToTask finds it); the turns themselves run on in the background and stream as they go.
    await this.sweep(this.config.database.kind === 'embedded');
    // Tasks waiting for their client before the restart: their wall-time budgets go on running.
    try {
      for (const waiting of await this.runs.waiting()) {
        this.workflow.watchWaiting(waiting, waiting.taskId, waiting.contextId, waiting.since);
      }
    } catch (err) {
      this.logger.warn({ msg: 'could not watch the tasks waiting for their clients', error: String(err) });
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.heartbeat);
    await this.sweeping;
  }

  /** After the graceful shutdown detached the turns: their recoveries end without publishing more. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  /** One pass: take over stale runs, fail orphaned tasks. Passes never overlap. */
  sweep(all: boolean): Promise<void> {
    if (this.sweeping || this.stopped) return this.sweeping ?? Promise.resolve();
    this.sweeping = this.pass(all)
      .catch((err: unknown) => this.logger.error({ msg: 'task recovery pass failed', error: String(err) }))
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async pass(all: boolean): Promise<void> {
    for (const run of await this.runs.claimStale(all, this.workflow.runningTasks())) {
      if (this.stopped) return;
      const context = ownerCallContext({ namespace: run.namespace, owner: run.owner });
      const bus = this.buses.createOrGetByTaskId(run.taskId, context);
      const recovering = this.takeOvers
        .run(run, this.runs.replica, () => this.takeOver(run, context, bus))
        .catch((err: unknown) =>
          this.logger.error({ msg: 'task recovery failed', taskId: run.taskId, error: String(err) }),
        );
      this.inFlight.add(recovering);
      void recovering.finally(() => this.inFlight.delete(recovering));
    }
    // A task with no run record and no change since this process started (embedded: no other process
    // can be running it) or for two lease periods has no process behind it.
    const before = all ? this.bootedAt : new Date(Date.now() - this.config.taskLeaseSeconds * 2000);
    for (const orphan of await this.runs.orphans(before)) {
      if (this.stopped) return;
      await this.failOrphan(orphan);
    }
    await this.pruneLog();
  }

  /** Drops the events older than CLEVERAGENTS_EVENT_LOG_RETENTION_HOURS: every replica's pass does. */
  private async pruneLog(): Promise<void> {
    try {
      const dropped = await this.log.prune();
      if (dropped > 0) this.logger.log({ msg: 'dropped old task events', dropped });
    } catch (err) {
      this.logger.warn({ msg: 'could not drop old task events', error: String(err) });
    }
  }

  /**
   * Goes on with a task whose turn `plan/pause` stopped (`plan/resume`): its run is taken up again here
   * and continued as after a restart (a local run from its checkpoint, a remote one re-joined). Resolves
   * once the task's bus is open; the turn runs on in the background. False when it has no resting run.
   */
  async resumePaused(scope: SessionScope, taskId: string): Promise<boolean> {
    const run = await this.runs.retake(scope, taskId);
    if (!run) return false;
    const context = ownerCallContext(scope);
    const bus = this.buses.createOrGetByTaskId(run.taskId, context);
    const resuming = this.recover(run, context, bus).catch((err: unknown) =>
      this.logger.error({ msg: 'resuming a paused task failed', taskId, error: String(err) }),
    );
    this.inFlight.add(resuming);
    void resuming.finally(() => this.inFlight.delete(resuming));
    return true;
  }

  /** A run claimed from a replica that left it, recovered in its take-over's span (recorded as its trace). */
  private async takeOver(run: StaleRun, context: ServerCallContext, bus: ExecutionEventBus): Promise<TakeOverOutcome> {
    await this.runs.retrace({ namespace: run.namespace, owner: run.owner }, run.taskId).catch((err: unknown) =>
      this.logger.warn({
        msg: 'could not record where a take-over is traced',
        taskId: run.taskId,
        error: String(err),
      }),
    );
    return this.recover(run, context, bus);
  }

  /**
   * Continues one turn on the task's bus, whose recording stores each event in the task's log (and sends it
   * to the task's push webhooks) before anybody following the task is shown it, as for a request.
   */
  private async recover(run: StaleRun, context: ServerCallContext, bus: ExecutionEventBus): Promise<TakeOverOutcome> {
    const scope = { namespace: run.namespace, owner: run.owner };
    const task = await this.tasks.load(run.taskId, context);
    if (!task || finished(task)) {
      await this.runs.rest(scope, run.taskId);
      this.buses.finish(scope, run.taskId);
      return 'finished';
    }
    const message = Message.fromJSON(run.input);
    this.buses.recordingOf(scope, run.taskId)?.expect(message);
    const backend = this.backends.byName(run.backend);
    let state: TaskState | undefined;
    let outcome: TakeOverOutcome = 'resumed';
    bus.publish(AgentEvent.task(task));
    if (!backend) {
      outcome = 'unresumable';
      this.logger.warn({ msg: 'cannot resume a task: its backend is not configured', taskId: run.taskId });
      bus.publish(failed(task, this.unresumable(run.backend)));
      await this.runs.rest(scope, run.taskId);
    } else {
      this.logger.log({ msg: 'resuming a task left running', taskId: run.taskId, backend: run.backend });
      const result = await this.workflow.drive(bus, {
        scope,
        taskId: run.taskId,
        contextId: run.contextId,
        actor: run.actor as unknown as ActorDefinition,
        backend,
        mode: 'recover',
        message,
        remembered: run.remembered,
        // A paused task taken up again: its pause counts as a wait.
        waitingSince: waitingSinceOf(task),
      });
      state = result?.state === 'input-required' ? TaskState.TASK_STATE_INPUT_REQUIRED : undefined;
    }
    // As the SDK settles a request's bus: kept while the task waits for input, else closed (its recording
    // commits what it took first).
    if (state !== TaskState.TASK_STATE_INPUT_REQUIRED) this.buses.finish(scope, run.taskId);
    return outcome;
  }

  private unresumable(backend: string): string {
    return backend === 'conformance'
      ? 'The server stopped while this task was working; conformance actor runs cannot be resumed.'
      : `The server stopped while this task was working, and the ${backend} actor backend is not configured ` +
          `now (CLEVERAGENTS_ACTOR_BACKEND=${this.backends.name}), so it cannot be resumed.`;
  }

  private async failOrphan(orphan: SessionScope & { taskId: string }): Promise<void> {
    const context = ownerCallContext(orphan);
    const task = await this.tasks.load(orphan.taskId, context);
    if (!task || finished(task)) return;
    this.logger.warn({ msg: 'failing a task left working with no run behind it', taskId: orphan.taskId });
    await this.buses.publishAtRest(
      orphan,
      task,
      failed(task, 'The server stopped while this task was working, and its run could not be resumed.'),
    );
  }
}

function failed(task: Task, reason: string) {
  return statusEvent(task.id, task.contextId, TaskState.TASK_STATE_FAILED, [textPart(reason)]);
}
