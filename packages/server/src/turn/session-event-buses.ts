import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  DefaultExecutionEventBus,
  type AgentExecutionEvent,
  type ExecutionEventBus,
  type ExecutionEventBusManager,
  type PushNotificationSender,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { AppConfig } from '../config/app.config.js';
import { retryWhileUnavailable } from '../database/database-retry.js';
import { ownerCallContext, resolveStoreScope, type StoreScope } from '../database/store-scope.js';
import { TaskEventLog, type TaskRef } from '../database/task-event-log.js';
import { GuardedPushNotificationSender } from '../push/guarded-push-notification.sender.js';
import { Task, type StreamResponse } from '@a2a-js/sdk';
import { isFinishedState } from '../database/finished-task.cache.js';
import { TaskRecording, type RecordedEvent, type RecordingPorts } from './task-recording.js';
import { RunningTurns } from './running-turns.js';
import { TaskRuns } from './task-runs.js';
import { TurnTaskStore } from './turn-task.store.js';

/** Someone following a task's events from outside the request that runs it (another replica, by relay). */
export interface BusWatcher {
  /** A committed event, carrying its sequence number. */
  event(response: StreamResponse): void;
  /** The bus finished or was cleaned up: no more events will come. Called once. */
  end(): void;
}

/**
 * The live event buses of running tasks, keyed by the task store's scope (so a tenant named or defaulted finds
 * one bus), each with its recording (TaskRecording), kept after a cleanup until what it took is committed.
 */
@Injectable()
export class SessionEventBuses implements ExecutionEventBusManager {
  private readonly logger = new Logger(SessionEventBuses.name);
  private readonly buses = new Map<string, ExecutionEventBus>();
  private readonly recordings = new Map<string, TaskRecording>();
  /** What to tell watchers when a bus is cleaned up (its listeners are then removed unannounced). */
  private readonly cleanups = new Map<string, Set<() => void>>();

  constructor(
    private readonly config: AppConfig,
    private readonly log: TaskEventLog,
    private readonly runs: TaskRuns,
    private readonly tasks: TurnTaskStore,
    private readonly running: RunningTurns,
    @Inject(GuardedPushNotificationSender) private readonly pushes: PushNotificationSender,
  ) {}

  /**
   * Stores an event of a task no turn is running for here (canceled or failed as it stands) through its
   * recording, so that its log holds it, and gives it to whoever follows the task here; a final status
   * closes the bus. Resolves once the event is committed; rejects when it could not be.
   */
  async publishAtRest(scope: StoreScope, task: Task, event: AgentExecutionEvent): Promise<void> {
    const context = ownerCallContext(scope);
    const bus = this.createOrGetByTaskId(task.id, context);
    const recording = this.recordingOf(scope, task.id);
    if (!recording) throw new Error(`task ${task.id} has a bus without its recording`);
    await recording.settled();
    recording.seed(structuredClone(task));
    bus.publish(event);
    await recording.settled();
    if (recording.lostWith !== undefined) throw recording.lostWith;
    if (event.kind === 'statusUpdate' && isFinishedState(event.data.status?.state)) this.finish(scope, task.id);
  }

  /** The recording of `scope`'s task `taskId` here, if its bus (or its last commits) still is. */
  recordingOf(scope: StoreScope, taskId: string): TaskRecording | undefined {
    return this.recordings.get(this.scopedKey(scope, taskId));
  }

  private record(key: string, scope: StoreScope, taskId: string, bus: ExecutionEventBus): void {
    const ref: TaskRef = { namespace: scope.namespace, owner: scope.owner, id: taskId };
    const context = ownerCallContext(scope);
    const ports: RecordingPorts = {
      // A turn's events wait out an outage up to CLEVERAGENTS_TURN_OUTAGE_SECONDS, fenced by this replica.
      commit: (take) =>
        retryWhileUnavailable("store a task's events", this.config.turnOutageMs, () =>
          this.log.record(take, this.runs.replica),
        ),
      read: (task, after) => this.log.after(task, after),
      committed: (events: RecordedEvent[], write, hasPush: boolean) => {
        this.tasks.committed(ref, write.state, write.json);
        if (!hasPush) return;
        const task = Task.fromJSON(JSON.parse(write.json));
        for (const event of events) void this.pushes.send(event.response, context, task);
      },
      lost: (lost, error) => {
        this.logger.warn({
          msg: "a task's events could not be stored: its turn lets go here",
          taskId,
          error: String(error),
        });
        if (this.recordings.get(key) === lost) this.recordings.delete(key);
        // Its bus goes with it: a turn that takes the task up again opens a new one, and a new recording.
        if (this.buses.get(key) === lost.bus) {
          lost.bus.finished();
          this.cleanup(key);
        }
        // The turn running it here lets go, publishing nothing: its run stays recorded, and is taken over.
        this.running.letGo(ref);
      },
    };
    const recording = new TaskRecording(ref, context, bus, ports);
    this.recordings.set(key, recording);
  }

  /** The task store's scope of a call: its tenant (or the caller's default namespace) and its user. */
  scopeOf(context: ServerCallContext | undefined): StoreScope {
    return resolveStoreScope(context, this.config.defaultNamespace);
  }

  private key(taskId: string, context: ServerCallContext | undefined): string {
    return this.scopedKey(resolveStoreScope(context, this.config.defaultNamespace), taskId);
  }

  private scopedKey(scope: StoreScope, taskId: string): string {
    return `${scope.namespace}\u0000${scope.owner}\u0000${taskId}`;
  }

  createOrGetByTaskId(taskId: string, context?: ServerCallContext): ExecutionEventBus {
    const scope = resolveStoreScope(context, this.config.defaultNamespace);
    const key = this.scopedKey(scope, taskId);
    let bus = this.buses.get(key);
    if (!bus) {
      bus = new DefaultExecutionEventBus();
      this.buses.set(key, bus);
      this.record(key, scope, taskId, bus);
    }
    return bus;
  }

  getByTaskId(taskId: string, context?: ServerCallContext): ExecutionEventBus | undefined {
    return this.buses.get(this.key(taskId, context));
  }

  cleanupByTaskId(taskId: string, context?: ServerCallContext): void {
    this.cleanup(this.key(taskId, context));
  }

  /** The live bus of `scope`'s task `taskId` here, if any. */
  busOf(scope: StoreScope, taskId: string): ExecutionEventBus | undefined {
    return this.buses.get(this.scopedKey(scope, taskId));
  }

  /** Closes and forgets the bus of `scope`'s task `taskId`, as the SDK's cleanup does. */
  finish(scope: StoreScope, taskId: string): void {
    const key = this.scopedKey(scope, taskId);
    this.buses.get(key)?.finished();
    this.cleanup(key);
  }

  private cleanup(key: string): void {
    const ends = this.cleanups.get(key);
    this.cleanups.delete(key);
    for (const end of ends ?? []) end();
    const recording = this.recordings.get(key);
    if (recording) {
      recording.stop();
      // Kept for its followers until what it took is committed, unless a new bus of the task replaced it.
      void recording.settled().finally(() => {
        if (this.recordings.get(key) === recording && !this.buses.has(key)) this.recordings.delete(key);
      });
    }
    this.buses.get(key)?.removeAllListeners();
    this.buses.delete(key);
  }

  /**
   * Follows `scope`'s task `taskId` here: every event its recording commits from now on, each with its sequence
   * number, then `end` once the stream ends (after a final or input-required status, or the bus closing with
   * nothing left to commit). Returns what stops following it, or undefined when the task has no live bus here.
   */
  watch(scope: StoreScope, taskId: string, watcher: BusWatcher): (() => void) | undefined {
    const key = this.scopedKey(scope, taskId);
    const recording = this.recordings.get(key);
    if (!this.buses.has(key) || !recording) return undefined;
    const watch = { on: true };
    const from = recording.position;
    void (async () => {
      try {
        for await (const event of recording.follow(from)) {
          if (!watch.on) return;
          watcher.event(event.response);
        }
      } catch (err) {
        this.logger.warn({ msg: 'a watched task lost its recording', taskId, error: String(err) });
      }
      if (watch.on) {
        watch.on = false;
        watcher.end();
      }
    })();
    return () => {
      watch.on = false;
    };
  }

  /** How many tasks have a live bus (diagnostics, tests). */
  get size(): number {
    return this.buses.size;
  }
}
