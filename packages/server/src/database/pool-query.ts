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
 * One read through node-postgres's callback form (less promoted to the old generation than its promise
 * form), optionally prepared per connection (docs/design-notes.md#pool-queries).
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
