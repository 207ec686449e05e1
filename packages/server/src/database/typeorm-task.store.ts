import { Task, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { ListTasksRequest, ListTasksResponse } from '@a2a-js/sdk';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app.config.js';
import { DatabaseNotifications } from './database-notifications.js';
import { FinishedTaskCache } from './finished-task.cache.js';
import { queryRows } from './pool-query.js';
import { compareTaskKeys, taskRowParams, type TaskKey, type TaskRowWrite } from './task-rows.js';
import { QueryBatcher } from './query-batcher.js';
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

function cacheKey(key: TaskKey): string {
  return `${key.namespace}\u0000${key.owner}\u0000${key.id}`;
}

type TaskWrite = TaskRowWrite;

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
 * The tasks table (docs/architecture.md, "Persistence"): rows scoped by (namespace, owner), keyset pages with
 * counted totals, batched loads and saves, finished tasks held in memory. It knows no call (TurnTaskStore does).
 */
@Injectable()
export class TypeOrmTaskStore implements TaskStore {
  private readonly saves: QueryBatcher<TaskWrite, boolean>;
  private readonly loads: QueryBatcher<TaskKey, Record<string, unknown> | undefined>;
  /** Finished tasks never change: read from memory (see FinishedTaskCache). Off without notifications. */
  private readonly finished = new FinishedTaskCache();

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
    await retryWhileUnavailable('save a task', this.config.databaseRetryMs, () => this.saves.submit(write));
    this.finished.keep(key, write.state, write.json);
  }

  /** A task's recording committed it (TaskEventLog): a finished task is held for the loads that follow. */
  keepCommitted(ref: { namespace: string; owner: string; id: string }, state: string, json: string): void {
    this.finished.keep(cacheKey(ref), state, json);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const scope = this.scopeOf(context);
    const key: TaskKey = { namespace: scope.namespace, owner: scope.owner, id: taskId };
    const cached = cacheKey(key);
    const held = this.finished.get(cached);
    if (held !== undefined) return Task.fromJSON(JSON.parse(held));
    const generation = this.finished.currentGeneration;
    // A turn keeps its task in memory (TaskRecording): a load is a caller's read, answered at once in an outage.
    const json = await readWhileAvailable('load a task', this.config.databaseReadRetryMs, () => this.loads.submit(key));
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
    const sorted = [...writes].sort(compareTaskKeys);
    const rows = await queryRows<SavedRow>(this.dataSource, UPSERT_MANY, taskRowParams(sorted));
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
