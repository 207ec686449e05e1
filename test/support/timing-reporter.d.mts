// Types of timing-reporter.mjs (a Jest reporter, plain JavaScript so that Jest loads it on every Node).
import type { Test, TestResult } from '@jest/test-result';
import type { Config } from '@jest/types';

export interface SuiteTiming {
  path: string;
  ms: number;
  tests: number;
  passed: number;
  failed: number;
  skipped: number;
  status: 'passed' | 'failed';
}

export interface TestTiming {
  path: string;
  test: string;
  ms: number;
  status: string;
}

export interface TimingReport {
  node: string;
  runMs: number;
  sumOfSuitesMs: number;
  suites: SuiteTiming[];
  slowestTests: TestTiming[];
}

export interface TimingReporterOptions {
  outputDirectory?: string;
  now?: () => number;
  print?: (line: string) => void;
}

export function suiteTiming(
  rootDir: string,
  testPath: string,
  startedMs: number,
  endedMs: number,
  testResult: TestResult,
): SuiteTiming;
export function testTimings(rootDir: string, testPath: string, testResult: TestResult): TestTiming[];
export const SLOWEST_TESTS: number;
export function timingReport(
  suites: readonly SuiteTiming[],
  runMs: number,
  node: string,
  tests?: readonly TestTiming[],
): TimingReport;
export function timingMarkdown(report: TimingReport): string;
export function slowestLines(report: TimingReport, count?: number): string[];

export default class TimingReporter {
  constructor(globalConfig: Pick<Config.GlobalConfig, 'rootDir'>, options?: TimingReporterOptions);
  onRunStart(): void;
  onTestFileStart(test: Pick<Test, 'path'>): void;
  onTestFileResult(test: Pick<Test, 'path'>, testResult: TestResult): void;
  onRunComplete(): void;
  getLastError(): undefined;
}
