import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app.config.js';
import { readWhileAvailable } from './database-retry.js';
import { queryRows } from './pool-query.js';
import { compareTaskKeys, taskRowParams, type TaskKey, type TaskRowWrite } from './task-rows.js';
import { QueryBatcher } from './query-batcher.js';

/** A task of one scope. */
export type TaskRef = TaskKey;

/** What one commit of a task's recording writes: the task as its events left it, and the events. */
export interface EventWrite extends TaskRowWrite {
  /** Each event's `StreamResponse` JSON, as text, in order. */
  events: string[];
}

/** What the commit gave the events: the sequence number of the last, and whether the task has push configs. */
export interface EventCommit {
  last: number;
  hasPush: boolean;
}

/** One stored event. */
export interface StoredEvent {
  seq: number;
  /** The `StreamResponse` JSON of the event. */
  event: Record<string, unknown>;
}

/** Where a task's log stands: the last event the task row includes, and the oldest still kept. */
export interface LogBounds {
  last: number;
  /** Undefined when no event is kept (none yet, or all dropped by retention). */
  oldest: number | undefined;
}

/**
 * One statement per batch of commits (each of a different task): every task row upserted with the task its
 * events left, its `last_sequence` moved on by the number of events, and the events stored under the numbers
 * that follows from; atomically, so that a task row never shows what its log does not hold. A task whose run is
 * leased to another replica is not written (the fence: that replica took the turn over), and its commit comes
 * back empty. Data-modifying CTEs all run, whatever the main query reads.
 */
const RECORD_MANY = `WITH w AS (
  SELECT * FROM ROWS FROM (unnest($1::text[]), unnest($2::text[]), unnest($3::text[]), unnest($4::text[]),
    unnest($5::text[]), unnest($6::timestamptz[]), jsonb_array_elements($7::jsonb), unnest($8::int[]),
    json_array_elements($9::json))
    AS w(namespace, owner, id, context_id, state, status_timestamp, task, n, events)
), t AS (
  INSERT INTO tasks AS x (namespace, owner, id, context_id, state, status_timestamp, task, last_sequence)
  SELECT namespace, owner, id, context_id, state, status_timestamp, task, n FROM w
  ON CONFLICT (namespace, owner, id) DO UPDATE SET
    context_id = EXCLUDED.context_id,
    state = EXCLUDED.state,
    status_timestamp = EXCLUDED.status_timestamp,
    task = EXCLUDED.task,
    last_sequence = x.last_sequence + EXCLUDED.last_sequence,
    updated_at = now()
  WHERE NOT EXISTS (SELECT 1 FROM task_runs r WHERE r.namespace = x.namespace AND r.owner = x.owner
    AND r.task_id = x.id AND r.state = 'running' AND r.lease_owner IS DISTINCT FROM $10)
  RETURNING x.namespace, x.owner, x.id, x.last_sequence, EXISTS (SELECT 1 FROM push_notification_configs p
    WHERE p.namespace = x.namespace AND p.owner = x.owner AND p.task_id = x.id) AS has_push
), e AS (
  INSERT INTO task_events (namespace, owner, task_id, seq, event)
  SELECT t.namespace, t.owner, t.id, t.last_sequence - w.n + v.ord, v.event
  FROM t JOIN w ON w.namespace = t.namespace AND w.owner = t.owner AND w.id = t.id
  CROSS JOIN LATERAL json_array_elements(w.events) WITH ORDINALITY AS v(event, ord)
)
SELECT namespace, owner, id, last_sequence, has_push FROM t`;

/**
 * A commit's write, taken when the statement carrying it is built: events published meanwhile still join it.
 * Called again (a retry), it gives the same write.
 */
export type WriteSource = () => EventWrite;

interface FencedWrite {
  take: WriteSource;
  replica: string;
}

interface CommitRow extends TaskRef {
  last_sequence: string | number;
  has_push?: boolean;
}

function refKey(ref: TaskRef): string {
  return `${ref.namespace}\u0000${ref.owner}\u0000${ref.id}`;
}

/** How many events a resumed stream reads from the log at once. */
export const LOG_PAGE = 500;

/**
 * The task event log (docs/execution.md, "The event log"): every event of a task, stored in order under its
 * sequence number by whoever runs the task's turn (TaskRecording), read back by a stream that resumes after the
 * last number its client saw, and kept within an age and a count per task.
 */
@Injectable()
export class TaskEventLog {
  private readonly commits: QueryBatcher<FencedWrite, CommitRow | undefined>;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(AppConfig)
    private readonly config: Pick<AppConfig, 'eventLogRetentionMs' | 'eventLogMaxPerTask' | 'databaseReadRetryMs'>,
  ) {
    // Concurrent turns share round trips, as their saves did: one statement for the commits of many tasks.
    this.commits = new QueryBatcher((writes) => this.recordAll(writes), { maxBatch: 100, maxInFlight: 4 });
  }

  /**
   * Stores the events of the write `take` gives, when the statement that carries it is built, after the task's
   * last ones and the task as they left it, fenced by `replica`: the commit, or undefined when another replica
   * holds the task's run (it took the turn over).
   */
  async record(take: WriteSource, replica: string): Promise<EventCommit | undefined> {
    const row = await this.commits.submit({ take, replica });
    if (!row) return undefined;
    const write = take();
    const last = Number(row.last_sequence);
    // Past the most it keeps of a task (only a task that long pays for it): its oldest go, in a statement of
    // their own over the task's key range.
    if (last > this.config.eventLogMaxPerTask) await this.trim(write, last - this.config.eventLogMaxPerTask);
    return { last, hasPush: row.has_push !== false };
  }

  /** Drops the events of `task` up to `upTo`. */
  private async trim(task: TaskRef, upTo: number): Promise<void> {
    await queryRows(
      this.dataSource,
      'DELETE FROM task_events WHERE namespace = $1 AND owner = $2 AND task_id = $3 AND seq <= $4',
      [task.namespace, task.owner, task.id, upTo],
    );
  }

  private async recordAll(fenced: readonly FencedWrite[]): Promise<(CommitRow | undefined)[]> {
    const writes = fenced.map((f) => f.take());
    const sorted = [...writes].sort(compareTaskKeys);
    // One process writes a batch: its replica fences every write of it.
    const replica = fenced[0].replica;
    const rows = await queryRows<CommitRow>(
      this.dataSource,
      RECORD_MANY,
      [
        ...taskRowParams(sorted),
        sorted.map((w) => w.events.length),
        `[${sorted.map((w) => `[${w.events.join(',')}]`).join(',')}]`,
        replica,
      ],
      'task_events_record',
    );
    const byKey = new Map(rows.map((row) => [refKey(row), row]));
    return writes.map((w) => byKey.get(refKey(w)));
  }

  /** The stored events of `task` after sequence `after`, in order, at most `limit`. */
  async after(task: TaskRef, after: number, limit = LOG_PAGE): Promise<StoredEvent[]> {
    const rows = await this.read('read task events', () =>
      queryRows<{ seq: string | number; event: Record<string, unknown> }>(
        this.dataSource,
        `SELECT seq, event FROM task_events WHERE namespace = $1 AND owner = $2 AND task_id = $3 AND seq > $4
         ORDER BY seq LIMIT $5`,
        [task.namespace, task.owner, task.id, after, limit],
      ),
    );
    return rows.map((row) => ({ seq: Number(row.seq), event: row.event }));
  }

  /**
   * The task as stored and the number of the last event it includes, read together (a snapshot a stream starts
   * with carries that number); undefined for a task that does not exist.
   */
  async snapshot(task: TaskRef): Promise<{ task: Record<string, unknown>; last: number } | undefined> {
    const rows = await this.read('read a task', () =>
      queryRows<{ task: Record<string, unknown>; last: string | number }>(
        this.dataSource,
        'SELECT task, last_sequence AS last FROM tasks WHERE namespace = $1 AND owner = $2 AND id = $3',
        [task.namespace, task.owner, task.id],
      ),
    );
    return rows.length === 0 ? undefined : { task: rows[0].task, last: Number(rows[0].last) };
  }

  /** Where `task`'s log stands; undefined for a task that does not exist. */
  async bounds(task: TaskRef): Promise<LogBounds | undefined> {
    const rows = await this.read("read a task's log", () =>
      queryRows<{ last: string | number; oldest: string | number | null }>(
        this.dataSource,
        `SELECT t.last_sequence AS last, (SELECT min(seq) FROM task_events e WHERE e.namespace = t.namespace
           AND e.owner = t.owner AND e.task_id = t.id) AS oldest
         FROM tasks t WHERE t.namespace = $1 AND t.owner = $2 AND t.id = $3`,
        [task.namespace, task.owner, task.id],
      ),
    );
    if (rows.length === 0) return undefined;
    const { last, oldest } = rows[0];
    return { last: Number(last), oldest: oldest === null ? undefined : Number(oldest) };
  }

  /** A read for a caller: answered at once with DATABASE_UNAVAILABLE in an outage (database-retry.ts). */
  private read<T>(what: string, attempt: () => Promise<T>): Promise<T> {
    return readWhileAvailable(what, this.config.databaseReadRetryMs, attempt);
  }

  /**
   * Drops events older than the retention period (CLEVERAGENTS_EVENT_LOG_RETENTION_HOURS), at most `limit` a
   * statement through their creation-time index, so that a pass never holds long locks; answers how many it
   * dropped. (The count per task is kept by every commit.)
   */
  async prune(limit = 10_000): Promise<number> {
    const rows = await queryRows<{ n: string | number }>(
      this.dataSource,
      `WITH d AS (DELETE FROM task_events WHERE ctid IN (SELECT ctid FROM task_events
         WHERE created_at < now() - make_interval(secs => $1) LIMIT $2) RETURNING 1)
       SELECT count(*) AS n FROM d`,
      [this.config.eventLogRetentionMs / 1000, limit],
    );
    return Number(rows[0]?.n ?? 0);
  }
}
