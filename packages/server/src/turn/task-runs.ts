import { Injectable } from '@nestjs/common';
import { ulid } from '../common/ulid.js';
import { AppConfig } from '../config/app.config.js';
import { retryWhileUnavailable } from '../database/database-retry.js';
import type { SessionScope } from '../session/session.service.js';
import { traceParentToStore } from '../telemetry/stored-trace.js';
import { TaskRunRepository, type Lease, type ScopedTask, type StaleRun } from './task-run.repository.js';

export type { StaleRun } from './task-run.repository.js';

/**
 * Task runs: which backend runs each task, what it asked to remember, and a lease. A replica holds the
 * lease of every turn it is running and renews it (`heartbeat`); a lease that expired belongs to a
 * replica that died, and another (or the same one, restarted) takes the run over (`claimStale`). On the
 * embedded database only one process can run, so every running row is stale at boot. The rows are
 * TaskRunRepository's.
 */
@Injectable()
export class TaskRuns {
  /** This process, as lease holder. */
  readonly replica = ulid();

  constructor(
    private readonly repository: TaskRunRepository,
    private readonly config: AppConfig,
  ) {}

  /** A lease held by this replica, for the configured lease period. */
  private get lease(): Lease {
    return { replica: this.replica, seconds: this.config.taskLeaseSeconds };
  }

  /**
   * Records that a turn starts (or starts again) on `taskId`, leased to this replica, with the active span
   * (the call that sent its message) as where it started in a trace. Returns what the backend remembered on
   * the task's earlier turns; undefined, recording nothing, when the task's session has been closed since
   * the turn read it.
   */
  begin(
    scope: SessionScope,
    run: { taskId: string; contextId: string; backend: string; actor: object; input: object },
  ): Promise<Record<string, unknown> | undefined> {
    const traceParent = traceParentToStore();
    return this.retried('record a turn', () => this.repository.begin(scope, run, this.lease, traceParent));
  }

  /**
   * Takes up again, leased to this replica, a task's run that rests (a plan paused mid-turn): what its
   * recovery needs, or undefined when the task has no resting run.
   */
  retake(scope: SessionScope, taskId: string): Promise<StaleRun | undefined> {
    return this.repository.retake(scope, taskId, this.lease, traceParentToStore());
  }

  /**
   * Records the active span (a take-over's) as where the run this replica claimed now goes on, so that a
   * later take-over links to it; writes nothing when nothing records.
   */
  async retrace(scope: SessionScope, taskId: string): Promise<void> {
    const traceParent = traceParentToStore();
    if (traceParent === null) return;
    await this.repository.retrace(scope, taskId, this.lease, traceParent);
  }

  /**
   * Claims the end of a task whose client took too long to answer (its wall-time budget ran out while it
   * waited): true for the one replica whose claim moved its resting run to `expired`. Every replica that
   * watched the wait may try; only one counts the wait and fails the task.
   */
  claimExpiry(scope: SessionScope, taskId: string): Promise<boolean> {
    return this.repository.expire(scope, taskId);
  }

  /** Merges `data` into what the task's backend remembers; a running turn's write waits out an outage. */
  async remember(scope: SessionScope, taskId: string, data: Record<string, unknown>): Promise<void> {
    await this.turnRetried('remember for a turn', () => this.repository.remember(scope, taskId, data));
  }

  /** The turn rested (finished, or waits for input): nothing to recover, no lease. Waits out an outage. */
  async rest(scope: SessionScope, taskId: string): Promise<void> {
    await this.turnRetried('record the end of a turn', () => this.repository.rest(scope, taskId));
  }

  /** The replica holding a live lease on the task's running turn, if any. */
  holderOf(scope: SessionScope, taskId: string): Promise<string | undefined> {
    return this.repository.holderOf(scope, taskId);
  }

  /** Whether the task's run is recorded running (its turn under way, or left by a replica that died). */
  isRunning(scope: SessionScope, taskId: string): Promise<boolean> {
    return this.repository.isRunning(scope, taskId);
  }

  /**
   * Renews this replica's leases on the turns it is running (`running`): a run whose turn ended here
   * but could not be marked resting (the database was away) lets its lease lapse, and a sweep settles it.
   */
  async heartbeat(running: readonly ScopedTask[]): Promise<void> {
    if (running.length === 0) return;
    await this.repository.renew(this.lease, running);
  }

  /** Idempotent run-state writes wait out a database blip (CLEVERAGENTS_DATABASE_RETRY_SECONDS). */
  private retried<T>(what: string, write: () => Promise<T>): Promise<T> {
    return retryWhileUnavailable(what, this.config.databaseRetryMs, write);
  }

  /**
   * Writes of a turn under way wait as long as its events do (CLEVERAGENTS_TURN_OUTAGE_SECONDS): a turn whose
   * model answered while the database was away goes on once it is back.
   */
  private turnRetried<T>(what: string, write: () => Promise<T>): Promise<T> {
    return retryWhileUnavailable(what, this.config.turnOutageMs, write);
  }

  /** Gives this replica's leases up at once (shutdown), so that another replica takes the runs over. */
  release(): Promise<void> {
    return this.repository.releaseAll(this.replica);
  }

  /**
   * Takes over running turns whose lease expired (every running turn, with `all`), up to `limit`; this
   * replica's own among them too (a turn that ended here while the database was away), but never one of
   * the turns it runs now (`runningHere`).
   */
  claimStale(all: boolean, runningHere: readonly ScopedTask[] = [], limit = 100): Promise<StaleRun[]> {
    return this.repository.claimStale(all, runningHere, limit, this.lease);
  }

  /**
   * Tasks left submitted or working with no running turn behind them (the conformance actor keeps no
   * run; a task whose process died before its run was recorded), unchanged since `before`, as is its run.
   */
  orphans(before: Date, limit = 100): Promise<ScopedTask[]> {
    return this.repository.orphans(before, limit);
  }

  /**
   * Tasks waiting for their client (INPUT_REQUIRED, their run resting), with the time they started
   * waiting: found as `orphans` finds its tasks, through the counters and the state index.
   */
  waiting(limit = 10_000): Promise<(ScopedTask & { contextId: string; since: Date })[]> {
    return this.repository.waiting(limit);
  }
}
