// What the test run knows about PostgreSQL on this machine, without loading the application: suites
// decide at load time whether they can run (test/support/requirements.ts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** Set by test/global-setup.ts: the admin URL of a reachable PostgreSQL, or '' when there is none. */
const POSTGRES_ADMIN_URL_ENV = 'CLEVERAGENTS_TEST_POSTGRES_ADMIN_URL';

/** PostgreSQL's admin URL when one answered in global setup (or TEST_DATABASE_URL is set), else undefined. */
export function postgresAdminUrl(): string | undefined {
  const probed = process.env[POSTGRES_ADMIN_URL_ENV];
  if (probed !== undefined) return probed || undefined;
  return process.env.TEST_DATABASE_URL || undefined;
}

/** Where PostgreSQL's server binaries are installed (Debian/Ubuntu layout), newest first. */
const BIN_DIRS = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'];

/** The directory holding initdb and pg_ctl, or undefined when this machine has none. */
export function postgresBinaries(): string | undefined {
  return BIN_DIRS.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
}
