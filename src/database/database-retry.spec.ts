import { describe, expect, it } from '@jest/globals';
import { QueryFailedError } from 'typeorm';
import { DatabaseUnavailableError } from '../common/domain.errors.js';
import { isTransientDatabaseError, retryWhileUnavailable } from './database-retry.js';

function pgError(code: string, message = 'error'): Error {
  return Object.assign(new Error(message), { code });
}

describe('isTransientDatabaseError', () => {
  it.each([
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a reset socket', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['a fast shutdown (57P01)', pgError('57P01', 'terminating connection due to administrator command')],
    ['a server starting up (57P03)', pgError('57P03', 'the database system is starting up')],
    ['a connection exception (08006)', pgError('08006')],
    ['a closed socket', new Error('Connection terminated unexpectedly')],
    ['both addresses refused', new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })])],
    ['a wrapped driver error', new QueryFailedError('SELECT 1', [], pgError('57P01'))],
  ])('retries %s', (_, error) => {
    expect(isTransientDatabaseError(error)).toBe(true);
  });

  it.each([
    ['a unique violation (23505)', new QueryFailedError('INSERT', [], pgError('23505', 'duplicate key value'))],
    ['a syntax error (42601)', pgError('42601', 'syntax error at or near')],
    ['an invalid input (22P02)', pgError('22P02', 'invalid input syntax for type json')],
    ['an error of the program', new TypeError('Cannot read properties of undefined')],
    ['a string', 'Connection terminated'],
  ])('never retries %s', (_, error) => {
    expect(isTransientDatabaseError(error)).toBe(false);
  });
});

describe('retryWhileUnavailable', () => {
  it('retries a transient error until the statement succeeds', async () => {
    let calls = 0;
    const result = await retryWhileUnavailable('test', 5000, () => {
      calls += 1;
      return calls < 3 ? Promise.reject(pgError('57P01')) : Promise.resolve('done');
    });
    expect({ result, calls }).toEqual({ result: 'done', calls: 3 });
  });

  it('throws a data error at once', async () => {
    let calls = 0;
    const unique = pgError('23505');
    await expect(
      retryWhileUnavailable('test', 5000, () => {
        calls += 1;
        return Promise.reject(unique);
      }),
    ).rejects.toBe(unique);
    expect(calls).toBe(1);
  });

  it('gives up with DATABASE_UNAVAILABLE once the budget is spent', async () => {
    const started = Date.now();
    const error = await retryWhileUnavailable('test', 300, () => Promise.reject(pgError('ECONNREFUSED'))).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect((error as DatabaseUnavailableError).reason).toBe('DATABASE_UNAVAILABLE');
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });
});
