import { type DataSource, QueryFailedError } from 'typeorm';

/** The part of node-postgres' pool that answers a query through a callback. */
interface CallbackPool {
  query(
    sql: string,
    values: unknown[],
    callback: (error: Error | undefined, result: { rows: unknown[] }) => void,
  ): void;
}

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
 */
export function queryRows<T>(dataSource: DataSource, sql: string, values: unknown[]): Promise<T[]> {
  const pool = callbackPool(dataSource);
  if (!pool) return dataSource.query(sql, values);
  return new Promise<T[]>((resolve, reject) => {
    pool.query(sql, values, (error, result) => {
      if (error) reject(new QueryFailedError(sql, values, error));
      else resolve(result.rows as T[]);
    });
  });
}
