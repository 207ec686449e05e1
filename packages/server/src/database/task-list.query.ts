import { TaskState, taskStateToJSON, type ListTasksRequest } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { StoreScope } from './store-scope.js';

/*
 * The SQL of a ListTasks page and its totalSize (TypeOrmTaskStore), its page token, and the timestamps
 * PostgreSQL reads as JavaScript does.
 */

/** How a page's tasks come back: parsed by node-postgres (`object`) or as their JSON text (`text`). */
export type TaskColumnForm = 'object' | 'text';

/** Stored for a task that has no status timestamp: sorts after every real one, never matches "after". */
export const NO_TIMESTAMP = '-infinity';
const UTC_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;
/** The cursor timestamp exactly as CURSOR_TIMESTAMP_SQL prints it. */
const CURSOR_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** The cursor as PostgreSQL prints it, to microseconds, so that it compares exactly with the column. */
const CURSOR_TIMESTAMP_SQL = `CASE WHEN isfinite(status_timestamp)
  THEN to_char(status_timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  ELSE '${NO_TIMESTAMP}' END`;

export interface SqlQuery {
  sql: string;
  values: unknown[];
}

/**
 * totalSize. Filtered by nothing but the state, it is a sum over the scope's counter rows in
 * `task_counts`, which a trigger keeps in the tasks' own transactions (migration TaskCounts): a few
 * rows whatever the number of tasks. Filtered by context or time, it counts the matching rows with the
 * page's own filter (an index range scan, so its cost grows with the matches).
 */
export function taskCountQuery(scope: StoreScope, params: ListTasksRequest): SqlQuery {
  const where = listFilter(scope, params);
  if (!params.contextId && !params.statusTimestampAfter) {
    return { sql: `SELECT coalesce(sum(count), 0) AS total FROM task_counts WHERE ${where.sql}`, values: where.values };
  }
  return { sql: `SELECT count(*) AS total FROM tasks WHERE ${where.sql}`, values: where.values };
}

/**
 * One page, newest first: a keyset condition on (status_timestamp, id) after the page token, read in
 * index order from one of the scope indexes and stopped after `limit` rows.
 */
export function taskPageQuery(
  scope: StoreScope,
  params: ListTasksRequest,
  limit: number,
  extraColumn?: string,
  form: TaskColumnForm = 'object',
): SqlQuery {
  const where = listFilter(scope, params);
  const values = [...where.values];
  let sql = where.sql;
  if (params.pageToken) {
    const cursor = decodePageToken(params.pageToken);
    values.push(cursor.timestamp, cursor.id);
    sql += ` AND (status_timestamp, id) < ($${values.length - 1}::timestamptz, $${values.length})`;
  }
  const taskColumn = taskColumnSql(params.includeArtifacts, form);
  values.push(limit);
  return {
    sql: `SELECT id, ${taskColumn}, ${CURSOR_TIMESTAMP_SQL} AS cursor_ts${extraColumn ? `, ${extraColumn}` : ''}
      FROM tasks WHERE ${sql}
      ORDER BY status_timestamp DESC, id DESC LIMIT $${values.length}`,
    values,
  };
}

/**
 * A page with its totalSize in one round trip: the count as a column of every row (an uncorrelated
 * subquery, run once). Its placeholders are the page's first ones: both start with the list's filter.
 */
export function taskListQuery(
  scope: StoreScope,
  params: ListTasksRequest,
  limit: number,
  form: TaskColumnForm = 'object',
): SqlQuery {
  return taskPageQuery(scope, params, limit, `(${taskCountQuery(scope, params).sql}) AS total`, form);
}

/**
 * A page's task column. Artifacts can be large: they stay in the database unless asked for. As text,
 * the column is the task's wire JSON, which node-postgres hands over without parsing it; with
 * artifacts asked for, a task without any gets an empty list, as the SDK's JSON-RPC handler gives it.
 */
function taskColumnSql(includeArtifacts: boolean | undefined, form: TaskColumnForm): string {
  if (form === 'object') return includeArtifacts ? 'task' : `task - 'artifacts' AS task`;
  if (!includeArtifacts) return `(task - 'artifacts')::text AS task`;
  return `(CASE WHEN task ? 'artifacts' THEN task ELSE task || '{"artifacts": []}'::jsonb END)::text AS task`;
}

function listFilter(scope: StoreScope, params: ListTasksRequest): SqlQuery {
  const values: unknown[] = [scope.namespace, scope.owner];
  const conditions = ['namespace = $1', 'owner = $2'];
  if (params.contextId) {
    values.push(params.contextId);
    conditions.push(`context_id = $${values.length}`);
  }
  if (params.status !== TaskState.TASK_STATE_UNSPECIFIED) {
    values.push(taskStateToJSON(params.status));
    conditions.push(`state = $${values.length}`);
  }
  if (params.statusTimestampAfter) {
    const after = toSqlTimestamp(params.statusTimestampAfter);
    if (after === undefined) {
      throw new RequestMalformedError('statusTimestampAfter must be a valid ISO 8601 date string');
    }
    values.push(after);
    conditions.push(`status_timestamp > $${values.length}::timestamptz`);
  }
  return { sql: conditions.join(' AND '), values };
}

/**
 * A timestamp PostgreSQL reads as the same instant JavaScript does. A UTC ISO 8601 string whose
 * fields JavaScript keeps as written is passed through, so that its microseconds survive; any other
 * string Date.parse reads (an offset, a day JavaScript rolls over such as 02-30) is normalised; the
 * rest is no timestamp.
 */
export function toSqlTimestamp(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  const millis = Date.parse(trimmed);
  if (Number.isNaN(millis)) return undefined;
  const normalised = new Date(millis).toISOString();
  return UTC_TIMESTAMP.test(trimmed) && normalised.slice(0, 19) === trimmed.slice(0, 19) ? trimmed : normalised;
}

/** Same shape as the SDK's in-memory store token: base64 of `<timestamp>|<id>`. Opaque to clients. */
export function encodePageToken(timestamp: string, id: string): string {
  return Buffer.from(`${timestamp}|${id}`, 'utf8').toString('base64');
}

export function decodePageToken(token: string): { timestamp: string; id: string } {
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const separator = decoded.indexOf('|');
  const timestamp = separator > 0 ? decoded.slice(0, separator) : '';
  const valid =
    timestamp === NO_TIMESTAMP || (CURSOR_TIMESTAMP.test(timestamp) && toSqlTimestamp(timestamp) === timestamp);
  if (!valid) {
    throw new RequestMalformedError('Invalid page token.');
  }
  return { timestamp, id: decoded.slice(separator + 1) };
}
