import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DataSource, type DataSourceOptions, type Logger, type LoggerOptions, type MigrationInterface } from 'typeorm';
import type { AppConfig } from '../config/app.config.js';
import { bundledMigrations } from './bundled-migrations.js';
import { DataDirLock } from './data-dir.lock.js';
import { openEmbedded, takeEarlyOpening } from './embedded-opening.js';
import { migrationFiles, migrationsLocation } from './embedded-template.js';
import type { PGliteThread } from './pglite-thread.js';
import type { EntityClass } from './entity-class.js';

export { EMBEDDED_PGDATA } from './embedded-opening.js';

export interface CreateDataSourceOptions {
  /**
   * The tables the DataSource maps: each folder declares its own (its `*.entities.ts`), and the
   * composition root (src/entities.ts) gathers them.
   */
  entities: readonly EntityClass[];
  /** Recorded in the embedded lock file, so a refused second process learns who holds it. */
  purpose?: string;
  logging?: LoggerOptions;
  /** A logger of its own: TypeORM's CLI then cannot widen `logging` (it turns on every query). */
  logger?: Logger;
}

type MigrationClass = new () => MigrationInterface;

/**
 * Every migration class in the migrations folder. Imported here rather than through TypeORM's glob
 * loading because TypeORM imports from inside a CommonJS module, which under Jest binds to the first
 * test file's environment and fails in every later one; an import() in this ES module does not.
 */
export async function loadMigrations(): Promise<MigrationClass[]> {
  const { dir, extension } = migrationsLocation();
  const files = migrationFiles();
  const classes: MigrationClass[] = [];
  for (const file of files) {
    const path = join(dir, file);
    const bundled = bundledMigrations.get(file);
    // In the server's bundle, a CommonJS script (scripts/bundle-server.mjs), by require(), which loads an ES
    // module on every Node the server runs on (package.json engines); elsewhere (tsc's ES modules, Jest) by import().
    const module = (bundled ??
      (typeof require === 'function'
        ? // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle's own require (see above)
          require(path)
        : await import(extension === '.js' ? pathToFileURL(path).href : path))) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      if (isMigrationClass(value)) classes.push(value);
    }
  }
  return classes;
}

function isMigrationClass(value: unknown): value is MigrationClass {
  if (typeof value !== 'function') return false;
  const prototype = (value as { prototype?: Partial<MigrationInterface> }).prototype;
  return typeof prototype?.up === 'function' && typeof prototype.down === 'function';
}

async function baseOptions(options: CreateDataSourceOptions) {
  return {
    type: 'postgres' as const,
    entities: [...options.entities],
    migrations: await loadMigrations(),
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    logging: options.logging ?? false,
    ...(options.logger ? { logger: options.logger } : {}),
    applicationName: 'cleveragents-server',
  };
}

/**
 * A DataSource over an embedded PGlite. PGlite is a single connection: the pool holds exactly one
 * client that is never recycled, so a query issued outside a running transaction (instead of through
 * its EntityManager) waits for that transaction forever. `destroy()` also closes PGlite and frees the
 * data directory.
 */
export class EmbeddedDataSource extends DataSource {
  constructor(
    options: DataSourceOptions,
    readonly pglite: PGliteThread,
    private readonly lock: DataDirLock,
  ) {
    super(options);
  }

  get dataDir(): string {
    return this.lock.dataDir;
  }

  override async destroy(): Promise<void> {
    try {
      if (this.isInitialized) await super.destroy();
    } finally {
      try {
        await this.pglite.close();
      } finally {
        this.lock.release();
      }
    }
  }
}

/**
 * Builds the server's DataSource (not yet initialised) from the configuration: PostgreSQL when
 * DATABASE_URL is set, else an embedded PGlite in CLEVERAGENTS_DATA_DIR (created if missing, locked
 * against a second process until `destroy()`). Never synchronizes: the schema comes from migrations.
 */
export async function createDataSource(config: AppConfig, options: CreateDataSourceOptions): Promise<DataSource> {
  const base = await baseOptions(options);
  if (config.database.kind === 'postgres') {
    return new DataSource({ ...base, url: config.database.url, connectTimeoutMS: 10_000 });
  }
  const dataDir = config.database.dataDir;
  const { lock, pglite: opening } =
    takeEarlyOpening(dataDir) ?? openEmbedded(dataDir, options.purpose ?? `pid ${process.pid}`);
  try {
    const pglite = await opening;
    return new EmbeddedDataSource(
      {
        ...base,
        // Names node-postgres wants; the connection goes to PGlite's thread, not to a host.
        host: 'localhost',
        port: 5432,
        username: 'postgres',
        password: 'postgres',
        database: 'postgres',
        poolSize: 1,
        // node-postgres takes a ready-made `connection`; idle timeout 0 keeps the one client forever.
        extra: { connection: pglite.connection(), idleTimeoutMillis: 0 },
      },
      pglite,
      lock,
    );
  } catch (error) {
    lock.release();
    throw error;
  }
}
