// The migrations themselves, on both databases, from empty: every other suite starts from the run's migrated
// template (test/global-setup.ts) and migrates nothing.
import { afterEach, describe, expect, it } from '@jest/globals';
import { MigrationExecutor, type DataSource } from 'typeorm';
import { createDataSource } from '../../packages/server/src/database/data-source.factory.js';
import { PendingMigrationsError } from '../../packages/server/src/database/database.errors.js';
import {
  openDatabase,
  pendingMigrations,
  prepareDatabase,
} from '../../packages/server/src/database/database.startup.js';
import { ENTITIES } from '../../packages/server/src/entities.js';
import { databaseTargets, testAppConfig, type DatabaseTarget, type TestDatabase } from '../support/database.js';

const silent = { log: () => undefined, error: () => undefined, warn: () => undefined };

/** The `migrations` table is TypeORM's record of what ran: its rows are `applied`, its own objects left out. */
const RECORD = 'migrations';

/**
 * Everything the migrations leave in a database, except the record's own objects: the migrations
 * applied, and the tables, columns, indexes, constraints, sequences, triggers, functions and types of
 * the public schema, with each table's row count.
 */
async function schemaOf(dataSource: DataSource): Promise<Record<string, unknown>> {
  const q = (sql: string) => dataSource.query<Record<string, unknown>[]>(sql);
  const [{ recorded }] = await dataSource.query<{ recorded: boolean }[]>(
    `SELECT to_regclass('${RECORD}') IS NOT NULL AS recorded`,
  );
  const tables = (
    await q(`SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> '${RECORD}' ORDER BY c.relname`)
  ).map((row) => row.relname as string);
  const counts = tables.length
    ? await q(tables.map((table) => `SELECT '${table}' AS t, count(*)::int AS n FROM "${table}"`).join(' UNION ALL '))
    : [];
  return {
    applied: recorded ? (await q(`SELECT name FROM ${RECORD} ORDER BY timestamp`)).map((row) => row.name) : [],
    tables,
    rows: Object.fromEntries(counts.map((row) => [row.t, row.n])),
    // pg_catalog rather than information_schema: the same facts, in a quarter of the time on the embedded database.
    columns: await q(`SELECT c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull,
        pg_get_expr(d.adbin, d.adrelid) AS default, co.collname, a.attidentity, a.attgenerated
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      LEFT JOIN pg_collation co ON co.oid = a.attcollation
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> '${RECORD}'
        AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY c.relname, a.attnum`),
    indexes: await q(`SELECT tablename, indexname, indexdef FROM pg_indexes
      WHERE schemaname = 'public' AND tablename <> '${RECORD}' ORDER BY tablename, indexname`),
    constraints: await q(`SELECT c.conrelid::regclass::text AS on_table, c.conname, pg_get_constraintdef(c.oid) AS def
      FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE n.nspname = 'public' AND c.conrelid::regclass::text <> '${RECORD}' ORDER BY on_table, c.conname`),
    sequences: await q(`SELECT c.relname, format_type(s.seqtypid, NULL) AS type, s.seqstart, s.seqincrement
      FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relname <> '${RECORD}_id_seq' ORDER BY c.relname`),
    triggers: await q(`SELECT tgrelid::regclass::text AS on_table, tgname, tgenabled, pg_get_triggerdef(t.oid) AS def
      FROM pg_trigger t WHERE NOT tgisinternal ORDER BY on_table, tgname`),
    functions: await q(`SELECT p.proname, pg_get_functiondef(p.oid) AS def FROM pg_proc p
      JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY p.proname`),
    types: await q(`SELECT t.typname, t.typtype FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname = 'public' AND t.typname NOT IN ('${RECORD}', '_${RECORD}') ORDER BY t.typname`),
  };
}

/** Runs the oldest pending migration alone, in a transaction of its own; returns its name. */
async function upOne(dataSource: DataSource): Promise<string> {
  const queryRunner = dataSource.createQueryRunner();
  try {
    const executor = new MigrationExecutor(dataSource, queryRunner);
    const next = (await executor.getPendingMigrations()).at(0);
    if (!next) throw new Error('no migration is pending');
    await queryRunner.startTransaction();
    await executor.executeMigration(next);
    await queryRunner.commitTransaction();
    return next.name;
  } catch (error) {
    if (queryRunner.isTransactionActive) await queryRunner.rollbackTransaction();
    throw error;
  } finally {
    await queryRunner.release();
  }
}

/** Every migration's name, oldest first. */
function migrationNames(dataSource: DataSource): string[] {
  return dataSource.migrations.map((m) => m.name ?? m.constructor.name);
}

describe.each(databaseTargets())('migrations on $kind, from an empty database', (target: DatabaseTarget) => {
  const opened: { database: TestDatabase; dataSource: DataSource }[] = [];
  /** A fresh empty database and a DataSource on it, not migrated. */
  async function openEmpty(): Promise<DataSource> {
    const database = await target.create({ migrated: false });
    const dataSource = await createDataSource(testAppConfig(database), { entities: ENTITIES });
    opened.push({ database, dataSource });
    await dataSource.initialize();
    return dataSource;
  }
  afterEach(async () => {
    for (const { database, dataSource } of opened.splice(0)) {
      await dataSource.destroy();
      await database.cleanup();
    }
  });

  it('runs every migration up and back down one at a time: each down leaves the schema its up found', async () => {
    const dataSource = await openEmpty();
    const all = migrationNames(dataSource);
    expect(all.length).toBeGreaterThan(0);
    expect(await pendingMigrations(dataSource)).toEqual(all);

    const found: Record<string, unknown>[] = [];
    for (const name of all) {
      found.push(await schemaOf(dataSource));
      expect(await upOne(dataSource)).toBe(name);
    }
    const top = await schemaOf(dataSource);
    expect(top.applied).toEqual(all);
    expect(top.tables).toEqual(expect.arrayContaining(['tasks', 'push_notification_configs', 'task_events']));

    for (let i = all.length - 1; i >= 0; i--) {
      await dataSource.undoLastMigration({ transaction: 'each' });
      expect({ reverted: all[i], schema: await schemaOf(dataSource) }).toEqual({ reverted: all[i], schema: found[i] });
    }
    expect(found[0]).toMatchObject({ applied: [], tables: [], functions: [] });
    expect(await pendingMigrations(dataSource)).toEqual(all);

    // Up again, all at once as a start does: the same schema as one at a time.
    await dataSource.runMigrations({ transaction: 'all' });
    expect(await schemaOf(dataSource)).toEqual(top);
  });

  it('makes the schema the entities map (no drift) and the one every other test database starts with', async () => {
    const dataSource = await openEmpty();
    await prepareDatabase(dataSource, { migrateOnStart: true }, silent);
    expect(await pendingMigrations(dataSource)).toEqual([]);
    // What `migration:generate --check` computes: the SQL that would bring the schema to the entities.
    const diff = await dataSource.driver.createSchemaBuilder().log();
    expect(diff.upQueries.map((q) => q.query)).toEqual([]);

    const fromTemplate = await target.create();
    const strict = await openDatabase(testAppConfig(fromTemplate, { CLEVERAGENTS_MIGRATE_ON_START: 'false' }), silent, {
      entities: ENTITIES,
    });
    opened.push({ database: fromTemplate, dataSource: strict });
    expect(await pendingMigrations(strict)).toEqual([]);
    expect(await schemaOf(strict)).toEqual(await schemaOf(dataSource));
    if (target.kind === 'postgres') {
      // The harness's databases commit without waiting for the disk: a setting of each, not of the server.
      expect(await strict.query('SHOW synchronous_commit')).toEqual([{ synchronous_commit: 'off' }]);
    }
  });

  it('keeps the rows of tasks and push configs through every migration up and down, and derives what is due from them', async () => {
    const dataSource = await openEmpty();
    const all = migrationNames(dataSource);
    expect(await upOne(dataSource)).toBe(all[0]);
    // Rows as the first schema has them: tasks in three scopes, push configs of which two share a created_at.
    const task = (namespace: string, owner: string, id: string, state: string) =>
      dataSource.query(
        `INSERT INTO tasks (namespace, owner, id, context_id, state, status_timestamp, task)
         VALUES ($1, $2, $3, $4, $5, '2026-01-01T00:00:00Z', $6)`,
        [namespace, owner, id, `ctx-${id}`, state, JSON.stringify({ id, state })],
      );
    await task('acme', 'alice', 't1', 'working');
    await task('acme', 'alice', 't2', 'working');
    await task('acme', 'alice', 't3', 'completed');
    await task('acme', 'bob', 't4', 'failed');
    await task('other', 'bob', 't5', 'working');
    const pushConfig = (id: string, createdAt: string) =>
      dataSource.query(
        `INSERT INTO push_notification_configs (namespace, owner, task_id, id, config, wire_version, created_at)
         VALUES ('acme', 'alice', 't1', $1, $2, 'v1', $3)`,
        [id, JSON.stringify({ url: `https://hooks.example.com/${id}`, token: `secret-${id}` }), createdAt],
      );
    await pushConfig('z', '2026-01-01T00:00:00Z');
    await pushConfig('b', '2026-01-02T00:00:00Z');
    await pushConfig('a', '2026-01-02T00:00:00Z');
    const original = async () => ({
      tasks: await dataSource.query(
        `SELECT namespace, owner, id, context_id, state, status_timestamp, task, created_at, updated_at
         FROM tasks ORDER BY namespace, owner, id`,
      ),
      pushConfigs: await dataSource.query(
        `SELECT namespace, owner, task_id, id, config, wire_version, created_at, updated_at
         FROM push_notification_configs ORDER BY id`,
      ),
    });
    const before = await original();
    expect(before.tasks).toHaveLength(5);

    for (const name of all.slice(1)) {
      expect(await upOne(dataSource)).toBe(name);
      expect({ after: name, rows: await original() }).toEqual({ after: name, rows: before });
    }
    const derived = async () => ({
      // TaskCounts counts the tasks there are; its shards only add up.
      counts: await dataSource.query(
        `SELECT namespace, owner, state, sum(count)::int AS n FROM task_counts
         GROUP BY namespace, owner, state HAVING sum(count) <> 0 ORDER BY namespace, owner, state`,
      ),
      // PushConfigOrder numbers the configs there are by (created_at, id); EncryptPushSecrets seals none of them.
      pushConfigs: await dataSource.query(
        `SELECT id, created_seq::int AS seq, secrets FROM push_notification_configs ORDER BY created_seq`,
      ),
      // TaskEvents starts every task's event numbers at 0.
      sequences: await dataSource.query(`SELECT DISTINCT last_sequence::int AS n FROM tasks`),
    });
    const first = await derived();
    expect(first).toEqual({
      counts: [
        { namespace: 'acme', owner: 'alice', state: 'completed', n: 1 },
        { namespace: 'acme', owner: 'alice', state: 'working', n: 2 },
        { namespace: 'acme', owner: 'bob', state: 'failed', n: 1 },
        { namespace: 'other', owner: 'bob', state: 'working', n: 1 },
      ],
      pushConfigs: [
        { id: 'z', seq: 1, secrets: null },
        { id: 'a', seq: 2, secrets: null },
        { id: 'b', seq: 3, secrets: null },
      ],
      sequences: [{ n: 0 }],
    });
    // A config saved now comes after them.
    const [saved] = await dataSource.query<{ seq: number }[]>(
      `INSERT INTO push_notification_configs (namespace, owner, task_id, id, config, wire_version, created_at)
       VALUES ('acme', 'alice', 't1', 'c', '{}', 'v1', '2026-01-03T00:00:00Z') RETURNING created_seq::int AS seq`,
    );
    expect(saved.seq).toBe(4);
    const withSaved = await original();

    for (const name of [...all].reverse().slice(0, -1)) {
      await dataSource.undoLastMigration({ transaction: 'each' });
      expect({ reverted: name, rows: await original() }).toEqual({ reverted: name, rows: withSaved });
    }
    expect(await pendingMigrations(dataSource)).toEqual(all.slice(1));

    await dataSource.runMigrations({ transaction: 'all' });
    expect(await original()).toEqual(withSaved);
    expect(await derived()).toEqual({
      ...first,
      pushConfigs: [...first.pushConfigs, { id: 'c', seq: 4, secrets: null }],
    });
  });
});

describe.each(databaseTargets())('startup policy on $kind', (target) => {
  let database: TestDatabase;

  afterEach(async () => {
    await database.cleanup();
  });

  if (target.kind === 'embedded') {
    it('migrates a fresh embedded database at start', async () => {
      database = await target.create({ migrated: false });
      const dataSource = await openDatabase(testAppConfig(database), silent, { entities: ENTITIES });
      try {
        expect(await pendingMigrations(dataSource)).toEqual([]);
        expect((await schemaOf(dataSource)).tables).toEqual(
          expect.arrayContaining(['tasks', 'push_notification_configs']),
        );
      } finally {
        await dataSource.destroy();
      }
    });
  } else {
    it('refuses to start on pending migrations without CLEVERAGENTS_MIGRATE_ON_START', async () => {
      database = await target.create({ migrated: false });
      const config = testAppConfig(database, { CLEVERAGENTS_MIGRATE_ON_START: 'false' });
      const failure = await openDatabase(config, silent, { entities: ENTITIES }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(PendingMigrationsError);
      expect((failure as Error).message).toContain('CLEVERAGENTS_MIGRATE_ON_START');
      expect((failure as Error).message).toContain('npm run migration:run');
      expect((failure as PendingMigrationsError).pending.length).toBeGreaterThan(0);

      // Refusing changed nothing: the schema is still absent.
      const probe = await createDataSource(config, { entities: ENTITIES });
      await probe.initialize();
      try {
        expect((await schemaOf(probe)).tables).toEqual([]);
      } finally {
        await probe.destroy();
      }
    });

    it('migrates at start when CLEVERAGENTS_MIGRATE_ON_START=true, then starts without it', async () => {
      database = await target.create({ migrated: false });
      const migrating = await openDatabase(testAppConfig(database, { CLEVERAGENTS_MIGRATE_ON_START: 'true' }), silent, {
        entities: ENTITIES,
      });
      await migrating.destroy();
      const strict = await openDatabase(testAppConfig(database), silent, { entities: ENTITIES });
      try {
        expect(await pendingMigrations(strict)).toEqual([]);
      } finally {
        await strict.destroy();
      }
    });

    it('lets replicas that start together migrate one at a time', async () => {
      database = await target.create({ migrated: false });
      const config = testAppConfig(database, { CLEVERAGENTS_MIGRATE_ON_START: 'true' });
      const replicas = await Promise.all([
        createDataSource(config, { entities: ENTITIES }),
        createDataSource(config, { entities: ENTITIES }),
        createDataSource(config, { entities: ENTITIES }),
      ]);
      try {
        await Promise.all(replicas.map((ds) => prepareDatabase(ds, config, silent)));
        for (const ds of replicas) expect(await pendingMigrations(ds)).toEqual([]);
      } finally {
        await Promise.all(replicas.map((ds) => ds.destroy()));
      }
    });
  }
});
