import { type DataSource, QueryFailedError } from 'typeorm';

/** The part of node-postgres' pool that answers a query through a callback. */
interface CallbackPool {
  query(sql: string, values: unknown[], callback: QueryCallback): void;
  query(config: { name: string; text: string; values: unknown[] }, callback: QueryCallback): void;
}

type QueryCallback = (error: Error | undefined, result: { rows: unknown[] }) => void;

function callbackPool(dataSource: DataSource): CallbackPool | undefined {
  const master = (dataSource.driver as { master?: unknown } | undefined)?.master;
  return typeof (master as Partial<CallbackPool> | undefined)?.query === 'function'
    ? (master as CallbackPool)
    : undefined;
}

/**
 * The rows of one read, as `dataSource.query` answers them, through the callback form of node-postgres'
 * pool query. Its promise form (what TypeORM awaits) keeps each result alive past young-generation
 * collections: a bare pg.Client loop over a 51-row page had ~45 KB a query promoted to the old
 * generation through `client.query(text, values)` and under 1 KB through
 * `client.query(text, values, callback)` (`node --trace-gc-nvp`, promoted= summed). Whatever a request
 * holds then outlives it, every young collection copies it, and those pauses were ListTasks' p99.
 * Errors come as TypeORM's QueryFailedError, as through `dataSource.query`. A DataSource without a
 * node-postgres pool (none in the server; kept for stand-ins) goes through `dataSource.query`.
 *
 * A `prepared` name makes it a prepared statement of that name on each connection: parsed and planned once
 * per connection, not at every call. For a hot statement whose planning costs much of its run (the event
 * log's commit, a CTE of three statements, took 40 % less PostgreSQL CPU prepared). One name, one text.
 */
export function queryRows<T>(dataSource: DataSource, sql: string, values: unknown[], prepared?: string): Promise<T[]> {
  const pool = callbackPool(dataSource);
  if (!pool) return dataSource.query(sql, values);
  return new Promise<T[]>((resolve, reject) => {
    const callback: QueryCallback = (error, result) => {
      if (error) reject(new QueryFailedError(sql, values, error));
      else resolve(result.rows as T[]);
    };
    if (prepared === undefined) pool.query(sql, values, callback);
    else pool.query({ name: prepared, text: sql, values }, callback);
  });
}
