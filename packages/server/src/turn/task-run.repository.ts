import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { StoreScope } from '../database/store-scope.js';
import type { TaskRunEntity } from './task-run.entity.js';

/** A run that a replica was working on and no longer holds: what recovery needs to go on with it. */
export interface StaleRun extends StoreScope {
  taskId: string;
  contextId: string;
  backend: string;
  actor: Record<string, unknown>;
  input: Record<string, unknown>;
  remembered: Record<string, unknown>;
  /** The traceparent of the span that started the run or last took it over, if it was traced. */
  traceParent?: string;
  /** The replica whose lease it was, when a replica held one. */
  previousOwner?: string;
}

/** A `task_runs` row as recovery reads it: the entity's columns, named as it names them. */
type RunRow = Pick<
  TaskRunEntity,
  'namespace' | 'owner' | 'taskId' | 'contextId' | 'backend' | 'actor' | 'input' | 'remembered' | 'traceParent'
> & { previousOwner?: string | null };

/** The columns of RunRow, of the table under `alias`. */
function runColumns(alias = 'task_runs'): string {
  return [
    'namespace',
    'owner',
    'task_id AS "taskId"',
    'context_id AS "contextId"',
    'backend',
    'actor',
    'input',
    'remembered',
    'trace_parent AS "traceParent"',
  ]
    .map((column) => `${alias}.${column}`)
    .join(', ');
}

function staleRunOf(row: RunRow): StaleRun {
  return {
    namespace: row.namespace,
    owner: row.owner,
    taskId: row.taskId,
    contextId: row.contextId,
    backend: row.backend,
    actor: row.actor,
    input: row.input,
    remembered: row.remembered,
    ...(row.traceParent ? { traceParent: row.traceParent } : {}),
    ...(row.previousOwner ? { previousOwner: row.previousOwner } : {}),
  };
}

/** A lease: who holds it (a replica id) and for how long from now. */
export interface Lease {
  replica: string;
  seconds: number;
}

/** A task of a scope. */
export type ScopedTask = StoreScope & { taskId: string };

/**
 * The `task_runs` table (and the reads that join it to `tasks`): the only place its SQL lives. Lease
 * writes are single statements, so that two replicas racing for a run never both get it.
 */
@Injectable()
export class TaskRunRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Records a turn starting (again) on the task, leased: what its backend remembered so far; undefined,
   * recording nothing, when the task's session is closed. The session row is key-share locked for it, so
   * that a session/close (which locks the row for update) either comes first and the turn is refused here,
   * or comes after and finds this run running.
   */
  async begin(
    scope: StoreScope,
    run: { taskId: string; contextId: string; backend: string; actor: object; input: object },
    lease: Lease,
    traceParent: string | null = null,
  ): Promise<Record<string, unknown> | undefined> {
    const rows: { remembered: Record<string, unknown> }[] = await this.dataSource.query(
      `WITH open_session AS (
         SELECT 1 FROM sessions WHERE namespace = $1 AND owner = $2 AND id = $4 AND status <> 'closed'
         FOR KEY SHARE)
       INSERT INTO task_runs (namespace, owner, task_id, context_id, backend, actor, state, input, remembered,
                              lease_owner, lease_expires_at, trace_parent)
       SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::jsonb, 'running', $7::jsonb, '{}'::jsonb,
              $8::text, now() + make_interval(secs => $9::double precision), $10::text
       FROM open_session
       ON CONFLICT (namespace, owner, task_id) DO UPDATE SET
         backend = EXCLUDED.backend, actor = EXCLUDED.actor, state = 'running', input = EXCLUDED.input,
         lease_owner = EXCLUDED.lease_owner, lease_expires_at = EXCLUDED.lease_expires_at,
         trace_parent = EXCLUDED.trace_parent, updated_at = now()
       RETURNING remembered`,
      [
        scope.namespace,
        scope.owner,
        run.taskId,
        run.contextId,
        run.backend,
        JSON.stringify(run.actor),
        JSON.stringify(run.input),
        lease.replica,
        lease.seconds,
        traceParent,
      ],
    );
    return rows[0]?.remembered;
  }

  /** Moves a resting run back to running, leased; undefined when the task has no resting run. */
  async retake(
    scope: StoreScope,
    taskId: string,
    lease: Lease,
    traceParent: string | null = null,
  ): Promise<StaleRun | undefined> {
    const rows: RunRow[] = await this.dataSource.query(
      `WITH taken AS (
         UPDATE task_runs SET state = 'running', lease_owner = $4,
           lease_expires_at = now() + make_interval(secs => $5), trace_parent = $6, updated_at = now()
         WHERE namespace = $1 AND owner = $2 AND task_id = $3 AND state = 'resting'
         RETURNING ${runColumns()})
       SELECT * FROM taken`,
      [scope.namespace, scope.owner, taskId, lease.replica, lease.seconds, traceParent],
    );
    return rows[0] ? staleRunOf(rows[0]) : undefined;
  }

  /** Moves a resting run to `expired`: true for the one caller whose statement moved it. */
  async expire(scope: StoreScope, taskId: string): Promise<boolean> {
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
  async remember(scope: StoreScope, taskId: string, data: Record<string, unknown>): Promise<void> {
    await this.dataSource.query(
      `UPDATE task_runs SET remembered = remembered || $4::jsonb, updated_at = now()
       WHERE namespace = $1 AND owner = $2 AND task_id = $3`,
      [scope.namespace, scope.owner, taskId, JSON.stringify(data)],
    );
  }

  /** The run rests: not running, no lease. */
  async rest(scope: StoreScope, taskId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE task_runs SET state = 'resting', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
       WHERE namespace = $1 AND owner = $2 AND task_id = $3`,
      [scope.namespace, scope.owner, taskId],
    );
  }

  /** The replica holding a live lease on the task's running run, if any. */
  async holderOf(scope: StoreScope, taskId: string): Promise<string | undefined> {
    const rows: { lease_owner: string }[] = await this.dataSource.query(
      `SELECT lease_owner FROM task_runs
       WHERE namespace = $1 AND owner = $2 AND task_id = $3 AND state = 'running' AND lease_expires_at > now()`,
      [scope.namespace, scope.owner, taskId],
    );
    return rows[0]?.lease_owner ?? undefined;
  }

  /** Whether the task's run is recorded running. */
  async isRunning(scope: StoreScope, taskId: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM task_runs WHERE namespace = $1 AND owner = $2 AND task_id = $3 AND state = 'running'`,
      [scope.namespace, scope.owner, taskId],
    );
    return rows.length > 0;
  }

  /** Extends `lease` on those of `running` that are still running under it. */
  async renew(lease: Lease, running: readonly ScopedTask[]): Promise<void> {
    await this.dataSource.query(
      `UPDATE task_runs SET lease_expires_at = now() + make_interval(secs => $2)
       WHERE lease_owner = $1 AND state = 'running'
         AND (namespace, owner, task_id) IN (SELECT * FROM unnest($3::text[], $4::text[], $5::text[]))`,
      [
        lease.replica,
        lease.seconds,
        running.map((r) => r.namespace),
        running.map((r) => r.owner),
        running.map((r) => r.taskId),
      ],
    );
  }

  /** Lets every running lease of `replica` expire now. */
  async releaseAll(replica: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE task_runs SET lease_expires_at = now() WHERE lease_owner = $1 AND state = 'running'`,
      [replica],
    );
  }

  /**
   * Leases to `lease.replica`, oldest first, up to `limit` running runs whose lease expired (every running
   * run, with `all`), except those of `excluded`; rows locked by another claim are skipped.
   */
  async claimStale(all: boolean, excluded: readonly ScopedTask[], limit: number, lease: Lease): Promise<StaleRun[]> {
    const rows: RunRow[] = await this.dataSource.query(
      // Through a CTE: TypeORM answers a bare UPDATE … RETURNING with [rows, count]. `stale` keeps the lease
      // holder the claim replaces; the trace_parent returned is the one the run had (a take-over writes its own).
      `WITH stale AS (
         SELECT namespace, owner, task_id, lease_owner FROM task_runs
         WHERE state = 'running' AND ($3 OR lease_expires_at IS NULL OR lease_expires_at < now())
           AND (namespace, owner, task_id) NOT IN (SELECT * FROM unnest($5::text[], $6::text[], $7::text[]))
         ORDER BY updated_at LIMIT $4 FOR UPDATE SKIP LOCKED),
       claimed AS (
         UPDATE task_runs r SET lease_owner = $1, lease_expires_at = now() + make_interval(secs => $2),
                                updated_at = now()
         FROM stale s
         WHERE r.namespace = s.namespace AND r.owner = s.owner AND r.task_id = s.task_id
         RETURNING ${runColumns('r')}, s.lease_owner AS "previousOwner")
       SELECT * FROM claimed`,
      [
        lease.replica,
        lease.seconds,
        all,
        limit,
        excluded.map((r) => r.namespace),
        excluded.map((r) => r.owner),
        excluded.map((r) => r.taskId),
      ],
    );
    return rows.map(staleRunOf);
  }

  /** Records the span that took over the run `lease.replica` holds, if the replica holds it still. */
  async retrace(scope: StoreScope, taskId: string, lease: Lease, traceParent: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE task_runs SET trace_parent = $4
       WHERE namespace = $1 AND owner = $2 AND task_id = $3 AND lease_owner = $5 AND state = 'running'`,
      [scope.namespace, scope.owner, taskId, traceParent, lease.replica],
    );
  }

  /**
   * Tasks left submitted or working, unchanged since `before`, with no running run and no run that
   * rested since `before`.
   */
  async orphans(before: Date, limit: number): Promise<ScopedTask[]> {
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

  /** Tasks waiting for input whose run rests, with when they began to wait. */
  async waiting(limit: number): Promise<(ScopedTask & { contextId: string; since: Date })[]> {
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
