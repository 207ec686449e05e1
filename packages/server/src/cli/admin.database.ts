import type { LoggerService } from '@nestjs/common';
import { MigrationExecutor, type DataSource } from 'typeorm';
import type { AppConfig } from '../config/app.config.js';
import { createDataSource } from '../database/data-source.factory.js';
import { ENTITIES } from '../entities.js';
import { DataDirLockedError, PendingMigrationsError } from '../database/database.errors.js';
import { pendingMigrations, prepareDatabase, withMigrationLock } from '../database/database.startup.js';
import { DatabaseUnavailableError, InvalidStateError } from './admin.exit-codes.js';

/** The configured database in words, without credentials: for messages. */
export function describeDatabase(config: AppConfig): string {
  if (config.database.kind === 'embedded') return `embedded database in ${config.database.dataDir}`;
  try {
    const url = new URL(config.database.url);
    url.password = '';
    url.search = '';
    return `PostgreSQL database ${url.toString()}`;
  } catch {
    return 'PostgreSQL database of DATABASE_URL';
  }
}

/**
 * Opens the configured database, never migrating it (unlike the server's startup). The embedded one
 * is refused at once, with DataDirLockedError, when its lock file names a live process: the CLI never
 * waits for a server to let go. Any other failure to open or connect is DatabaseUnavailableError.
 */
export async function openAdminDatabase(config: AppConfig, purpose: string): Promise<DataSource> {
  const what = describeDatabase(config);
  let dataSource: DataSource;
  try {
    dataSource = await createDataSource(config, { purpose, entities: ENTITIES });
  } catch (error) {
    if (error instanceof DataDirLockedError || config.database.kind === 'postgres') throw error;
    throw new DatabaseUnavailableError(what, error);
  }
  try {
    await dataSource.initialize();
    return dataSource;
  } catch (error) {
    await dataSource.destroy().catch(() => undefined);
    throw new DatabaseUnavailableError(what, error);
  }
}

/** Refuses (PendingMigrationsError, exit 6) a database whose schema this version would not run on. */
export async function requireCurrentSchema(dataSource: DataSource): Promise<void> {
  const pending = await pendingMigrations(dataSource);
  if (pending.length > 0) throw new PendingMigrationsError(pending);
}

export interface MigrationState {
  name: string;
  timestamp: number;
  applied: boolean;
  /** False for a migration the database ran that this version does not have (a newer version ran it). */
  known: boolean;
}

/** Every migration this version has or the database ran, oldest first. */
export async function migrationStates(dataSource: DataSource): Promise<MigrationState[]> {
  const executor = new MigrationExecutor(dataSource);
  const executed = await executor.getExecutedMigrations();
  const pending = await executor.getPendingMigrations();
  const knownNames = new Set(dataSource.migrations.map((m) => m.name ?? m.constructor.name));
  const states: MigrationState[] = [
    ...executed.map((m) => ({ name: m.name, timestamp: m.timestamp, applied: true, known: knownNames.has(m.name) })),
    ...pending.map((m) => ({ name: m.name, timestamp: m.timestamp, applied: false, known: true })),
  ];
  return states.sort((a, b) => a.timestamp - b.timestamp || a.name.localeCompare(b.name));
}

const quiet: LoggerService = { log: () => undefined, error: () => undefined, warn: () => undefined };

/**
 * Applies the pending migrations as the server does at start when told to migrate: the same code,
 * under the same advisory lock on PostgreSQL. Returns the names it applied.
 */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const before = await pendingMigrations(dataSource);
  if (before.length === 0) return [];
  await prepareDatabase(dataSource, { migrateOnStart: true }, quiet);
  const after = new Set(await pendingMigrations(dataSource));
  return before.filter((name) => !after.has(name));
}

/** Reverts the last applied migration, under the migration lock; returns its name. */
export async function revertLastMigration(dataSource: DataSource): Promise<string> {
  return withMigrationLock(dataSource, async () => {
    const applied = (await migrationStates(dataSource)).filter((m) => m.applied);
    const last = applied.at(-1);
    if (!last) throw new InvalidStateError('No migration is applied: nothing to revert.');
    if (!last.known) {
      throw new InvalidStateError(
        `The last applied migration, ${last.name}, is not part of this version (a newer version applied it); ` +
          `revert it with that version's cleveragents-admin.`,
      );
    }
    await dataSource.undoLastMigration({ transaction: 'all' });
    return last.name;
  });
}
