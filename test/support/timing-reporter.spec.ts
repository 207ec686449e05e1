import { describe, expect, it } from '@jest/globals';
import { createEmptyTestResult, type TestResult } from '@jest/test-result';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import TimingReporter, {
  SLOWEST_TESTS,
  slowestLines,
  suiteTiming,
  testTimings,
  timingMarkdown,
  timingReport,
} from './timing-reporter.mjs';

/*
 * The timing reporter jest.config.js adds to every run: Jest's own result objects in, the files it writes
 * and the lines it prints out; and once through a real Jest run, which is what proves Jest loads it.
 */

const REPORTER = fileURLToPath(new URL('./timing-reporter.mjs', import.meta.url));

function result(
  counts: Partial<Pick<TestResult, 'numPassingTests' | 'numFailingTests' | 'numPendingTests' | 'numTodoTests'>>,
  tests: { name: string; ms: number | null; status?: 'passed' | 'failed' | 'pending' }[] = [],
): TestResult {
  const testResults = tests.map(({ name, ms, status = 'passed' }) => ({
    ancestorTitles: [],
    duration: ms,
    failureDetails: [],
    failureMessages: [],
    fullName: name,
    numPassingAsserts: 0,
    status,
    title: name,
  }));
  return { ...createEmptyTestResult(), ...counts, testResults };
}

describe('timing reporter', () => {
  it('a file: its path from the root, wall time, counts, and failed when a test or the file failed', () => {
    expect(
      suiteTiming('/r', '/r/test/a.spec.ts', 1000.4, 3500.9, result({ numPassingTests: 3, numPendingTests: 1 })),
    ).toEqual({
      path: 'test/a.spec.ts',
      ms: 2501,
      tests: 4,
      passed: 3,
      failed: 0,
      skipped: 1,
      status: 'passed',
    });
    expect(suiteTiming('/r', '/r/b.spec.ts', 0, 10, result({ numPassingTests: 1, numFailingTests: 2 }))).toMatchObject({
      tests: 3,
      failed: 2,
      status: 'failed',
    });
    const unrunnable = { ...result({}), testExecError: { message: 'SyntaxError', stack: '' }, failureMessage: 'x' };
    expect(suiteTiming('/r', '/r/c.spec.ts', 0, 10, unrunnable)).toMatchObject({ tests: 0, status: 'failed' });
  });

  it('the report: slowest first, ties by path, the run and the sum of the files; markdown and the slowest ten', () => {
    const files = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'].map((name, i) =>
      suiteTiming(
        '/r',
        `/r/${name}.spec.ts`,
        0,
        [500, 9000, 500, 1200, 3000, 100, 200, 300, 400, 700, 800, 50][i],
        result({ numPassingTests: 2 }),
      ),
    );
    const report = timingReport(files, 12_345.6, 'v24.21.0');
    expect(report.suites.map((s) => s.path).slice(0, 5)).toEqual([
      'b.spec.ts',
      'e.spec.ts',
      'd.spec.ts',
      'k.spec.ts',
      'j.spec.ts',
    ]);
    expect(report.suites.map((s) => s.path).slice(5, 7)).toEqual(['a.spec.ts', 'c.spec.ts']);
    expect({ runMs: report.runMs, sumOfSuitesMs: report.sumOfSuitesMs }).toEqual({
      runMs: 12_346,
      sumOfSuitesMs: 16_750,
    });

    const markdown = timingMarkdown(report).split('\n');
    expect(markdown[0]).toBe('# Test timings (Node v24.21.0)');
    expect(markdown[2]).toBe(
      "12 test files; the run took 12.3 s, the files 16.8 s together (they run side by side on Jest's workers).",
    );
    expect(markdown[6]).toBe('| 1 | b.spec.ts | 9.0 | 2 | passed |');
    expect(markdown).toContain('| 12 | l.spec.ts | 0.1 | 2 | passed |');

    const printed = slowestLines(report);
    expect(printed).toHaveLength(11);
    expect(printed[0]).toBe('Slowest 10 of 12 test files (run 12.3 s, files 16.8 s together):');
    expect(printed[1]).toBe('  9.0 s  b.spec.ts');
    expect(printed.at(-1)).toBe('  0.2 s  g.spec.ts');
  });

  it('single tests: the time Jest measured for each, the slowest kept, a test never run left out', () => {
    expect(
      testTimings(
        '/r',
        '/r/test/a.spec.ts',
        result({ numPassingTests: 1, numPendingTests: 1 }, [
          { name: 'a runs', ms: 1234.6 },
          { name: 'a is skipped', ms: null, status: 'pending' },
        ]),
      ),
    ).toEqual([{ path: 'test/a.spec.ts', test: 'a runs', ms: 1235, status: 'passed' }]);
    const tests = Array.from({ length: SLOWEST_TESTS + 5 }, (_, i) => ({
      path: 'a.spec.ts',
      test: `t${i}`,
      ms: i * 10,
      status: 'passed',
    }));
    const report = timingReport([], 0, 'v24.21.0', tests);
    expect(report.slowestTests).toHaveLength(SLOWEST_TESTS);
    expect(report.slowestTests[0]).toMatchObject({ test: `t${SLOWEST_TESTS + 4}` });
    expect(report.slowestTests.at(-1)).toMatchObject({ test: 't5' });
  });

  it('as Jest drives it: times each file from its start to its result, writes both files, prints the slowest', () => {
    const dir = mkdtempSync(join(tmpdir(), 'timing-reporter-'));
    try {
      let clock = 0;
      const printed: string[] = [];
      const reporter = new TimingReporter({ rootDir: dir }, { now: () => clock, print: (line) => printed.push(line) });
      reporter.onRunStart();
      reporter.onTestFileStart({ path: join(dir, 'quick.spec.ts') });
      clock = 100;
      reporter.onTestFileStart({ path: join(dir, 'slow.spec.ts') });
      clock = 400;
      reporter.onTestFileResult(
        { path: join(dir, 'quick.spec.ts') },
        result({ numPassingTests: 1 }, [{ name: 'quick | piped', ms: 250 }]),
      );
      clock = 2100;
      reporter.onTestFileResult(
        { path: join(dir, 'slow.spec.ts') },
        result({ numFailingTests: 1 }, [{ name: 'slow > takes its time', ms: 1500.4, status: 'failed' }]),
      );
      clock = 2200;
      reporter.onRunComplete();

      const written = JSON.parse(readFileSync(join(dir, 'test-results/timings.json'), 'utf8'));
      expect(written).toEqual({
        node: process.version,
        runMs: 2200,
        sumOfSuitesMs: 2400,
        suites: [
          { path: 'slow.spec.ts', ms: 2000, tests: 1, passed: 0, failed: 1, skipped: 0, status: 'failed' },
          { path: 'quick.spec.ts', ms: 400, tests: 1, passed: 1, failed: 0, skipped: 0, status: 'passed' },
        ],
        slowestTests: [
          { path: 'slow.spec.ts', test: 'slow > takes its time', ms: 1500, status: 'failed' },
          { path: 'quick.spec.ts', test: 'quick | piped', ms: 250, status: 'passed' },
        ],
      });
      expect(readFileSync(join(dir, 'test-results/timings.md'), 'utf8')).toContain(
        '| 2 | quick.spec.ts | quick \\| piped | 0.3 | passed |',
      );
      expect(readFileSync(join(dir, 'test-results/timings.md'), 'utf8')).toContain(
        '| 1 | slow.spec.ts | 2.0 | 1 | failed (1 failed) |',
      );
      expect(printed.slice(1, 4)).toEqual([
        'Slowest 2 of 2 test files (run 2.2 s, files 2.4 s together):',
        '  2.0 s  slow.spec.ts  FAILED',
        '  0.4 s  quick.spec.ts',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a real Jest run loads it and records every file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'timing-reporter-run-'));
    try {
      writeFileSync(
        join(dir, 'passes.test.mjs'),
        "test('one', () => {}); test('two', () => {}); test.skip('three', () => {});\n",
      );
      writeFileSync(join(dir, 'fails.test.mjs'), "test('fails', () => { expect(1).toBe(2); });\n");
      const config = JSON.stringify({
        rootDir: dir,
        testMatch: ['**/*.test.mjs'],
        transform: {},
        reporters: [[REPORTER, { outputDirectory: 'out' }]],
      });
      const run = spawnSync(
        process.execPath,
        ['node_modules/jest/bin/jest.js', '--config', config, '--ci', '--no-watchman'],
        {
          encoding: 'utf8',
          env: { ...process.env, NODE_OPTIONS: '--experimental-vm-modules' },
          timeout: 120_000,
        },
      );
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('Slowest 2 of 2 test files');
      const written = JSON.parse(readFileSync(join(dir, 'out/timings.json'), 'utf8'));
      expect(written.slowestTests.map((t: { test: string }) => t.test).sort()).toEqual(['fails', 'one', 'two']);
      expect(
        written.suites.map((s: { path: string; status: string; tests: number }) => [s.path, s.status, s.tests]).sort(),
      ).toEqual([
        ['fails.test.mjs', 'failed', 1],
        ['passes.test.mjs', 'passed', 3],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
