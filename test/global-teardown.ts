// Loaded like global-setup.ts: packages only, no sibling .ts imports.
import { rm } from 'node:fs/promises';
import pg from 'pg';

/** Removes the embedded template and drops the databases of this run that a crashed test file left. */
export default async function globalTeardown(): Promise<void> {
  const template = process.env.CLEVERAGENTS_TEST_EMBEDDED_TEMPLATE;
  if (template) await rm(template, { recursive: true, force: true });
  const adminUrl = process.env.CLEVERAGENTS_TEST_POSTGRES_ADMIN_URL;
  const runId = process.env.CLEVERAGENTS_TEST_RUN_ID;
  if (!adminUrl || !runId) return;
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
      [`cleveragents_test_${runId}_`],
    );
    for (const { datname } of rows) {
      await client.query(`DROP DATABASE IF EXISTS "${datname.replace(/"/g, '""')}" WITH (FORCE)`);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}
