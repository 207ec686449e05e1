import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';

/*
 * A suite that needs PostgreSQL names itself when it skips, and fails instead of skipping where the run
 * requires PostgreSQL (CI). Jest runs a fixture suite in a process of its own, without the global setup
 * (which would probe the machine's PostgreSQL), so each case decides what the fixture sees.
 */

const FIXTURE = 'test/fixtures/requirements/needs-postgres.fixture.ts';
const CONFIG = JSON.stringify({
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  rootDir: process.cwd(),
  roots: ['<rootDir>/test/fixtures/requirements'],
  testMatch: ['**/*.fixture.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.jest.json' }] },
});

function runFixture(env: Record<string, string>): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, ['node_modules/jest/bin/jest.js', '--config', CONFIG, '--ci', FIXTURE], {
    encoding: 'utf8',
    env: {
      ...process.env,
      NODE_OPTIONS: '--experimental-vm-modules',
      TEST_DATABASE_URL: '',
      CLEVERAGENTS_TEST_REQUIRE_POSTGRES: '',
      ...env,
    },
    timeout: 120_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('suites that need PostgreSQL', () => {
  it('skip under a title that names what is missing, and say so in the output', () => {
    const run = runFixture({ CLEVERAGENTS_TEST_POSTGRES_ADMIN_URL: '' });
    expect(run.output).toContain(
      'SKIPPED "a fixture suite that needs PostgreSQL": needs a running PostgreSQL server; none answered',
    );
    expect(run.output).toMatch(/Tests:\s+1 skipped, 1 total/);
    expect(run.status).toBe(0);
  });

  it('fail, naming what is missing, where the run requires PostgreSQL', () => {
    const run = runFixture({ CLEVERAGENTS_TEST_POSTGRES_ADMIN_URL: '', CLEVERAGENTS_TEST_REQUIRE_POSTGRES: '1' });
    expect(run.output).toContain(
      'a fixture suite that needs PostgreSQL needs a running PostgreSQL server, and this run requires it',
    );
    expect(run.output).toMatch(/Tests:\s+1 failed, 1 total/);
    expect(run.status).toBe(1);
  });

  it('run when PostgreSQL answered', () => {
    const run = runFixture({ CLEVERAGENTS_TEST_POSTGRES_ADMIN_URL: 'postgres://postgres@127.0.0.1:5432/postgres' });
    expect(run.output).not.toContain('SKIPPED');
    expect(run.output).toMatch(/Tests:\s+1 passed, 1 total/);
    expect(run.status).toBe(0);
  });
});
