// Loaded like global-setup.ts: packages only, no sibling .ts imports.
import { rm } from 'node:fs/promises';
import pg from 'pg';

/**
 * Removes the run's folder (the embedded templates) and drops the databases of this run: its template,
 * and those that a crashed test file left.
 */
export default async function globalTeardown(): Promise<void> {
  const runDir = process.env.CLEVERAGENTS_TEST_RUN_DIR;
  if (runDir) await rm(runDir, { recursive: true, force: true });
  const adminUrl = process.env.CLEVERAGENTS_TEST_POSTGRES_ADMIN_URL;
  const runId = process.env.CLEVERAGENTS_TEST_RUN_ID;
  if (!adminUrl || !runId) return;
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ datname: string; datistemplate: boolean }>(
      'SELECT datname, datistemplate FROM pg_database WHERE starts_with(datname, $1)',
      [`cleveragents_test_${runId}_`],
    );
    for (const { datname, datistemplate } of rows) {
      const name = `"${datname.replace(/"/g, '""')}"`;
      // PostgreSQL drops no template database.
      if (datistemplate) await client.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE false`);
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}
