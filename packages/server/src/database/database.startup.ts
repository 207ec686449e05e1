import { Logger, type LoggerService } from '@nestjs/common';
import { Migration, MigrationExecutor, type DataSource } from 'typeorm';
import type { AppConfig } from '../config/app.config.js';
import { createDataSource, EmbeddedDataSource, type CreateDataSourceOptions } from './data-source.factory.js';
import { DatabaseUnreachableError, PendingMigrationsError } from './database.errors.js';
import { isTransientDatabaseError } from './database-retry.js';

/** Session-level advisory lock key under which replicas migrate one at a time ("CleverA" in ASCII). */
export const MIGRATION_LOCK_KEY = 0x43_6c_65_76_65_72_41;

/**
 * TypeORM's check of the migrations run, without its look into information_schema for the migrations
 * table: that view's first use in a fresh backend was about 30 ms of an embedded start, where to_regclass
 * answers from the catalog caches. The migrations are still TypeORM's own, in its order.
 */
class MigrationCheck extends MigrationExecutor {
  override async getExecutedMigrations(): Promise<Migration[]> {
    const table = this.dataSource.options.migrationsTableName ?? 'migrations';
    const [{ present }] = await this.dataSource.query<{ present: boolean }[]>(
      'SELECT to_regclass($1) IS NOT NULL AS present',
      [table],
    );
    if (!present) return [];
    const rows = await this.dataSource.query<{ name: string }[]>(
      `SELECT name FROM ${this.dataSource.driver.escape(table)}`,
    );
    return rows.map(({ name }) => new Migration(undefined, 0, name));
  }
}

/** Names of the migrations the database has not run yet, oldest first. */
export async function pendingMigrations(dataSource: DataSource): Promise<string[]> {
  const pending = await new MigrationCheck(dataSource).getPendingMigrations();
  return pending.map((migration) => migration.name);
}

/**
 * The startup policy of docs/protocol.md §9, on an initialised (or initialisable) DataSource. Embedded:
 * migrate. PostgreSQL: refuse to start on a pending migration unless CLEVERAGENTS_MIGRATE_ON_START
 * is set, in which case migrate under an advisory lock so that replicas starting together take turns.
 */
export async function prepareDatabase(
  dataSource: DataSource,
  config: Pick<AppConfig, 'migrateOnStart'>,
  logger: LoggerService = new Logger('Database'),
): Promise<void> {
  if (!dataSource.isInitialized) await dataSource.initialize();
  if (dataSource instanceof EmbeddedDataSource) {
    // One connection only: no advisory lock (it would hold the connection the migrations need).
    await runPending(dataSource, logger, `embedded database in ${dataSource.dataDir}`);
    return;
  }
  if (!config.migrateOnStart) {
    const pending = await pendingMigrations(dataSource);
    if (pending.length > 0) throw new PendingMigrationsError(pending);
    return;
  }
  await withMigrationLock(dataSource, () => runPending(dataSource, logger, 'PostgreSQL database'));
}

/**
 * Runs `work` holding the session-level advisory lock replicas migrate under (PostgreSQL); the embedded
 * database has one client anyway (and a lock would hold the connection the work needs).
 */
export async function withMigrationLock<T>(dataSource: DataSource, work: () => Promise<T>): Promise<T> {
  if (dataSource instanceof EmbeddedDataSource) return work();
  const lockHolder = dataSource.createQueryRunner();
  await lockHolder.connect();
  try {
    await lockHolder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      return await work();
    } finally {
      await lockHolder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await lockHolder.release();
  }
}

async function runPending(dataSource: DataSource, logger: LoggerService, what: string): Promise<void> {
  const pending = await pendingMigrations(dataSource);
  if (pending.length === 0) return;
  logger.log(`Migrating the ${what}: ${pending.join(', ')}`);
  await dataSource.runMigrations({ transaction: 'all' });
  logger.log(`Migrated the ${what}: ${pending.length} migration(s) applied`);
}

/**
 * Creates, initialises and prepares the server's DataSource. PostgreSQL not taking connections yet
 * (starting, failing over) is waited for up to `databaseConnectMs` (CLEVERAGENTS_DATABASE_CONNECT_SECONDS),
 * logging that it waits; then DatabaseUnreachableError names DATABASE_URL. On failure nothing stays
 * open: the connection is closed and the embedded data directory unlocked before the error propagates.
 */
export async function openDatabase(
  config: AppConfig,
  logger: LoggerService,
  options: CreateDataSourceOptions,
): Promise<DataSource> {
  const deadline = Date.now() + config.databaseConnectMs;
  let delay = 250;
  for (let attempt = 1; ; attempt++) {
    const dataSource = await createDataSource(config, { purpose: 'CleverAgents server', ...options });
    try {
      await prepareDatabase(dataSource, config, logger);
      return dataSource;
    } catch (error) {
      await dataSource.destroy().catch(() => undefined);
      if (config.database.kind !== 'postgres' || !isTransientDatabaseError(error)) throw error;
      const url = maskedUrl(config.database.url);
      if (Date.now() + delay > deadline) throw new DatabaseUnreachableError(url, config.databaseConnectMs, error);
      if (attempt === 1) {
        logger.warn(`PostgreSQL at ${url} does not take connections yet (${String(error)}): waiting for it`);
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 2000);
    }
  }
}

/** DATABASE_URL with its password replaced, for messages. */
export function maskedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '****';
    return parsed.toString();
  } catch {
    return '(an unparseable DATABASE_URL)';
  }
}
