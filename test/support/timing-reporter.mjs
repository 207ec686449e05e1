// A Jest reporter that writes how long each test file took: test-results/timings.json and timings.md
// (git-ignored), slowest first, with the run's wall time and the sum of the files' times, and prints the
// slowest ten once the last file is done (just above Jest's totals, which Jest always prints last). A file's
// time is what the reporter sees: from Jest handing the file to a worker to its result, so it includes
// compiling, the test environment and every hook.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/** One test file's line: its path relative to the root, wall time, test counts and outcome. */
export function suiteTiming(rootDir, testPath, startedMs, endedMs, testResult) {
  const failed = testResult.numFailingTests;
  // A file that could not run (a compile error, a throw at its top level) counts no failed test but has a message.
  const broken = testResult.testExecError != null || Boolean(testResult.failureMessage);
  return {
    path: relative(rootDir, testPath),
    ms: Math.max(0, Math.round(endedMs - startedMs)),
    tests: testResult.numPassingTests + failed + testResult.numPendingTests + testResult.numTodoTests,
    passed: testResult.numPassingTests,
    failed,
    skipped: testResult.numPendingTests + testResult.numTodoTests,
    status: failed > 0 || broken ? 'failed' : 'passed',
  };
}

/** A file's tests with the time Jest measured for each (its hooks not included), as `{ path, test, ms, status }`. */
export function testTimings(rootDir, testPath, testResult) {
  return testResult.testResults
    .filter((test) => typeof test.duration === 'number')
    .map((test) => ({
      path: relative(rootDir, testPath),
      test: test.fullName,
      ms: Math.round(test.duration),
      status: test.status,
    }));
}

/** How many of the slowest single tests the report keeps: those nearest to their timeouts under load. */
export const SLOWEST_TESTS = 20;

/**
 * The run as written to timings.json: the files slowest first (ties by path), the wall time and the sum,
 * and the slowest single tests.
 */
export function timingReport(suites, runMs, node, tests = []) {
  const sorted = [...suites].sort((a, b) => b.ms - a.ms || a.path.localeCompare(b.path));
  const slowTests = [...tests].sort((a, b) => b.ms - a.ms || a.path.localeCompare(b.path)).slice(0, SLOWEST_TESTS);
  return {
    node,
    runMs: Math.round(runMs),
    sumOfSuitesMs: sorted.reduce((sum, suite) => sum + suite.ms, 0),
    suites: sorted,
    slowestTests: slowTests,
  };
}

const seconds = (ms) => (ms / 1000).toFixed(1);

/** timings.md: one table row per file, slowest first. */
export function timingMarkdown(report) {
  const lines = [
    `# Test timings (Node ${report.node})`,
    '',
    `${report.suites.length} test files; the run took ${seconds(report.runMs)} s, ` +
      `the files ${seconds(report.sumOfSuitesMs)} s together (they run side by side on Jest's workers).`,
    '',
    '| # | file | seconds | tests | result |',
    '|---:|---|---:|---:|---|',
    ...report.suites.map(
      (suite, i) =>
        `| ${i + 1} | ${suite.path} | ${seconds(suite.ms)} | ${suite.tests} | ${suite.status}` +
        `${suite.failed > 0 ? ` (${suite.failed} failed)` : ''} |`,
    ),
  ];
  if (report.slowestTests.length > 0) {
    lines.push(
      '',
      `## The ${report.slowestTests.length} slowest tests`,
      '',
      '| # | file | test | seconds | result |',
      '|---:|---|---|---:|---|',
      ...report.slowestTests.map(
        (test, i) =>
          `| ${i + 1} | ${test.path} | ${test.test.replaceAll('|', '\\|')} | ${seconds(test.ms)} | ${test.status} |`,
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** What the run prints at its end: the `count` slowest files. */
export function slowestLines(report, count = 10) {
  const shown = report.suites.slice(0, count);
  const width = Math.max(0, ...shown.map((suite) => seconds(suite.ms).length));
  return [
    `Slowest ${shown.length} of ${report.suites.length} test files (run ${seconds(report.runMs)} s, ` +
      `files ${seconds(report.sumOfSuitesMs)} s together):`,
    ...shown.map(
      (suite) =>
        `  ${seconds(suite.ms).padStart(width)} s  ${suite.path}${suite.status === 'failed' ? '  FAILED' : ''}`,
    ),
  ];
}

export default class TimingReporter {
  #rootDir;
  #outputDirectory;
  #now;
  #print;
  #runStarted = 0;
  #started = new Map();
  #suites = [];
  #tests = [];

  /** Options: outputDirectory (relative to the root; default test-results); tests may pass now and print. */
  constructor(globalConfig, options = {}) {
    this.#rootDir = globalConfig.rootDir;
    this.#outputDirectory = resolve(this.#rootDir, options.outputDirectory ?? 'test-results');
    this.#now = options.now ?? (() => performance.now());
    this.#print = options.print ?? ((line) => process.stderr.write(`${line}\n`));
  }

  onRunStart() {
    this.#runStarted = this.#now();
    this.#started.clear();
    this.#suites = [];
    this.#tests = [];
  }

  onTestFileStart(test) {
    this.#started.set(test.path, this.#now());
  }

  onTestFileResult(test, testResult) {
    const ended = this.#now();
    const started = this.#started.get(test.path) ?? ended;
    this.#suites.push(suiteTiming(this.#rootDir, test.path, started, ended, testResult));
    this.#tests.push(...testTimings(this.#rootDir, test.path, testResult));
  }

  onRunComplete() {
    if (this.#suites.length === 0) return;
    const report = timingReport(this.#suites, this.#now() - this.#runStarted, process.version, this.#tests);
    mkdirSync(this.#outputDirectory, { recursive: true });
    writeFileSync(join(this.#outputDirectory, 'timings.json'), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(this.#outputDirectory, 'timings.md'), timingMarkdown(report));
    this.#print('');
    for (const line of slowestLines(report)) this.#print(line);
    this.#print(`Every file's time: ${relative(process.cwd(), join(this.#outputDirectory, 'timings.md'))}`);
  }

  getLastError() {
    return undefined;
  }
}
