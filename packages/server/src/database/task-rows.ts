/** A task of one scope, as the task tables key it. */
export interface TaskKey {
  namespace: string;
  owner: string;
  id: string;
}

/** One task row to write: its key, the columns ListTasks reads, and the task itself as `Task.toJSON` text. */
export interface TaskRowWrite extends TaskKey {
  contextId: string;
  state: string;
  statusTimestamp: string;
  json: string;
}

/** Key order: every batch writes its rows in it, so two batches never lock the same rows in opposite orders. */
export function compareTaskKeys(a: TaskKey, b: TaskKey): number {
  if (a.namespace !== b.namespace) return a.namespace < b.namespace ? -1 : 1;
  if (a.owner !== b.owner) return a.owner < b.owner ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The first seven parameters of a statement writing `rows` (in key order) through `unnest`: a text array per
 * column, and the tasks as one JSON array — node-postgres would escape every quote of every task's JSON into a
 * jsonb[] literal, and PostgreSQL unescape them again.
 */
export function taskRowParams(rows: readonly TaskRowWrite[]): unknown[] {
  return [
    rows.map((w) => w.namespace),
    rows.map((w) => w.owner),
    rows.map((w) => w.id),
    rows.map((w) => w.contextId),
    rows.map((w) => w.state),
    rows.map((w) => w.statusTimestamp),
    `[${rows.map((w) => w.json).join(',')}]`,
  ];
}
