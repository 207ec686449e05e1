import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { AppConfig } from '../../packages/server/src/config/app.config.js';
import { EMBEDDED_PGDATA } from '../../packages/server/src/database/data-source.factory.js';
import { PGliteThread } from '../../packages/server/src/database/pglite-thread.js';
import { postgresAdminUrl } from './postgres-env.js';

export { postgresAdminUrl };

// Names shared with test/global-setup.ts and test/global-teardown.ts, which cannot import this file.

/** Set by test/global-setup.ts: tags this run's databases, so that teardown drops what a crash left. */
const TEST_RUN_ID_ENV = 'CLEVERAGENTS_TEST_RUN_ID';
const TEST_DATABASE_PREFIX = 'cleveragents_test_';
/** Set by test/global-setup.ts: the run's folder, which holds the embedded templates and goes at teardown. */
const TEST_RUN_DIR_ENV = 'CLEVERAGENTS_TEST_RUN_DIR';
/** Set by test/global-setup.ts: an embedded data directory the migrations ran in, to copy. */
const EMBEDDED_TEMPLATE_ENV = 'CLEVERAGENTS_TEST_EMBEDDED_TEMPLATE';
/** Set by test/global-setup.ts: a PostgreSQL database the migrations ran in, to clone. */
const POSTGRES_TEMPLATE_ENV = 'CLEVERAGENTS_TEST_POSTGRES_TEMPLATE';
/** Set by test/global-setup.ts instead of the two above: why it made no template (a stale build). */
const NO_TEMPLATES_ENV = 'CLEVERAGENTS_TEST_NO_TEMPLATES';

/** Runs `work` on a short-lived admin connection. */
async function withAdminClient<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The URL of `database` on the same server and credentials as `adminUrl`. */
function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** What test/global-setup.ts left in `variable`; fails the test saying why when it is not there. */
function fromSetup(variable: string): string {
  const value = process.env[variable];
  if (value) return value;
  throw new Error(
    process.env[NO_TEMPLATES_ENV] || `${variable} is not set: test/global-setup.ts (jest.config.js) did not run`,
  );
}

export type DatabaseKind = 'embedded' | 'postgres';

/**
 * What every test configuration starts from: the protocol suites run the deterministic conformance
 * actor; the execution suites name `local` or `langgraph` themselves.
 */
export const TEST_DEFAULTS: Readonly<Record<string, string>> = {
  NODE_ENV: 'test',
  CLEVERAGENTS_ACTOR_BACKEND: 'conformance',
};

/**
 * A database of its own for one test file (or one test). It holds the schema the migrations make (a copy
 * of the run's template), so a server started on it has nothing to migrate; one created with
 * `{ migrated: false }` is empty, for the tests of the migrations themselves.
 */
export interface TestDatabase {
  readonly kind: DatabaseKind;
  /** The variables that select it: DATABASE_URL, or CLEVERAGENTS_DATA_DIR. */
  readonly env: Readonly<Record<string, string>>;
  /** An AppConfig that points at it; `extraEnv` adds or overrides variables. */
  config(extraEnv?: Record<string, string>): AppConfig;
  /** Drops the database, or removes the data directory. Close DataSources on it first. */
  cleanup(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** False for a database without the schema, which the test migrates itself. Default true. */
  migrated?: boolean;
}

/** One database flavour to run a suite on; `create()` gives a fresh database each call. */
export interface DatabaseTarget {
  readonly kind: DatabaseKind;
  create(options?: TestDatabaseOptions): Promise<TestDatabase>;
}

/**
 * The targets to run database suites on: always `embedded`, plus `postgres` when a server answered.
 * Use as `describe.each(databaseTargets())('on $kind', (target) => …)`.
 */
export function databaseTargets(): DatabaseTarget[] {
  const targets: DatabaseTarget[] = [{ kind: 'embedded', create: createEmbeddedTestDatabase }];
  if (postgresAdminUrl()) targets.push({ kind: 'postgres', create: createTestDatabase });
  return targets;
}

/** An AppConfig for the test database (NODE_ENV=test), with `extraEnv` on top. */
export function testAppConfig(database: TestDatabase, extraEnv: Record<string, string> = {}): AppConfig {
  return AppConfig.fromEnv({ ...TEST_DEFAULTS, ...database.env, ...extraEnv });
}

/**
 * A fresh PostgreSQL database, `cleveragents_test_<run>_<random>`, dropped by `cleanup()`: a clone of the
 * run's migrated template, or empty. Its commits do not wait for the disk (synchronous_commit off, for
 * this database alone): a test never crashes the shared server, so none is lost.
 */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const adminUrl = postgresAdminUrl();
  if (!adminUrl) throw new Error('No PostgreSQL for tests: set TEST_DATABASE_URL or start one on 127.0.0.1:5432');
  const template = options.migrated === false ? undefined : fromSetup(POSTGRES_TEMPLATE_ENV);
  const run = process.env[TEST_RUN_ID_ENV] ?? 'adhoc';
  const name = `${TEST_DATABASE_PREFIX}${run}_${randomBytes(6).toString('hex')}`;
  await withAdminClient(adminUrl, async (client) => {
    await client.query(`CREATE DATABASE ${quoteIdent(name)}${template ? ` TEMPLATE ${quoteIdent(template)}` : ''}`);
    await client.query(`ALTER DATABASE ${quoteIdent(name)} SET synchronous_commit = off`);
  });
  // The data directory holds only the secret key file here; a temporary one keeps tests out of ./data.
  const dataDir = await mkdtemp(join(tmpdir(), 'cleveragents-test-pg-'));
  const env = { DATABASE_URL: databaseUrl(adminUrl, name), CLEVERAGENTS_DATA_DIR: dataDir };
  return {
    kind: 'postgres',
    env,
    config: (extraEnv = {}) => AppConfig.fromEnv({ ...TEST_DEFAULTS, ...env, ...extraEnv }),
    cleanup: async () => {
      await withAdminClient(adminUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`),
      );
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

let emptyEmbedded: Promise<string> | undefined;

/**
 * An initialised embedded data directory without the schema, made on the first call in each worker
 * (initdb takes seconds) and kept in the run's folder. It is initialised rather than missing because
 * the build's server and CLI would fill a missing one from the build's migrated template.
 */
function emptyEmbeddedTemplate(): Promise<string> {
  emptyEmbedded ??= (async () => {
    const dir = join(fromSetup(TEST_RUN_DIR_ENV), `embedded-empty-${process.env.JEST_WORKER_ID ?? process.pid}`);
    if (existsSync(join(dir, EMBEDDED_PGDATA, 'PG_VERSION'))) return dir;
    const work = await mkdtemp(`${dir}.partial-`);
    try {
      const pglite = new PGliteThread(join(work, EMBEDDED_PGDATA));
      await pglite.waitReady;
      await pglite.close();
      await rename(work, dir);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
    return dir;
  })();
  return emptyEmbedded;
}

/**
 * A fresh embedded data directory under the system temp dir, removed by `cleanup()`: a copy of the run's
 * migrated template, or of an empty one.
 */
export async function createEmbeddedTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const template = options.migrated === false ? await emptyEmbeddedTemplate() : fromSetup(EMBEDDED_TEMPLATE_ENV);
  const dataDir = await mkdtemp(join(tmpdir(), 'cleveragents-test-'));
  await cp(join(template, EMBEDDED_PGDATA), join(dataDir, EMBEDDED_PGDATA), { recursive: true });
  const env = { CLEVERAGENTS_DATA_DIR: dataDir };
  return {
    kind: 'embedded',
    env,
    config: (extraEnv = {}) => AppConfig.fromEnv({ ...TEST_DEFAULTS, ...env, ...extraEnv }),
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  };
}

/**
 * Watches every query sent through `dataSource`, both ways the server sends them: `dataSource.query`
 * (TypeORM) and the node-postgres pool's own `query` (src/database/pool-query.ts), which bypasses the
 * former. `seen(sql, params)` is called once per query; `stop()` puts both back.
 */
export function watchQueries(dataSource: DataSource, seen: (sql: string, params: unknown) => void): { stop(): void } {
  const query = dataSource.query.bind(dataSource);
  const pool = (dataSource.driver as unknown as { master: { query: (...args: unknown[]) => unknown } }).master;
  const poolQuery = pool.query.bind(pool);
  const own = [dataSource, pool].map((target) => Object.getOwnPropertyDescriptor(target, 'query'));
  dataSource.query = ((sql: string, params?: unknown[], ...rest: []) => {
    seen(sql, params);
    return query(sql, params, ...rest);
  }) as DataSource['query'];
  pool.query = (...args: unknown[]) => {
    const [text, params] = args;
    seen(typeof text === 'string' ? text : String((text as { text?: unknown } | null)?.text), params);
    return poolQuery(...args);
  };
  return {
    stop: () => {
      [dataSource, pool].forEach((target, i) => {
        const descriptor = own[i];
        if (descriptor) Object.defineProperty(target, 'query', descriptor);
        else Reflect.deleteProperty(target, 'query');
      });
    },
  };
}
