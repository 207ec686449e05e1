import { describe, expect, it } from '@jest/globals';
import { QueryFailedError } from 'typeorm';
import { Logger } from '@nestjs/common';
import { DatabaseUnavailableError, StorageUnavailableError } from '../common/domain.errors.js';
import { RPC_CODES, rpcErrorOf, rpcHttpStatusOf } from '../rpc/rpc-error.mapper.js';
import {
  isStorageFailure,
  isTransientDatabaseError,
  lastStorageFailure,
  readWhileAvailable,
  retryWhileUnavailable,
  transientErrorClass,
  unavailableErrorOf,
} from './database-retry.js';

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

function errno(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, errno: -1 });
}

describe('isStorageFailure', () => {
  it.each([
    ['a full disk (53100)', pgError('53100', 'could not extend file "base/5/16427": No space left on device')],
    [
      'an I/O error (58030)',
      pgError('58030', 'could not read block 3 in file "base/5/16427": read only 0 of 8192 bytes'),
    ],
    // What PGlite said on a file system remounted read-only: errcode_for_file_access makes EROFS 42501.
    [
      'a read-only file system (42501)',
      pgError('42501', 'could not extend file "base/5/16427": Read-only file system'),
    ],
    ['a failing disk (42501 / EIO text)', pgError('XX000', 'could not write to log file "0001": Input/output error')],
    ['ENOSPC', errno('ENOSPC', 'ENOSPC: no space left on device, write')],
    ['a database that refuses writes (25006)', pgError('25006', 'cannot execute UPDATE in a read-only transaction')],
    ['EROFS', errno('EROFS', 'EROFS: read-only file system, open')],
    ['EIO', errno('EIO', 'EIO: i/o error, write')],
    ['a wrapped full disk', new QueryFailedError('INSERT', [], pgError('53100', 'could not extend file'))],
  ])('knows %s', (_, error) => {
    expect({ storage: isStorageFailure(error), transient: isTransientDatabaseError(error) }).toEqual({
      storage: true,
      transient: false,
    });
  });

  it.each([
    ['a missing grant (42501)', pgError('42501', 'permission denied for table tasks')],
    ['a unique violation (23505)', pgError('23505', 'duplicate key value violates unique constraint')],
    ['a refused connection', errno('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['an error of the program', new Error('could not extend file: No space left on device')],
  ])('does not take %s for it', (_, error) => {
    expect(isStorageFailure(error)).toBe(false);
  });

  it('answers -32010 STORAGE_UNAVAILABLE (retryable, HTTP 503), never -32603, and is remembered for /readyz', () => {
    const error = new QueryFailedError(
      'INSERT',
      [],
      pgError('53100', 'could not extend file "base/5/1": No space left on device'),
    );
    const before = Date.now();
    expect(unavailableErrorOf(error)).toBeInstanceOf(StorageUnavailableError);
    expect(rpcErrorOf(error, new Logger('test'))).toMatchObject({
      code: RPC_CODES.UNAVAILABLE,
      data: [{ reason: 'STORAGE_UNAVAILABLE', metadata: { retryable: 'true', retryAfterSeconds: '5' } }],
    });
    expect(rpcHttpStatusOf(error)).toBe(503);
    expect(lastStorageFailure()).toEqual({
      at: expect.any(Number),
      detail: 'could not extend file "base/5/1": No space left on device',
    });
    expect(lastStorageFailure()!.at).toBeGreaterThanOrEqual(before);
  });
});

describe('retryWhileUnavailable', () => {
  it('throws STORAGE_UNAVAILABLE at once for storage that fails', async () => {
    let calls = 0;
    const error = await retryWhileUnavailable('test', 5000, () => {
      calls += 1;
      return Promise.reject(pgError('53100', 'could not extend file'));
    }).catch((e: unknown) => e);
    expect({ reason: (error as StorageUnavailableError).reason, calls }).toEqual({
      reason: 'STORAGE_UNAVAILABLE',
      calls: 1,
    });
  });

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

describe('readWhileAvailable', () => {
  it('retries a blip within its budget, but tries once while the database is known to be away', async () => {
    // Tests above left it away: a statement that succeeds says it is back.
    await readWhileAvailable('test', 0, () => Promise.resolve('up'));
    let calls = 0;
    const blip = await readWhileAvailable('test', 5000, () => {
      calls += 1;
      return calls < 2 ? Promise.reject(pgError('57P01')) : Promise.resolve('read');
    });
    expect({ blip, calls }).toEqual({ blip: 'read', calls: 2 });

    // A write finds the database away, and gives up: reads after it do not wait.
    await retryWhileUnavailable('write', 0, () => Promise.reject(pgError('ECONNREFUSED'))).catch(() => undefined);
    calls = 0;
    const away = await readWhileAvailable('test', 60_000, () => {
      calls += 1;
      return Promise.reject(pgError('ECONNREFUSED'));
    }).catch((e: unknown) => e);
    expect({ reason: (away as DatabaseUnavailableError).reason, calls }).toEqual({
      reason: 'DATABASE_UNAVAILABLE',
      calls: 1,
    });

    // A statement that succeeds says it is back: a read retries again.
    await readWhileAvailable('test', 5000, () => Promise.resolve('back'));
    calls = 0;
    await readWhileAvailable('test', 5000, () => {
      calls += 1;
      return calls < 2 ? Promise.reject(pgError('ECONNREFUSED')) : Promise.resolve('read');
    });
    expect(calls).toBe(2);
  });
});

describe('transientErrorClass', () => {
  it.each([
    [
      'a refused connection',
      Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED' }),
      'ECONNREFUSED',
    ],
    [
      'a fast shutdown, wrapped',
      new QueryFailedError('UPDATE t SET secret = $1', ['hunter2'], pgError('57P01')),
      '57P01',
    ],
    ['a connection exception', pgError('08006', 'connection to host db.internal lost'), '08006'],
    ['a closed socket', new Error('Connection terminated unexpectedly'), 'connection_lost'],
    [
      'both addresses refused',
      new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]),
      'ECONNREFUSED',
    ],
    ['the domain error alone', new DatabaseUnavailableError(new Error('away')), 'unavailable'],
  ])('names %s by a bounded class, never its text or values', (_, error, name) => {
    expect(transientErrorClass(error)).toBe(name);
  });
});
