import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LOCK_FILE_NAME } from '../../packages/server/src/database/data-dir.lock.js';
import {
  EMBEDDED_PGDATA,
  openEmbeddedEarly,
  takeEarlyOpening,
} from '../../packages/server/src/database/embedded-opening.js';
import { EMBEDDED_SHARED_BUFFERS, startPGlite } from '../../packages/server/src/database/pglite-start.js';
import { PGliteThread } from '../../packages/server/src/database/pglite-thread.js';
import { createDataSource, EmbeddedDataSource } from '../../packages/server/src/database/data-source.factory.js';
import { DataDirLockedError } from '../../packages/server/src/database/database.errors.js';
import { DatabaseHealth } from '../../packages/server/src/database/database.health.js';
import { openDatabase } from '../../packages/server/src/database/database.startup.js';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { ENTITIES } from '../../packages/server/src/entities.js';
import { until } from '../support/wait.js';

const silent = { log: () => undefined, error: () => undefined, warn: () => undefined };

describe('embedded database', () => {
  let database: TestDatabase;
  let dataDir: string;

  beforeEach(async () => {
    database = await createEmbeddedTestDatabase();
    dataDir = database.env.CLEVERAGENTS_DATA_DIR;
  });
  afterEach(async () => {
    await database.cleanup();
  });

  it('refuses a second open of a data directory in use, and allows it once closed', async () => {
    const first = await openDatabase(database.config(), silent, { entities: ENTITIES });
    expect(first).toBeInstanceOf(EmbeddedDataSource);
    expect(existsSync(join(dataDir, LOCK_FILE_NAME))).toBe(true);
    try {
      const second = await createDataSource(database.config(), { entities: ENTITIES }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(second).toBeInstanceOf(DataDirLockedError);
      expect((second as Error).message).toContain('CLEVERAGENTS_DATA_DIR');
      expect((second as Error).message).toContain(`process ${process.pid}`);
      // The refused attempt did not disturb the holder.
      expect(await first.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await first.destroy();
    }
    expect(existsSync(join(dataDir, LOCK_FILE_NAME))).toBe(false);
    const again = await openDatabase(database.config(), silent, { entities: ENTITIES });
    await again.destroy();
  });

  it('takes over the lock a killed server left behind', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    writeFileSync(
      join(dataDir, LOCK_FILE_NAME),
      JSON.stringify({
        pid: Number(stdout),
        hostname: hostname(),
        purpose: 'CleverAgents server',
        startedAt: '2030-01-01T00:00:00Z',
      }),
    );
    const dataSource = await openDatabase(database.config(), silent, { entities: ENTITIES });
    try {
      expect(await dataSource.query('SELECT count(*)::int AS n FROM tasks')).toEqual([{ n: 0 }]);
    } finally {
      await dataSource.destroy();
    }
  });

  it('serves queued queries one after another on its single connection', async () => {
    const dataSource = await openDatabase(database.config(), silent, { entities: ENTITIES });
    try {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => dataSource.query('SELECT $1::int AS n', [i])),
      );
      expect(results.map((rows) => (rows as { n: number }[])[0].n)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      await dataSource.transaction(async (manager) => {
        await manager.query(`INSERT INTO tasks (namespace, owner, id, context_id, state, status_timestamp, task)
          VALUES ('default', 'alice', 'in-tx', 'c', 'TASK_STATE_WORKING', now(), '{}')`);
      });
      expect(await dataSource.query(`SELECT id FROM tasks`)).toEqual([{ id: 'in-tx' }]);
    } finally {
      await dataSource.destroy();
    }
  });

  it('runs PGlite on a thread of its own, with its own shared buffers; node-postgres parses arrays and errors', async () => {
    const dataSource = await openDatabase(database.config(), silent, { entities: ENTITIES });
    try {
      expect(dataSource).toBeInstanceOf(EmbeddedDataSource);
      expect((dataSource as EmbeddedDataSource).pglite).toBeInstanceOf(PGliteThread);
      expect(
        await dataSource.query(
          'SELECT ARRAY[1, 2]::int[] AS ints, $1::text[] AS texts, ARRAY[now()]::timestamptz[] AS at',
          [['a', 'b,c']],
        ),
      ).toEqual([{ ints: [1, 2], texts: ['a', 'b,c'], at: [expect.any(Date)] }]);
      // Its shared buffers are the embedded database's own, not the 128 MB of PGlite's postgresql.conf.
      expect(await dataSource.query('SHOW shared_buffers')).toEqual([{ shared_buffers: EMBEDDED_SHARED_BUFFERS }]);
      // PostgreSQL's errors come through whole: code, message, and the connection goes on.
      await expect(dataSource.query('SELEC 1')).rejects.toMatchObject({
        driverError: { code: '42601', message: expect.stringMatching(/syntax error at or near "SELEC"/) },
      });
      await dataSource.query(`INSERT INTO tasks (namespace, owner, id, context_id, state, status_timestamp, task)
        VALUES ('default', 'alice', 'dup', 'c', 'TASK_STATE_WORKING', now(), '{}')`);
      await expect(
        dataSource.query(`INSERT INTO tasks (namespace, owner, id, context_id, state, status_timestamp, task)
          VALUES ('default', 'alice', 'dup', 'c', 'TASK_STATE_WORKING', now(), '{}')`),
      ).rejects.toMatchObject({ driverError: { code: '23505' } });
      // A large answer (many protocol messages, over a megabyte) comes back in one piece.
      const [{ size }] = await dataSource.query<{ size: string }[]>(
        `SELECT sum(length(t)) AS size FROM (SELECT repeat('x', 1000) || g AS t FROM generate_series(1, 2000) g) s`,
      );
      const rows = await dataSource.query<{ t: string }[]>(
        `SELECT repeat('x', 1000) || g AS t FROM generate_series(1, 2000) g`,
      );
      expect(rows.reduce((sum, row) => sum + row.t.length, 0)).toBe(Number(size));
      expect(rows[1999].t.endsWith('2000')).toBe(true);
    } finally {
      await dataSource.destroy();
    }
    // Closed: its thread has ended, and a query says so.
    await expect((dataSource as EmbeddedDataSource).pglite.exec(new Uint8Array([0x53, 0, 0, 0, 4]))).rejects.toThrow(
      /closed/,
    );
  });

  it('fails queries with a clear error when its thread stops, and does not hang', async () => {
    const dataSource = await openDatabase(database.config(), silent, { entities: ENTITIES });
    try {
      const { pglite } = dataSource as EmbeddedDataSource;
      await (pglite as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
      await expect(dataSource.query('SELECT 1')).rejects.toThrow(/embedded database's thread exited/);
      await expect(dataSource.query('SELECT 1')).rejects.toThrow(/embedded database's thread exited/);
      expect(pglite.closed).toBe(true);
    } finally {
      await dataSource.destroy();
    }
    expect(existsSync(join(dataDir, LOCK_FILE_NAME))).toBe(false);
  });

  it('hands an early opening over to the same directory, and closes one the configuration does not use', async () => {
    const other = await createEmbeddedTestDatabase();
    try {
      const otherDir = other.env.CLEVERAGENTS_DATA_DIR;
      openEmbeddedEarly({ kind: 'embedded', dataDir: otherDir }, 'early');
      expect(existsSync(join(otherDir, LOCK_FILE_NAME))).toBe(true);
      // The configuration names another directory: the early one is closed and unlocked, this one opened.
      openEmbeddedEarly({ kind: 'embedded', dataDir }, 'configured');
      expect(takeEarlyOpening(otherDir)).toBeUndefined();
      await until(() => !existsSync(join(otherDir, LOCK_FILE_NAME)), 'the early opening to let go of its lock', 30_000);
      // PostgreSQL configured: the early opening is closed too.
      openEmbeddedEarly({ kind: 'postgres', url: 'postgres://unused' }, 'configured');
      expect(takeEarlyOpening(dataDir)).toBeUndefined();
      await until(() => !existsSync(join(dataDir, LOCK_FILE_NAME)), 'the early opening to let go of its lock', 30_000);
      // The same directory twice: one opening, taken over by the DataSource.
      openEmbeddedEarly({ kind: 'embedded', dataDir }, 'early');
      openEmbeddedEarly({ kind: 'embedded', dataDir }, 'configured');
      const dataSource = await openDatabase(database.config(), silent, { entities: ENTITIES });
      try {
        expect(takeEarlyOpening(dataDir)).toBeUndefined();
        expect(await dataSource.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      } finally {
        await dataSource.destroy();
      }
    } finally {
      await other.cleanup();
    }
  });

  it('starts PGlite without its array-type query, which the server never needs; PGlite loads them on asking', async () => {
    const pglite = await startPGlite(join(dataDir, EMBEDDED_PGDATA));
    try {
      expect(pglite.constructor.name).toBe('ServerPGlite');
      // PGlite's own parsers did not learn the array types (1007: int4[]) at start...
      expect((pglite as unknown as { parsers: Record<number, unknown> }).parsers[1007]).toBeUndefined();
      // ...and get them on asking.
      await pglite.refreshArrayTypes();
      expect((await pglite.query<{ ints: number[] }>('SELECT ARRAY[3]::int[] AS ints')).rows).toEqual([{ ints: [3] }]);
    } finally {
      await pglite.close();
    }
  });

  it('describes itself and answers pings until closed', async () => {
    const dataSource = await openDatabase(database.config(), silent, { entities: ENTITIES });
    const health = new DatabaseHealth(dataSource);
    await expect(health.ping()).resolves.toBeUndefined();
    expect(await health.describe()).toEqual({ kind: 'embedded', serverVersion: expect.stringMatching(/^\d+\.\d+/) });
    await dataSource.destroy();
    await expect(health.ping()).rejects.toThrow(/closed/);
  });
});
