import pg from 'pg';

/** Set by test/global-setup.ts: the admin URL of a reachable PostgreSQL, or '' when there is none. */
export const POSTGRES_ADMIN_URL_ENV = 'CLEVERAGENTS_TEST_POSTGRES_ADMIN_URL';
/** Set by test/global-setup.ts: tags this run's databases, so that teardown drops what a crash left. */
export const TEST_RUN_ID_ENV = 'CLEVERAGENTS_TEST_RUN_ID';
export const TEST_DATABASE_PREFIX = 'cleveragents_test_';

/** Where to look for PostgreSQL: TEST_DATABASE_URL, else the local default server. */
export function candidateAdminUrl(): string {
  return process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
}

/** Runs `work` on a short-lived admin connection. */
export async function withAdminClient<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The URL of `database` on the same server and credentials as `adminUrl`. */
export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
