import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { createDataSource } from '../../src/database/data-source.factory.js';
import { PendingMigrationsError } from '../../src/database/database.errors.js';
import { openDatabase, pendingMigrations, prepareDatabase } from '../../src/database/database.startup.js';
import { databaseTargets, testAppConfig, type TestDatabase } from '../support/database.js';
import { ENTITIES } from '../../src/entities.js';

const silent = { log: () => undefined, error: () => undefined, warn: () => undefined };

async function tableNames(dataSource: DataSource): Promise<string[]> {
  const rows: { table_name: string }[] = await dataSource.query(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
  );
  return rows.map((r) => r.table_name);
}

async function indexNames(dataSource: DataSource, table: string): Promise<string[]> {
  const rows: { indexname: string }[] = await dataSource.query(
    `SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1 ORDER BY indexname`,
    [table],
  );
  return rows.map((r) => r.indexname);
}

describe.each(databaseTargets())('migrations on $kind', (target) => {
  let database: TestDatabase;
  let dataSource: DataSource | undefined;

  beforeAll(async () => {
    database = await target.create();
  });
  afterEach(async () => {
    await dataSource?.destroy();
    dataSource = undefined;
  });
  afterAll(async () => {
    await database.cleanup();
  });

  it('finds the migrations and runs them up, down and up again', async () => {
    dataSource = await createDataSource(testAppConfig(database), { entities: ENTITIES });
    await dataSource.initialize();
    expect(dataSource.migrations.length).toBeGreaterThan(0);
    const all = dataSource.migrations.map((m) => m.name);
    expect(await pendingMigrations(dataSource)).toEqual(all);

    await dataSource.runMigrations();
    expect(await pendingMigrations(dataSource)).toEqual([]);
    expect(await tableNames(dataSource)).toEqual(
      expect.arrayContaining(['migrations', 'push_notification_configs', 'tasks']),
    );
    expect(await indexNames(dataSource, 'tasks')).toEqual(
      expect.arrayContaining([
        'IDX_tasks_scope_context_recent',
        'IDX_tasks_scope_recent',
        'IDX_tasks_scope_state_recent',
      ]),
    );

    for (let i = 0; i < all.length; i++) await dataSource.undoLastMigration();
    expect(await tableNames(dataSource)).toEqual(['migrations']);
    expect(await pendingMigrations(dataSource)).toEqual(all);

    await dataSource.runMigrations();
    expect(await pendingMigrations(dataSource)).toEqual([]);
    expect(await tableNames(dataSource)).toEqual(
      expect.arrayContaining(['migrations', 'push_notification_configs', 'tasks']),
    );
  });

  it('leaves no drift between the entities and the migrated schema', async () => {
    dataSource = await createDataSource(testAppConfig(database), { entities: ENTITIES });
    await dataSource.initialize();
    await dataSource.runMigrations();
    // What `migration:generate --check` computes: the SQL that would bring the schema to the entities.
    const diff = await dataSource.driver.createSchemaBuilder().log();
    expect(diff.upQueries.map((q) => q.query)).toEqual([]);
  });
});

describe.each(databaseTargets())('startup policy on $kind', (target) => {
  let database: TestDatabase;

  beforeEach(async () => {
    database = await target.create();
  });
  afterEach(async () => {
    await database.cleanup();
  });

  if (target.kind === 'embedded') {
    it('migrates a fresh embedded database at start', async () => {
      const dataSource = await openDatabase(testAppConfig(database), silent, { entities: ENTITIES });
      try {
        expect(await pendingMigrations(dataSource)).toEqual([]);
        expect(await tableNames(dataSource)).toEqual(expect.arrayContaining(['tasks', 'push_notification_configs']));
      } finally {
        await dataSource.destroy();
      }
    });
  } else {
    it('refuses to start on pending migrations without CLEVERAGENTS_MIGRATE_ON_START', async () => {
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
        expect(await tableNames(probe)).not.toContain('tasks');
      } finally {
        await probe.destroy();
      }
    });

    it('migrates at start when CLEVERAGENTS_MIGRATE_ON_START=true, then starts without it', async () => {
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
