import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Subject, type Observable } from 'rxjs';
import { Clock } from '../common/clock.js';
import { TURN_CANCELED, TURN_DETACHED, TURN_PAUSED } from '../execution/actor-turn.js';
import type { SessionScope } from '../session/session.service.js';
import type { TurnPublisher } from './turn-publisher.js';

/** How long CancelTask waits for a backend to stop before it marks the task canceled anyway. */
const CANCEL_GRACE_MS = 10_000;

/** A turn running on this replica: what stops it, and when it has stopped. */
export interface RunningTurn {
  scope: SessionScope;
  taskId: string;
  contextId: string;
  controller: AbortController;
  publisher: TurnPublisher;
  settled: Promise<void>;
}

/** A task of a scope. */
export interface ScopedTaskId {
  scope: SessionScope;
  taskId: string;
}

/**
 * The turns running on this replica, and the one way to stop them: CancelTask, `plan/pause`, a lost recording,
 * the shutdown. Also tells (`takenUp`) of each waiting task a turn here took up, for the other replicas.
 */
@Injectable()
export class RunningTurns implements OnApplicationShutdown {
  private readonly logger = new Logger(RunningTurns.name);
  private readonly running = new Map<string, RunningTurn>();
  private readonly tookUp = new Subject<ScopedTaskId>();

  /** Each task that was waiting for input (or canceled as it stood) and that this replica took up. */
  readonly takenUp: Observable<ScopedTaskId> = this.tookUp.asObservable();

  constructor(private readonly clock: Clock) {}

  onApplicationShutdown(): void {
    this.tookUp.complete();
  }

  add(turn: RunningTurn): void {
    this.running.set(runKey(turn.scope, turn.taskId), turn);
  }

  remove(turn: RunningTurn): void {
    const key = runKey(turn.scope, turn.taskId);
    if (this.running.get(key) === turn) this.running.delete(key);
  }

  has(scope: SessionScope, taskId: string): boolean {
    return this.running.has(runKey(scope, taskId));
  }

  /**
   * The task's recording was lost (the database away past CLEVERAGENTS_TURN_OUTAGE_SECONDS, or the task taken
   * over elsewhere): its turn here lets go (TURN_DETACHED), publishing nothing.
   */
  letGo(ref: SessionScope & { id: string }): void {
    this.running.get(runKey(ref, ref.id))?.controller.abort(TURN_DETACHED);
  }

  /** Tells the other replicas that a task waiting for input (or canceled at rest) was taken up here. */
  announceTakenUp(scope: SessionScope, taskId: string): void {
    this.tookUp.next({ scope, taskId });
  }

  /**
   * `plan/pause` of a task whose turn runs here: the turn stops where it is (TURN_PAUSED) and the task rests
   * waiting. Resolves once the turn settled: true, or false when no turn of it runs here.
   */
  pauseHere(scope: SessionScope, taskId: string): Promise<boolean> {
    const turn = this.running.get(runKey(scope, taskId));
    if (!turn) return Promise.resolve(false);
    turn.controller.abort(TURN_PAUSED);
    return turn.settled.then(() => true);
  }

  /** Cancels the task's turn if it runs here (a request relayed by another replica). */
  cancelHere(scope: SessionScope, taskId: string): boolean {
    const turn = this.running.get(runKey(scope, taskId));
    if (!turn) return false;
    turn.controller.abort(TURN_CANCELED);
    return true;
  }

  /**
   * CancelTask of a task whose turn runs here (found by id, as the SDK's executor is asked): the turn stops,
   * or after CANCEL_GRACE_MS is shown canceled anyway. False when no turn of it runs here.
   */
  async cancel(taskId: string): Promise<boolean> {
    const turn = [...this.running.values()].find((t) => t.taskId === taskId);
    if (!turn) return false;
    turn.controller.abort(TURN_CANCELED);
    if (!(await this.clock.within(CANCEL_GRACE_MS, turn.settled))) {
      this.logger.warn({ msg: 'actor backend did not stop within the cancel grace period', taskId });
      turn.publisher.finish({ state: 'canceled' });
    }
    return true;
  }

  /** How many turns run here (graceful shutdown, diagnostics, tests). */
  get size(): number {
    return this.running.size;
  }

  /** The tasks whose turns run here now: the leases this replica renews. */
  tasks(): (SessionScope & { taskId: string })[] {
    return [...this.running.values()].map((turn) => ({ ...turn.scope, taskId: turn.taskId }));
  }

  /** Lets go of every running turn (TURN_DETACHED): resolves once each has settled, publishing nothing. */
  async detachAll(): Promise<void> {
    const turns = [...this.running.values()];
    for (const turn of turns) turn.controller.abort(TURN_DETACHED);
    await Promise.all(turns.map((t) => t.settled));
  }
}

function runKey(scope: SessionScope, taskId: string): string {
  return `${scope.namespace}\u0000${scope.owner}\u0000${taskId}`;
}
