// Jest loads this file outside its module mapper: it can import packages and the build's compiled modules
// (dist/), but no sibling .ts files. It hands test/support/database.ts what it prepares through the
// environment variables CLEVERAGENTS_TEST_RUN_ID, CLEVERAGENTS_TEST_RUN_DIR, CLEVERAGENTS_TEST_POSTGRES_ADMIN_URL,
// CLEVERAGENTS_TEST_EMBEDDED_TEMPLATE, CLEVERAGENTS_TEST_POSTGRES_TEMPLATE and CLEVERAGENTS_TEST_NO_TEMPLATES.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import type { AppConfig } from '../packages/server/src/config/app.config.js';

/** The server package: its dist/, migrations/ and tsconfig.migrations.json. */
const ROOT = fileURLToPath(new URL('../packages/server', import.meta.url));
const SILENT = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** A module of the build, typed as its source. */
async function built<T>(module: string): Promise<T> {
  return (await import(pathToFileURL(join(ROOT, 'dist', module)).href)) as T;
}

/** The migration files of `dir` without their extension (as embedded-template.ts's migrationFiles() picks them). */
function migrationNames(dir: string, extension: '.ts' | '.js'): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(extension) && !name.endsWith(`.d${extension}`) && !/\.(spec|e2e-spec)\./.test(name))
    .map((name) => name.slice(0, -extension.length))
    .sort();
}

/**
 * Why the build cannot make the templates, or undefined when it can: the templates are migrated by the
 * build's code, so dist/migrations must be exactly what tsconfig.migrations.json makes of migrations/ now.
 * Each migration is compiled again here and compared with its compiled file, so that a migration edited
 * since the build is noticed as well as one added or removed.
 */
async function staleBuild(): Promise<string | undefined> {
  const rebuild = 'run `npm run build` (npm test does)';
  if (!existsSync(join(ROOT, 'dist', 'database', 'database.startup.js'))) return `dist/ is missing: ${rebuild}`;
  const sources = migrationNames(join(ROOT, 'migrations'), '.ts');
  const compiled = migrationNames(join(ROOT, 'dist', 'migrations'), '.js');
  const extra = compiled.filter((name) => !sources.includes(name));
  if (extra.length > 0) {
    return `dist/migrations holds ${extra.join(', ')}, which migrations/ does not: remove dist/ and ${rebuild}`;
  }
  const ts = (await import('typescript')).default;
  const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.migrations.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
  // package.json makes every file an ES module, which `module: node16…nodenext` decides per file and a lone file cannot.
  const { module } = parsed!.options;
  const perFile = module !== undefined && module >= ts.ModuleKind.Node16 && module <= ts.ModuleKind.NodeNext;
  const compilerOptions = { ...parsed!.options, module: perFile ? ts.ModuleKind.ESNext : module };
  const differing = sources.filter((name) => {
    const file = join(ROOT, 'dist', 'migrations', `${name}.js`);
    if (!existsSync(file)) return true;
    const source = readFileSync(join(ROOT, 'migrations', `${name}.ts`), 'utf8');
    const { outputText } = ts.transpileModule(source, { compilerOptions, fileName: `${name}.ts` });
    return outputText !== readFileSync(file, 'utf8');
  });
  if (differing.length > 0) {
    return `dist/migrations was built from other migrations than migrations/ holds (${differing.join(', ')}): ${rebuild}`;
  }
  return undefined;
}

/**
 * The run's migrated embedded template: a copy of the build's (dist/embedded-template) when it holds the
 * schema of dist/migrations, else one migrated here by the build step's own function.
 */
async function prepareEmbeddedTemplate(template: string): Promise<void> {
  type Template = typeof import('../packages/server/src/database/embedded-template.js');
  type Writer = typeof import('../packages/server/src/database/embedded-template.writer.js');
  const { readManifest, schemaDigest, TEMPLATE_FOLDER } = await built<Template>('database/embedded-template.js');
  const build = join(ROOT, 'dist', TEMPLATE_FOLDER);
  const current = (dir: string) =>
    readManifest(dir)?.digest === schemaDigest().digest && existsSync(join(dir, 'pglite', 'PG_VERSION'));
  if (current(build)) {
    // A build running meanwhile may replace that folder under the copy: then the copy fails and is not used.
    const copied = await cp(build, template, { recursive: true }).then(
      () => true,
      () => false,
    );
    if (copied && current(template)) return;
    await rm(template, { recursive: true, force: true });
  }
  const { writeEmbeddedTemplate } = await built<Writer>('database/embedded-template.writer.js');
  await writeEmbeddedTemplate(template);
}

async function withAdminClient<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The run's migrated PostgreSQL template database, migrated as the server migrates at start
 * (prepareDatabase), then marked a template that takes no connection: a connection to it would make
 * every CREATE DATABASE … TEMPLATE fail while it lasts. test/global-teardown.ts drops it.
 */
async function preparePostgresTemplate(adminUrl: string, name: string): Promise<void> {
  type Factory = typeof import('../packages/server/src/database/data-source.factory.js');
  type Startup = typeof import('../packages/server/src/database/database.startup.js');
  await withAdminClient(adminUrl, async (client) => {
    await client.query(`CREATE DATABASE "${name}"`);
    await client.query(`ALTER DATABASE "${name}" SET synchronous_commit = off`);
  });
  try {
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const { createDataSource } = await built<Factory>('database/data-source.factory.js');
    const { prepareDatabase } = await built<Startup>('database/database.startup.js');
    const config = { database: { kind: 'postgres', url: url.toString() } } as AppConfig;
    const dataSource = await createDataSource(config, { entities: [], purpose: 'test template' });
    try {
      await prepareDatabase(dataSource, { migrateOnStart: true }, SILENT);
    } finally {
      await dataSource.destroy();
    }
    await withAdminClient(adminUrl, (client) =>
      client.query(`ALTER DATABASE "${name}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`),
    );
  } catch (error) {
    await dropTemplate(adminUrl, name);
    throw error;
  }
}

/** What test/global-teardown.ts does to the template, for a setup that fails: Jest runs no teardown then. */
async function dropTemplate(adminUrl: string, name: string): Promise<void> {
  await withAdminClient(adminUrl, async (client) => {
    await client.query(`ALTER DATABASE "${name}" WITH IS_TEMPLATE false`).catch(() => undefined);
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}

/**
 * The admin URL of the PostgreSQL the database suites run on as well as the embedded database, or ''
 * when none answers. TEST_DATABASE_URL names the server explicitly: then it must answer, as it must
 * when CLEVERAGENTS_TEST_REQUIRE_POSTGRES=1 (CI).
 */
async function probePostgres(): Promise<string> {
  const adminUrl = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  try {
    await withAdminClient(adminUrl, (client) => client.query('SELECT 1'));
    return adminUrl;
  } catch (error) {
    const where = new URL(adminUrl).host;
    const required = Boolean(process.env.TEST_DATABASE_URL) || process.env.CLEVERAGENTS_TEST_REQUIRE_POSTGRES === '1';
    if (required) {
      throw new Error(
        `PostgreSQL at ${where} is required for the tests but did not answer: ${(error as Error).message}`,
      );
    }
    console.warn(
      `\nNote: no PostgreSQL answered at ${where} (${(error as Error).message}); database suites run on the ` +
        `embedded database only. Set TEST_DATABASE_URL to run them on PostgreSQL too.\n`,
    );
    return '';
  }
}

/**
 * Prepares, once per run, what every test database starts as: a migrated embedded data directory to
 * copy and a migrated PostgreSQL database to clone, so that no server a test starts migrates. Both are
 * named after the run, so that runs sharing the machine keep apart. The workers start after this and
 * inherit the environment it sets. When the build is not that of today's migrations there are no
 * templates, and a test that asks for a database fails saying why; the other tests run.
 */
export default async function globalSetup(): Promise<void> {
  const runId = randomBytes(4).toString('hex');
  const adminUrl = await probePostgres();
  const runDir = join(tmpdir(), `cleveragents-test-${runId}`);
  await mkdir(runDir);
  process.env.CLEVERAGENTS_TEST_RUN_ID = runId;
  process.env.CLEVERAGENTS_TEST_RUN_DIR = runDir;
  process.env.CLEVERAGENTS_TEST_POSTGRES_ADMIN_URL = adminUrl;
  const stale = await staleBuild();
  if (stale) {
    process.env.CLEVERAGENTS_TEST_NO_TEMPLATES = `No migrated test database templates: ${stale}.`;
    console.warn(`\nNote: ${process.env.CLEVERAGENTS_TEST_NO_TEMPLATES} Tests that need a database fail.\n`);
    return;
  }
  const embedded = join(runDir, 'embedded-template');
  const postgres = `cleveragents_test_${runId}_template`;
  const prepared = await Promise.allSettled([
    prepareEmbeddedTemplate(embedded),
    adminUrl && preparePostgresTemplate(adminUrl, postgres),
  ]);
  const failed = prepared.find((outcome) => outcome.status === 'rejected');
  if (failed) {
    await rm(runDir, { recursive: true, force: true });
    if (adminUrl && prepared[1].status === 'fulfilled') await dropTemplate(adminUrl, postgres);
    throw failed.reason;
  }
  process.env.CLEVERAGENTS_TEST_EMBEDDED_TEMPLATE = embedded;
  if (adminUrl) process.env.CLEVERAGENTS_TEST_POSTGRES_TEMPLATE = postgres;
}
