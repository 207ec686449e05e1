// Jest loads this file outside its module mapper: it can import packages but no sibling .ts files. It
// hands test/support/database.ts what it prepares through the environment variables
// CLEVERAGENTS_TEST_RUN_ID, CLEVERAGENTS_TEST_EMBEDDED_TEMPLATE and CLEVERAGENTS_TEST_POSTGRES_ADMIN_URL.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * A fresh embedded data directory costs seconds of initdb; a copy of one costs milliseconds. So the
 * run initialises one empty PGlite directory (no migrations) that test/support/database.ts copies.
 */
async function createEmbeddedTemplate(runId: string): Promise<string> {
  const dir = join(tmpdir(), `cleveragents-test-template-${runId}`);
  mkdirSync(dir, { recursive: true });
  // PGlite's CommonJS entry is broken; this file compiles to an ES module (package.json "type": "module"
  // under `module: nodenext`), so the import() loads its ES module entry.
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = await PGlite.create(join(dir, 'pglite'));
  await pglite.close();
  return dir;
}

/**
 * Probes PostgreSQL once per run and hands the answer to the test workers through the environment
 * (workers start after this and inherit it). Database suites run on the embedded database always,
 * and on PostgreSQL too when one answers. TEST_DATABASE_URL names the server explicitly: then it must
 * answer, as it must when CLEVERAGENTS_TEST_REQUIRE_POSTGRES=1 (CI).
 */
export default async function globalSetup(): Promise<void> {
  const runId = randomBytes(4).toString('hex');
  process.env.CLEVERAGENTS_TEST_RUN_ID = runId;
  process.env.CLEVERAGENTS_TEST_EMBEDDED_TEMPLATE = await createEmbeddedTemplate(runId);
  const adminUrl = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    process.env.CLEVERAGENTS_TEST_POSTGRES_ADMIN_URL = adminUrl;
  } catch (error) {
    const where = new URL(adminUrl).host;
    const required = Boolean(process.env.TEST_DATABASE_URL) || process.env.CLEVERAGENTS_TEST_REQUIRE_POSTGRES === '1';
    if (required) {
      throw new Error(
        `PostgreSQL at ${where} is required for the tests but did not answer: ${(error as Error).message}`,
      );
    }
    process.env.CLEVERAGENTS_TEST_POSTGRES_ADMIN_URL = '';
    console.warn(
      `\nNote: no PostgreSQL answered at ${where} (${(error as Error).message}); database suites run on the ` +
        `embedded database only. Set TEST_DATABASE_URL to run them on PostgreSQL too.\n`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}
