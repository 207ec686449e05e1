import { Task, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { ListTasksRequest, ListTasksResponse } from '@a2a-js/sdk';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app.config.js';
import { DatabaseNotifications } from './database-notifications.js';
import { FinishedTaskCache } from './finished-task.cache.js';
import { queryRows } from './pool-query.js';
import { QueryBatcher } from './query-batcher.js';
import { BehindSaves, type BehindWriter } from './behind-saves.js';
import { readWhileAvailable, retryWhileUnavailable } from './database-retry.js';
import { resolveStoreScope, type StoreScope } from './store-scope.js';
import {
  encodePageToken,
  NO_TIMESTAMP,
  taskCountQuery,
  taskListQuery,
  toSqlTimestamp,
  type TaskColumnForm,
} from './task-list.query.js';

export const DEFAULT_LIST_PAGE_SIZE = 50;
export const MAX_LIST_PAGE_SIZE = 100;

interface TaskKey {
  namespace: string;
  owner: string;
  id: string;
}

function cacheKey(key: TaskKey): string {
  return `${key.namespace}\u0000${key.owner}\u0000${key.id}`;
}

function compareKeys(a: TaskKey, b: TaskKey): number {
  return a.namespace < b.namespace
    ? -1
    : a.namespace > b.namespace
      ? 1
      : a.owner < b.owner
        ? -1
        : a.owner > b.owner
          ? 1
          : a.id < b.id
            ? -1
            : a.id > b.id
              ? 1
              : 0;
}

interface TaskWrite extends TaskKey {
  contextId: string;
  state: string;
  statusTimestamp: string;
  json: string;
}

const UPSERT_SET = `ON CONFLICT (namespace, owner, id) DO UPDATE SET
  context_id = EXCLUDED.context_id,
  state = EXCLUDED.state,
  status_timestamp = EXCLUDED.status_timestamp,
  task = EXCLUDED.task,
  updated_at = now()
RETURNING namespace, owner, id, EXISTS (SELECT 1 FROM push_notification_configs p
  WHERE p.namespace = tasks.namespace AND p.owner = tasks.owner AND p.task_id = tasks.id) AS has_push`;

/** What a save learns of its task in the same statement: whether it has push configs (as of the commit). */
interface SavedRow extends TaskKey {
  has_push: boolean;
}

const UPSERT_ONE = `INSERT INTO tasks (namespace, owner, id, context_id, state, status_timestamp, task)
  VALUES ($1, $2, $3, $4, $5, $6::timestamptz, $7::jsonb) ${UPSERT_SET}`;

/**
 * The tasks of a batch go as one JSON array (`$7`), not as a jsonb[] literal: node-postgres would escape
 * every quote of every task's JSON into the array literal, and PostgreSQL unescape them again.
 */
const UPSERT_MANY = `INSERT INTO tasks (namespace, owner, id, context_id, state, status_timestamp, task)
  SELECT * FROM ROWS FROM (unnest($1::text[]), unnest($2::text[]), unnest($3::text[]), unnest($4::text[]),
    unnest($5::text[]), unnest($6::timestamptz[]), jsonb_array_elements($7::jsonb))
  ${UPSERT_SET}`;

/**
 * What one call last wrote of a task (`json`), or that the task is new in that call (`json` undefined),
 * good while no other save of the task came since: `seq` is the task's latest save sequence then.
 */
interface CallCopy {
  seq: number | undefined;
  json: string | undefined;
  /** The save found no push config of the task; the first push lookup after it needs no query. */
  pushless?: boolean;
}

/** Tasks whose latest save sequence is kept; an older one is forgotten, and its call copies read the database. */
const MAX_SAVE_SEQUENCES = 10_000;

/** How long a save a call defers (deferSaves) waits for the call's next save before it is written. */
export const DEFERRED_SAVE_MS = 200;
/**
 * The state a deferring call's save may wait in: a task just submitted, holding the caller's message and
 * nothing of its run yet. A run's own output (working, artifacts) is committed as it comes, so that a run
 * taken over after a crash finds in the task all that its checkpoints hold.
 */
const DEFERRABLE_STATE = 'TASK_STATE_SUBMITTED';

/** A call's deferred saves, by task: written together, in order, before any later save of the call. */
interface DeferredSaves {
  /** No task of the call can have push configs (a task new in the call, none in its request). */
  pushless: boolean;
  writes: Map<string, TaskWrite>;
  timer: NodeJS.Timeout | undefined;
  /** The last flush under way: the call's next write waits for it, so that writes commit in order. */
  flushing: Promise<void> | undefined;
}

/** A task row as read: its task parsed by node-postgres, or (a page read as `text`) its JSON text. */
interface TaskRow<T = Record<string, unknown>> {
  id: string;
  task: T;
  cursor_ts?: string;
}

/** One ListTasks page, its tasks as objects or as JSON text. */
export interface TaskPage<T> {
  tasks: T[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

/**
 * The SDK's TaskStore on PostgreSQL (or the embedded PGlite). A task lives in its caller's
 * (namespace, owner) scope, which is part of the primary key: the same task id in another scope is
 * another row, never overwritten and never visible. ListTasks pages by keyset on
 * (status_timestamp DESC, id DESC) over an index that starts with the scope, and its totalSize comes
 * from counters kept by a trigger, so a page costs the same whatever the table size. Loads and saves
 * of concurrent requests share queries (QueryBatcher): one multi-row upsert or keyed read per batch.
 * Saves, and a turn's loads, wait out a database that is away for up to `databaseRetryMs`; a caller's
 * reads only for `databaseReadRetryMs`, not at all while it is known to be away (database-retry.ts).
 */
@Injectable()
export class TypeOrmTaskStore implements TaskStore {
  private readonly saves: QueryBatcher<TaskWrite, boolean>;
  private readonly loads: QueryBatcher<TaskKey, Record<string, unknown> | undefined>;
  /** Finished tasks never change: read from memory (see FinishedTaskCache). Off without notifications. */
  private readonly finished = new FinishedTaskCache();
  /** A task read for a call before the SDK reads it (see loadForCall), held for that one read. */
  private readonly readForCall = new WeakMap<ServerCallContext, Task>();
  /**
   * The SDK loads a task before every event it stores, under its per-task lock, to see what other calls
   * wrote meanwhile. What this call itself last wrote answers that load while no other save of the task
   * came since in this process (a task's events are written by the replica running it).
   */
  private readonly callCopies = new WeakMap<ServerCallContext, Map<string, CallCopy>>();
  private readonly latestSave = new Map<string, number>();
  private saveSequence = 0;
  private readonly deferredSaves = new WeakMap<ServerCallContext, DeferredSaves>();
  private readonly behindSaves = new WeakMap<ServerCallContext, BehindSaves<TaskWrite>>();
  /**
   * By task: the commit of the latest round that writes it behind its call's events. A load that cannot
   * take its call's own copy waits for it, as it would have waited for the save under the SDK's task lock.
   */
  private readonly behindCommits = new Map<string, Promise<unknown>>();
  private readonly logger = new Logger(TypeOrmTaskStore.name);

  constructor(
    private readonly dataSource: DataSource,
    @Inject(AppConfig)
    private readonly config: Pick<AppConfig, 'defaultNamespace' | 'databaseRetryMs' | 'databaseReadRetryMs'>,
    @Inject(DatabaseNotifications) private readonly notifications?: DatabaseNotifications,
  ) {
    // Concurrent requests share round trips: the SDK loads and saves a task on every event.
    this.saves = new QueryBatcher((writes) => this.saveAll(writes), { maxBatch: 100, maxInFlight: 4 });
    this.loads = new QueryBatcher((keys) => this.loadAll(keys), { maxBatch: 100, maxInFlight: 4 });
  }

  /** Opened while the other modules start; the application starts once it listens (onApplicationBootstrap). */
  private finishedListening: Promise<void> | undefined;

  onModuleInit(): void {
    if (this.notifications) this.finishedListening = this.finished.start(this.notifications);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.notifications) await (this.finishedListening ??= this.finished.start(this.notifications));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.finished.stop();
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    if (!task.id) throw new Error('Cannot store a task without an id');
    const scope = this.scopeOf(context);
    const write: TaskWrite = {
      namespace: scope.namespace,
      owner: scope.owner,
      id: task.id,
      contextId: task.contextId,
      state: taskStateToJSON(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED),
      statusTimestamp: toSqlTimestamp(task.status?.timestamp) ?? NO_TIMESTAMP,
      json: JSON.stringify(Task.toJSON(task)),
    };
    const key = cacheKey(write);
    const behind = this.behindSaves.get(context);
    if (behind !== undefined) {
      // The SDK's next load of the task in this call reads this copy, committed or not: it is the call's own.
      this.keepCallCopy(context, key, write.json);
      this.behindCommits.set(key, behind.stage(key, write));
      return;
    }
    const deferred = this.deferredSaves.get(context);
    if (deferred !== undefined) {
      if (write.state === DEFERRABLE_STATE) {
        this.defer(deferred, context, key, write);
        return;
      }
      // This write holds the task whole: it takes the place of the task's deferred one.
      deferred.writes.delete(key);
      await this.flushDeferred(deferred, context);
    }
    await this.write(key, write, context);
  }

  /**
   * Lets the call's save of a task just submitted wait up to DEFERRED_SAVE_MS for the call's next save of
   * it, which holds the task whole and is written in its place: a task its run completes at once is
   * written once, not twice. For a call whose caller is answered only once the task rests or its run ends
   * (a blocking SendMessage): nobody is shown the submitted state, and the answer follows the commit of
   * whatever it shows (flushSaves). Every other state is committed before its save returns, after the
   * call's waiting save. Other calls read the task as last committed meanwhile (a new task: not yet).
   * `pushless`: no task of the call can have push configs, so a push lookup after a waiting save needs
   * no query.
   */
  deferSaves(context: ServerCallContext, pushless: boolean): void {
    this.deferredSaves.set(context, { pushless, writes: new Map(), timer: undefined, flushing: undefined });
  }

  /**
   * Lets the call's saves return before they commit, for a caller who is shown each event only once its
   * save has committed (flushSaves before it is sent): a stream's. Each save goes with the call's next
   * commit, at once when none is under way, else as soon as it ends; saves of one task made meanwhile
   * share that commit, only the latest written (it holds the task whole). So the call's run does not
   * wait for a commit per event, and events that come while one commits are sent together after the next.
   * Commits of the call follow one another in order; another call's load of a task waits for them.
   * Whether a task has push configs is known at each commit (commitOf, for the push sender).
   */
  writeBehind(context: ServerCallContext): void {
    this.behindSaves.set(context, new BehindSaves(this.behindWriter));
  }

  /**
   * Waits for the commit of every save the call made so far: deferred ones (deferSaves), written now,
   * and ones made behind its events (writeBehind). Rejects when one of them could not be written.
   */
  async flushSaves(context: ServerCallContext): Promise<void> {
    await this.behindSaves.get(context)?.flushed();
    const deferred = this.deferredSaves.get(context);
    if (deferred !== undefined) await this.flushDeferred(deferred, context);
  }

  /**
   * For the call's latest save of the task, when it was made behind the call's events and has not
   * committed yet: whether the task has push configs as of that commit. Undefined otherwise.
   */
  commitOf(taskId: string, context: ServerCallContext): Promise<boolean> | undefined {
    const behind = this.behindSaves.get(context);
    if (behind === undefined) return undefined;
    const scope = this.scopeOf(context);
    return behind.commitOf(cacheKey({ namespace: scope.namespace, owner: scope.owner, id: taskId }));
  }

  /** How every call's saves made behind its events are written: each as a save of its own would be. */
  private readonly behindWriter: BehindWriter<TaskWrite> = {
    write: async (key, write) => {
      const hasPush = await retryWhileUnavailable('save a task', this.config.databaseRetryMs, () =>
        this.saves.submit(write),
      );
      this.finished.keep(key, write.state, write.json);
      return hasPush;
    },
    settled: (keys, done) => {
      for (const key of keys) if (this.behindCommits.get(key) === done) this.behindCommits.delete(key);
    },
    failed: (error) => this.logger.warn({ msg: 'a task save made behind its events failed', error: String(error) }),
  };

  private defer(deferred: DeferredSaves, context: ServerCallContext, key: string, write: TaskWrite): void {
    deferred.writes.set(key, write);
    // The SDK's next load of the task in this call reads this copy, as it would after a written save.
    this.keepCallCopy(context, key, write.json, deferred.pushless);
    deferred.timer ??= setTimeout(() => {
      deferred.timer = undefined;
      this.flushDeferred(deferred, context).catch((err: unknown) => {
        // The call's next save, or its flush before it answers, writes the task again.
        this.logger.warn({ msg: 'a deferred task save failed', error: String(err) });
      });
    }, DEFERRED_SAVE_MS);
  }

  private flushDeferred(deferred: DeferredSaves, context: ServerCallContext): Promise<void> {
    clearTimeout(deferred.timer);
    deferred.timer = undefined;
    const writes = [...deferred.writes];
    deferred.writes.clear();
    const previous = deferred.flushing;
    if (writes.length === 0 && previous === undefined) return Promise.resolve();
    const flushing = (async () => {
      // In order: a write of the task from an earlier flush commits before any later one is sent.
      await previous?.catch(() => undefined);
      await Promise.all(writes.map(([key, write]) => this.write(key, write, context)));
    })();
    deferred.flushing = flushing;
    return flushing;
  }

  /** Writes one save and waits for its commit. */
  private async write(key: string, write: TaskWrite, context: ServerCallContext): Promise<void> {
    // Under way: no call's copy of the task holds until this save is known to have committed.
    const seq = this.noteSave(key);
    // A turn's events wait here through a database blip, in order (the SDK stores them one by one).
    const hasPush = await retryWhileUnavailable('save a task', this.config.databaseRetryMs, () =>
      this.saves.submit(write),
    );
    this.finished.keep(key, write.state, write.json);
    // Unless the task was saved again meanwhile (a later save of this call deferred, say): that copy holds.
    if (this.latestSave.get(key) === seq) this.keepCallCopy(context, key, write.json, !hasPush);
  }

  /**
   * True when this call's latest save of the task, with no other save since, found it without push configs:
   * the push sender's lookup for that event needs no query. Answers true once per save.
   */
  takeNoPushConfigs(taskId: string, context: ServerCallContext): boolean {
    const scope = this.scopeOf(context);
    const key = cacheKey({ namespace: scope.namespace, owner: scope.owner, id: taskId });
    const copy = this.callCopies.get(context)?.get(key);
    if (!copy?.pushless || this.latestSave.get(key) !== copy.seq) return false;
    copy.pushless = false;
    return true;
  }

  /**
   * A task's recording committed it (TaskEventLog): a finished task is held for the loads that follow, and no
   * call's own copy of it holds any more.
   */
  noteCommitted(ref: { namespace: string; owner: string; id: string }, state: string, json: string): void {
    const key = cacheKey(ref);
    this.noteSave(key);
    this.finished.keep(key, state, json);
  }

  /** The executor starts task `taskId` in this call: the SDK's first load of it needs no read. */
  startsInCall(taskId: string, context: ServerCallContext): void {
    const scope = this.scopeOf(context);
    this.keepCallCopy(context, cacheKey({ namespace: scope.namespace, owner: scope.owner, id: taskId }), undefined);
  }

  private noteSave(key: string): number {
    const seq = ++this.saveSequence;
    this.latestSave.delete(key);
    this.latestSave.set(key, seq);
    if (this.latestSave.size > MAX_SAVE_SEQUENCES) {
      this.latestSave.delete(this.latestSave.keys().next().value!);
    }
    return seq;
  }

  private keepCallCopy(context: ServerCallContext, key: string, json: string | undefined, pushless = false): void {
    let copies = this.callCopies.get(context);
    if (!copies) this.callCopies.set(context, (copies = new Map<string, CallCopy>()));
    copies.set(key, { seq: json === undefined ? this.latestSave.get(key) : this.noteSave(key), json, pushless });
  }

  /** This call's copy of the task, when no other save of it came since: `null` for a task new in the call. */
  private callCopy(context: ServerCallContext, key: string): Task | null | undefined {
    const copy = this.callCopies.get(context)?.get(key);
    if (copy === undefined || this.latestSave.get(key) !== copy.seq) return undefined;
    return copy.json === undefined ? null : Task.fromJSON(JSON.parse(copy.json));
  }

  /**
   * Loads a task that the SDK is about to load for the same call (a reply's admission, before the SDK
   * continues the task): the SDK's next load of it in this call gets this copy instead of a second read.
   */
  async loadForCall(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const task = await this.load(taskId, context);
    if (task) this.readForCall.set(context, task);
    return task;
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const read = this.readForCall.get(context);
    if (read !== undefined) {
      this.readForCall.delete(context);
      if (read.id === taskId) return read;
    }
    const scope = this.scopeOf(context);
    const key: TaskKey = { namespace: scope.namespace, owner: scope.owner, id: taskId };
    const cached = cacheKey(key);
    const copy = this.callCopy(context, cached);
    if (copy !== undefined) return copy ?? undefined;
    const committing = this.behindCommits.get(cached);
    if (committing !== undefined) await committing.catch(() => undefined);
    const held = this.finished.get(cached);
    if (held !== undefined) return Task.fromJSON(JSON.parse(held));
    const generation = this.finished.currentGeneration;
    // A call that writes the task (a turn) waits out an outage; a read for a caller answers it at once.
    const json = this.callCopies.has(context)
      ? await retryWhileUnavailable('load a task', this.config.databaseRetryMs, () => this.loads.submit(key))
      : await readWhileAvailable('load a task', this.config.databaseReadRetryMs, () => this.loads.submit(key));
    if (!json) return undefined;
    const state = (json.status as { state?: unknown } | undefined)?.state;
    if (typeof state === 'string') this.finished.keep(cached, state, JSON.stringify(json), generation);
    return Task.fromJSON(json);
  }

  /**
   * One upsert for the batch; a batch that writes one task twice is written in order, one by one. Answers,
   * per write, whether the task has push configs.
   */
  private async saveAll(writes: readonly TaskWrite[]): Promise<boolean[]> {
    const keys = new Set(writes.map(cacheKey));
    if (writes.length === 1 || keys.size < writes.length) {
      const hasPush: boolean[] = [];
      for (const write of writes) {
        const rows = await queryRows<SavedRow>(this.dataSource, UPSERT_ONE, [
          write.namespace,
          write.owner,
          write.id,
          write.contextId,
          write.state,
          write.statusTimestamp,
          write.json,
        ]);
        hasPush.push(rows[0]?.has_push !== false);
      }
      return hasPush;
    }
    // In key order, as every batch: two batches never lock the same rows in opposite orders.
    const sorted = [...writes].sort(compareKeys);
    const rows = await queryRows<SavedRow>(this.dataSource, UPSERT_MANY, [
      sorted.map((w) => w.namespace),
      sorted.map((w) => w.owner),
      sorted.map((w) => w.id),
      sorted.map((w) => w.contextId),
      sorted.map((w) => w.state),
      sorted.map((w) => w.statusTimestamp),
      `[${sorted.map((w) => w.json).join(',')}]`,
    ]);
    const pushless = new Set(rows.filter((row) => row.has_push === false).map(cacheKey));
    return writes.map((w) => !pushless.has(cacheKey(w)));
  }

  private async loadAll(keys: readonly TaskKey[]): Promise<(Record<string, unknown> | undefined)[]> {
    if (keys.length === 1) {
      const rows = await queryRows<TaskRow>(
        this.dataSource,
        'SELECT id, task FROM tasks WHERE namespace = $1 AND owner = $2 AND id = $3',
        [keys[0].namespace, keys[0].owner, keys[0].id],
      );
      return [rows[0]?.task];
    }
    const rows = await queryRows<TaskRow & { i: string }>(
      this.dataSource,
      `SELECT k.i, t.id, t.task
       FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS k(namespace, owner, id, i)
       JOIN tasks t ON t.namespace = k.namespace AND t.owner = k.owner AND t.id = k.id COLLATE "C"`,
      [keys.map((k) => k.namespace), keys.map((k) => k.owner), keys.map((k) => k.id)],
    );
    const found = new Map(rows.map((row) => [Number(row.i) - 1, row.task]));
    return keys.map((_, i) => found.get(i));
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const page = await this.readPage<Record<string, unknown>>(params, context, 'object');
    return { ...page, tasks: page.tasks.map((task) => Task.fromJSON(task)) };
  }

  /**
   * The page ListTasks answers, each task as the JSON text its wire form is (what `Task.toJSON` gives,
   * as stored; with `includeArtifacts`, an empty `artifacts` where the task has none, as the SDK's
   * JSON-RPC handler adds): the transport writes it as it is, parsing and serialising nothing.
   * History is whole: a caller asking for `historyLength` takes `list`.
   */
  listText(params: ListTasksRequest, context: ServerCallContext): Promise<TaskPage<string>> {
    return this.readPage<string>(params, context, 'text');
  }

  private async readPage<T>(
    params: ListTasksRequest,
    context: ServerCallContext,
    form: TaskColumnForm,
  ): Promise<TaskPage<T>> {
    const pageSize = params.pageSize ?? DEFAULT_LIST_PAGE_SIZE;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_LIST_PAGE_SIZE) {
      throw new RequestMalformedError(`pageSize must be between 1 and ${MAX_LIST_PAGE_SIZE}`);
    }
    const scope = this.scopeOf(context);
    const page = taskListQuery(scope, params, pageSize + 1, form);
    const rows = await readWhileAvailable('list tasks', this.config.databaseReadRetryMs, () =>
      queryRows<TaskRow<T> & { total: string | number }>(this.dataSource, page.sql, page.values),
    );
    // An empty page carries no total: the count alone, in a second round trip.
    const total = rows.length > 0 ? rows[0].total : await this.count(scope, params);
    const hasMore = rows.length > pageSize;
    const shown = hasMore ? rows.slice(0, pageSize) : rows;
    const last = shown.at(-1);
    return {
      tasks: shown.map((row) => row.task),
      nextPageToken: hasMore && last ? encodePageToken(last.cursor_ts ?? NO_TIMESTAMP, last.id) : '',
      pageSize,
      totalSize: Number(total),
    };
  }

  private async count(scope: StoreScope, params: ListTasksRequest): Promise<string | number> {
    const count = taskCountQuery(scope, params);
    const counted = await readWhileAvailable('count tasks', this.config.databaseReadRetryMs, () =>
      queryRows<{ total: string | number }>(this.dataSource, count.sql, count.values),
    );
    return counted[0]?.total ?? 0;
  }

  private scopeOf(context: ServerCallContext): StoreScope {
    return resolveStoreScope(context, this.config.defaultNamespace);
  }
}
