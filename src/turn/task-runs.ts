import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ulid } from 'ulid';
import { AppConfig } from '../config/app.config.js';
import { retryWhileUnavailable } from '../database/database-retry.js';
import type { SessionScope } from '../session/session.service.js';

/** A run that a replica was working on and no longer holds: what recovery needs to go on with it. */
export interface StaleRun extends SessionScope {
  taskId: string;
  contextId: string;
  backend: string;
  actor: Record<string, unknown>;
  input: Record<string, unknown>;
  remembered: Record<string, unknown>;
}

/** A `task_runs` row as recovery reads it. */
interface RunRow {
  namespace: string;
  owner: string;
  task_id: string;
  context_id: string;
  backend: string;
  actor: Record<string, unknown>;
  input: Record<string, unknown>;
  remembered: Record<string, unknown>;
}

const RUN_COLUMNS = 'namespace, owner, task_id, context_id, backend, actor, input, remembered';

function toStaleRun(row: RunRow): StaleRun {
  return {
    namespace: row.namespace,
    owner: row.owner,
    taskId: row.task_id,
    contextId: row.context_id,
    backend: row.backend,
    actor: row.actor,
    input: row.input,
    remembered: row.remembered,
  };
}

/**
 * The `task_runs` table: which backend runs each task, what it asked to remember, and a lease. A
 * replica holds the lease of every turn it is running and renews it (`heartbeat`); a lease that
 * expired belongs to a replica that died, and another (or the same one, restarted) takes the run over
 * (`claimStale`). On the embedded database only one process can run, so every running row is stale
 * at boot.
 */
@Injectable()
export class TaskRuns {
  /** This process, as lease holder. */
  readonly replica = ulid();

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  private get leaseSeconds(): number {
    return this.config.taskLeaseSeconds;
  }

  /**
   * Records that a turn starts (or starts again) on `taskId`, leased to this replica. Returns what the
   * backend remembered on the task's earlier turns.
   */
  async begin(
    scope: SessionScope,
    run: { taskId: string; contextId: string; backend: string; actor: object; input: object },
  ): Promise<Record<string, unknown>> {
    const rows: { remembered: Record<string, unknown> }[] = await this.retried('record a turn', () =>
      this.dataSource.query(
        `INSERT INTO task_runs (namespace, owner, task_id, context_id, backend, actor, state, input, remembered,
                              lease_owner, lease_expires_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, 'running', $7::jsonb, '{}'::jsonb, $8,
               now() + make_interval(secs => $9))
       ON CONFLICT (namespace, owner, task_id) DO UPDATE SET
         backend = EXCLUDED.backend, actor = EXCLUDED.actor, state = 'running', input = EXCLUDED.input,
         lease_owner = EXCLUDED.lease_owner, lease_expires_at = EXCLUDED.lease_expires_at, updated_at = now()
       RETURNING remembered`,
        [
          scope.namespace,
          scope.owner,
          run.taskId,
          run.contextId,
          run.backend,
          JSON.stringify(run.actor),
          JSON.stringify(run.input),
          this.replica,
          this.leaseSeconds,
        ],
      ),
    );
    return rows[0]?.remembered ?? {};
  }

  /**
   * Takes up again, leased to this replica, a task's run that rests (a plan paused mid-turn): what its
   * recovery needs, or undefined when the task has no resting run.
   */
  async retake(scope: SessionScope, taskId: string): Promise<StaleRun | undefined> {
    const rows: RunRow[] = await this.dataSource.query(
      `WITH taken AS (
         UPDATE task_runs SET state = 'running', lease_owner = $4,
           lease_expires_at = now() + make_interval(secs => $5), updated_at = now()
         WHERE namespace = $1 AND owner = $2 AND task_id = $3 AND state = 'resting'
         RETURNING ${RUN_COLUMNS})
       SELECT * FROM taken`,
      [scope.namespace, scope.owner, taskId, this.replica, this.leaseSeconds],
    );
    return rows[0] ? toStaleRun(rows[0]) : undefined;
  }

  /**
   * Claims the end of a task whose client took too long to answer (its wall-time budget ran out while it
   * waited): true for the one replica whose claim moved its resting run to `expired`. Every replica that
   * watched the wait may try; only one counts the wait and fails the task.
   */
  async claimExpiry(scope: SessionScope, taskId: string): Promise<boolean> {
    // A SELECT around the UPDATE: TypeORM answers a bare UPDATE … RETURNING with [rows, count].
    const rows: unknown[] = await this.dataSource.query(
      `WITH claimed AS (
         UPDATE task_runs SET state = 'expired', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
         WHERE namespace = $1 AND owner = $2 AND task_id = $3 AND state = 'resting'
         RETURNING task_id)
       SELECT task_id FROM claimed`,
      [scope.namespace, scope.owner, taskId],
    );
    return rows.length > 0;
  }

  /** Merges `data` into what the task's backend remembers. */
  async remember(scope: SessionScope, taskId: string, data: Record<string, unknown>): Promise<void> {
    await this.retried('remember for a turn', () =>
      this.dataSource.query(
        `UPDATE task_runs SET remembered = remembered || $4::jsonb, updated_at = now()
         WHERE namespace = $1 AND owner = $2 AND task_id = $3`,
        [scope.namespace, scope.owner, taskId, JSON.stringify(data)],
      ),
    );
  }

  /** The turn rested (finished, or waits for input): nothing to recover, no lease. */
  async rest(scope: SessionScope, taskId: string): Promise<void> {
    await this.retried('record the end of a turn', () =>
      this.dataSource.query(
        `UPDATE task_runs SET state = 'resting', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
         WHERE namespace = $1 AND owner = $2 AND task_id = $3`,
        [scope.namespace, scope.owner, taskId],
      ),
    );
  }

  /** The replica holding a live lease on the task's running turn, if any. */
  async holderOf(scope: SessionScope, taskId: string): Promise<string | undefined> {
    const rows: { lease_owner: string }[] = await this.dataSource.query(
      `SELECT lease_owner FROM task_runs
       WHERE namespace = $1 AND owner = $2 AND task_id = $3 AND state = 'running' AND lease_expires_at > now()`,
      [scope.namespace, scope.owner, taskId],
    );
    return rows[0]?.lease_owner ?? undefined;
  }

  /** Whether the task's run is recorded running (its turn under way, or left by a replica that died). */
  async isRunning(scope: SessionScope, taskId: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM task_runs WHERE namespace = $1 AND owner = $2 AND task_id = $3 AND state = 'running'`,
      [scope.namespace, scope.owner, taskId],
    );
    return rows.length > 0;
  }

  /**
   * Renews this replica's leases on the turns it is running (`running`): a run whose turn ended here
   * but could not be marked resting (the database was away) lets its lease lapse, and a sweep settles it.
   */
  async heartbeat(running: readonly (SessionScope & { taskId: string })[]): Promise<void> {
    if (running.length === 0) return;
    await this.dataSource.query(
      `UPDATE task_runs SET lease_expires_at = now() + make_interval(secs => $2)
       WHERE lease_owner = $1 AND state = 'running'
         AND (namespace, owner, task_id) IN (SELECT * FROM unnest($3::text[], $4::text[], $5::text[]))`,
      [
        this.replica,
        this.leaseSeconds,
        running.map((r) => r.namespace),
        running.map((r) => r.owner),
        running.map((r) => r.taskId),
      ],
    );
  }

  /** Idempotent run-state writes wait out a database blip (CLEVERAGENTS_DATABASE_RETRY_SECONDS). */
  private retried<T>(what: string, write: () => Promise<T>): Promise<T> {
    return retryWhileUnavailable(what, this.config.databaseRetryMs, write);
  }

  /** Gives this replica's leases up at once (shutdown), so that another replica takes the runs over. */
  async release(): Promise<void> {
    await this.dataSource.query(
      `UPDATE task_runs SET lease_expires_at = now() WHERE lease_owner = $1 AND state = 'running'`,
      [this.replica],
    );
  }

  /**
   * Takes over running turns whose lease expired (every running turn, with `all`), up to `limit`; this
   * replica's own among them too (a turn that ended here while the database was away), but never one of
   * the turns it runs now (`runningHere`).
   */
  async claimStale(all: boolean, runningHere: readonly (SessionScope & { taskId: string })[] = [], limit = 100) {
    const rows: RunRow[] = await this.dataSource.query(
      // Through a CTE: TypeORM answers a bare UPDATE … RETURNING with [rows, count].
      `WITH claimed AS (
         UPDATE task_runs SET lease_owner = $1, lease_expires_at = now() + make_interval(secs => $2),
                              updated_at = now()
         WHERE (namespace, owner, task_id) IN (
           SELECT namespace, owner, task_id FROM task_runs
           WHERE state = 'running' AND ($3 OR lease_expires_at IS NULL OR lease_expires_at < now())
             AND (namespace, owner, task_id) NOT IN (SELECT * FROM unnest($5::text[], $6::text[], $7::text[]))
           ORDER BY updated_at LIMIT $4 FOR UPDATE SKIP LOCKED)
         RETURNING ${RUN_COLUMNS})
       SELECT * FROM claimed`,
      [
        this.replica,
        this.leaseSeconds,
        all,
        limit,
        runningHere.map((r) => r.namespace),
        runningHere.map((r) => r.owner),
        runningHere.map((r) => r.taskId),
      ],
    );
    return rows.map(toStaleRun);
  }

  /**
   * Tasks left submitted or working with no running turn behind them (the conformance actor keeps no
   * run; a task whose process died before its run was recorded), unchanged since `before`, as is its run.
   */
  async orphans(before: Date, limit = 100): Promise<(SessionScope & { taskId: string })[]> {
    const rows: { namespace: string; owner: string; id: string }[] = await this.dataSource.query(
      // The scopes holding unfinished tasks come from the counters; within each, the state index finds
      // them: no scan of the whole table, and no index of its own to keep up on every task write.
      `SELECT t.namespace, t.owner, t.id FROM
         (SELECT namespace, owner, state FROM task_counts
          WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')
          GROUP BY namespace, owner, state HAVING sum(count) > 0) s
         CROSS JOIN LATERAL (
           SELECT namespace, owner, id, updated_at FROM tasks
           WHERE namespace = s.namespace AND owner = s.owner AND state = s.state AND updated_at < $1::timestamptz
         ) t
       -- A run that rested since \`before\` had a turn behind it lately: its last events may still be on
       -- their way (stored once the database is back after an outage).
       WHERE NOT EXISTS (SELECT 1 FROM task_runs r WHERE r.namespace = t.namespace AND r.owner = t.owner
                         AND r.task_id = t.id AND (r.state = 'running' OR r.updated_at >= $1::timestamptz))
       ORDER BY t.updated_at LIMIT $2`,
      [before.toISOString(), limit],
    );
    return rows.map((r) => ({ namespace: r.namespace, owner: r.owner, taskId: r.id }));
  }

  /**
   * Tasks waiting for their client (INPUT_REQUIRED, their run resting), with the time they started
   * waiting: found as `orphans` finds its tasks, through the counters and the state index.
   */
  async waiting(limit = 10_000): Promise<(SessionScope & { taskId: string; contextId: string; since: Date })[]> {
    const rows: { namespace: string; owner: string; id: string; context_id: string; since: Date }[] =
      await this.dataSource.query(
        `SELECT t.namespace, t.owner, t.id, t.context_id, t.since FROM
           (SELECT namespace, owner FROM task_counts WHERE state = 'TASK_STATE_INPUT_REQUIRED'
            GROUP BY namespace, owner HAVING sum(count) > 0) s
           CROSS JOIN LATERAL (
             SELECT namespace, owner, id, context_id,
               CASE WHEN isfinite(status_timestamp) THEN status_timestamp ELSE updated_at END AS since
             FROM tasks WHERE namespace = s.namespace AND owner = s.owner AND state = 'TASK_STATE_INPUT_REQUIRED'
           ) t
         WHERE EXISTS (SELECT 1 FROM task_runs r WHERE r.namespace = t.namespace AND r.owner = t.owner
                       AND r.task_id = t.id AND r.state = 'resting')
         LIMIT $1`,
        [limit],
      );
    return rows.map((r) => ({
      namespace: r.namespace,
      owner: r.owner,
      taskId: r.id,
      contextId: r.context_id,
      since: new Date(r.since),
    }));
  }
}
