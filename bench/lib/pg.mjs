// Scratch databases on the benchmark's PostgreSQL.
import pg from 'pg';
import { cpuSeconds } from './proc.mjs';

export const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function dbUrl(name) {
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function withClient(url, fn) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createScratchDb(name) {
  await withClient(PG_ADMIN_URL, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${name}"`);
  });
  return dbUrl(name);
}

export async function dropScratchDb(name) {
  await withClient(PG_ADMIN_URL, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

export async function postgresVersion() {
  return withClient(PG_ADMIN_URL, async (c) => (await c.query('SHOW server_version')).rows[0].server_version);
}

/**
 * CPU seconds (utime + stime, /proc/<pid>/stat) of every PostgreSQL backend connected to database `name`,
 * found through pg_stat_activity; a Map pid → seconds. Empty when PostgreSQL runs elsewhere (no /proc to read).
 */
export async function backendCpu(name) {
  const rows = await withClient(
    PG_ADMIN_URL,
    async (c) => (await c.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [name])).rows,
  );
  const out = new Map();
  for (const { pid } of rows) {
    try {
      out.set(pid, cpuSeconds(pid));
    } catch {
      /* gone already, or not on this machine */
    }
  }
  return out;
}

/**
 * Backend CPU spent between two backendCpu readings: growth of the backends seen in both, plus all of a
 * backend that appeared in between (its start-up included). A backend that exited in between is lost.
 * NaN when neither reading saw a backend.
 */
export function backendCpuSpent(before, after) {
  if (before.size === 0 && after.size === 0) return NaN;
  let spent = 0;
  for (const [pid, s] of after) spent += s - (before.get(pid) ?? 0);
  return spent;
}
