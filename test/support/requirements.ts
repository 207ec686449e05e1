import { existsSync } from 'node:fs';
import { describe, it } from '@jest/globals';
import { postgresAdminUrl, postgresBinaries } from './postgres-env.js';

/** Set by CI (.ci/run): a suite that needs PostgreSQL fails when PostgreSQL is missing, never skips. */
const REQUIRE_POSTGRES_ENV = 'CLEVERAGENTS_TEST_REQUIRE_POSTGRES';

/** Something a suite needs from the machine, and why it is missing (undefined: it is there). */
export interface Requirement {
  /** What the suite needs, as a reader would say it: "a PostgreSQL server". */
  readonly what: string;
  /** Why it is not available here, or undefined when it is. */
  readonly missing: string | undefined;
  /** True when a missing requirement must fail the run rather than skip the suite (CI). */
  readonly required: boolean;
}

/** A running PostgreSQL server (global setup probed it, or TEST_DATABASE_URL names it). */
export function runningPostgres(): Requirement {
  return {
    what: 'a running PostgreSQL server',
    missing: postgresAdminUrl() ? undefined : 'none answered on 127.0.0.1:5432 (set TEST_DATABASE_URL to name one)',
    required: process.env[REQUIRE_POSTGRES_ENV] === '1',
  };
}

/** PostgreSQL's server binaries (initdb, pg_ctl), to start a throwaway cluster the test controls. */
export function postgresServerBinaries(): Requirement {
  return {
    what: "PostgreSQL's server binaries (initdb, pg_ctl)",
    missing: postgresBinaries() ? undefined : 'no initdb and pg_ctl under the usual PostgreSQL directories',
    required: process.env[REQUIRE_POSTGRES_ENV] === '1',
  };
}

/** The line a skipped suite prints, and the title it carries in Jest's report. */
export function skipNotice(title: string, need: Requirement): string {
  return `SKIPPED "${title}": needs ${need.what}; ${need.missing ?? ''}`;
}

/**
 * `describe` for a suite that needs something the machine may lack. When it is there, the suite runs.
 * When it is missing, the suite is skipped under a title that says why, with a warning naming it in the
 * output; where the run requires it (CI), the suite instead fails with one test that says what is missing.
 */
export function describeNeeding(need: Requirement, title: string, suite: () => void): void {
  if (need.missing === undefined) {
    describe(title, suite);
    return;
  }
  if (need.required) {
    describe(title, () => {
      it(`has ${need.what}`, () => {
        throw new Error(`${title} needs ${need.what}, and this run requires it: ${need.missing}`);
      });
    });
    return;
  }
  const notice = skipNotice(title, need);
  console.warn(notice);
  describe.skip(notice, suite);
}

/** Root, loop devices and mkfs.ext4: to mount a small file system of its own that a test fills up. */
export function loopFileSystem(): Requirement {
  const mkfs = ['/usr/sbin/mkfs.ext4', '/sbin/mkfs.ext4'].find((path) => existsSync(path));
  const missing =
    process.getuid?.() !== 0
      ? 'mounting a file system needs root'
      : !existsSync('/dev/loop-control')
        ? 'no loop devices (/dev/loop-control)'
        : mkfs === undefined
          ? 'no mkfs.ext4'
          : undefined;
  return { what: 'a loop-mounted ext4 file system (root)', missing, required: false };
}
