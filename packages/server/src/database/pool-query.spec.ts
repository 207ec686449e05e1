import { describe, expect, it } from '@jest/globals';
import { type DataSource, QueryFailedError } from 'typeorm';
import { isTransientDatabaseError } from './database-retry.js';
import { queryRows } from './pool-query.js';

type Callback = (error: Error | undefined, result: { rows: unknown[] }) => void;

/** A DataSource whose node-postgres pool answers only the callback form, as recorded in `calls`. */
function withPool(answer: (callback: Callback) => void) {
  const calls: { sql: string; values: unknown[]; name?: string }[] = [];
  const master = {
    query(
      first: string | { name: string; text: string; values: unknown[] },
      second: unknown[] | Callback,
      third?: Callback,
    ) {
      const callback = typeof second === 'function' ? second : third;
      if (typeof callback !== 'function') throw new Error('the promise form was used');
      if (typeof first === 'string') calls.push({ sql: first, values: second as unknown[] });
      else calls.push({ sql: first.text, values: first.values, name: first.name });
      answer(callback);
    },
  };
  const dataSource = {
    driver: { master },
    query: () => Promise.reject(new Error('dataSource.query was used')),
  } as unknown as DataSource;
  return { dataSource, calls };
}

describe('queryRows', () => {
  it("answers the rows through the pool's callback form", async () => {
    const { dataSource, calls } = withPool((callback) =>
      setImmediate(() => callback(undefined, { rows: [{ id: 'a' }] })),
    );
    await expect(queryRows(dataSource, 'SELECT id FROM tasks WHERE owner = $1', ['alice'])).resolves.toEqual([
      { id: 'a' },
    ]);
    expect(calls).toEqual([{ sql: 'SELECT id FROM tasks WHERE owner = $1', values: ['alice'] }]);
  });

  it("fails as dataSource.query does: a QueryFailedError around the driver's error", async () => {
    const driverError = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });
    const { dataSource } = withPool((callback) => callback(driverError, { rows: [] }));
    const error = await queryRows(dataSource, 'SELECT 1', []).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryFailedError);
    expect((error as QueryFailedError).driverError).toBe(driverError);
    expect(isTransientDatabaseError(error)).toBe(true);
  });

  it('sends a prepared statement under its name, with its text and values', async () => {
    const { dataSource, calls } = withPool((callback) => callback(undefined, { rows: [{ n: 1 }] }));
    await expect(queryRows(dataSource, 'SELECT $1::int AS n', [1], 'one')).resolves.toEqual([{ n: 1 }]);
    expect(calls).toEqual([{ sql: 'SELECT $1::int AS n', values: [1], name: 'one' }]);
  });

  it('goes through dataSource.query when there is no node-postgres pool', async () => {
    const dataSource = { driver: {}, query: (sql: string) => Promise.resolve([{ sql }]) } as unknown as DataSource;
    await expect(queryRows(dataSource, 'SELECT 2', [])).resolves.toEqual([{ sql: 'SELECT 2' }]);
  });
});
