import { expect } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_BIN } from './terminal.js';

/** How one run of the `cleveragents` executable ended. */
export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Start to exit, in milliseconds. */
  ms: number;
}

/**
 * A home of its own for the CLI: a temporary HOME, XDG_CONFIG_HOME (stored logins) and XDG_DATA_HOME,
 * so that no run reads the user's files or another test's.
 */
export interface CliHome {
  readonly dir: string;
  readonly env: Record<string, string>;
  cleanup(): Promise<void>;
}

export async function cliHome(): Promise<CliHome> {
  const dir = await mkdtemp(join(tmpdir(), 'cleveragents-cli-'));
  return {
    dir,
    env: { HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), XDG_DATA_HOME: join(dir, 'data') },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Variables passed from the test's own environment (nothing CleverAgents, no colour forcing, no NODE_OPTIONS). */
const PASSED = ['PATH', 'LANG', 'TMPDIR', 'TZ'];

/** A CLI run's environment: PASSED from the test's, then `home`'s, then `extra` (undefined removes a name). */
function cliEnv(home: CliHome, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED) if (process.env[name] !== undefined) env[name] = process.env[name]!;
  Object.assign(env, home.env);
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** The environment of the CLI on a real terminal (a pty): `home`'s, PATH, a colour terminal, UTF-8. */
export function terminalEnv(home: CliHome): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', ...home.env, TERM: 'xterm-256color', LANG: 'C.UTF-8' };
}

/**
 * Runs `cleveragents <args>` as a real child process (stdin, stdout and stderr pipes, so not a TTY)
 * and collects its output and exit code. The environment is `home`'s plus `env`; nothing else of the
 * test's environment leaks in but PATH and the locale.
 */
export function runCli(
  args: string[],
  options: {
    home: CliHome;
    env?: Record<string, string | undefined>;
    cwd?: string;
    stdin?: string;
    timeoutMs?: number;
  },
): Promise<CliRun> {
  const env = cliEnv(options.home, options.env);
  const started = performance.now();
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    env,
    cwd: options.cwd ?? options.home.dir,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end(options.stdin ?? '');
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  const timeoutMs = options.timeoutMs ?? 60000;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `cleveragents ${args.join(' ')} did not end in ${timeoutMs} ms\nstdout: ${Buffer.concat(out).toString()}\nstderr: ${Buffer.concat(err).toString()}`,
        ),
      );
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        ms: performance.now() - started,
      });
    });
  });
}

/** A `cleveragents` process still running: its output so far, and how it ends. */
export interface RunningCli {
  /** Resolves with stderr so far once it matches `pattern` (rejects if the process ends first). */
  stderrMatching(pattern: RegExp): Promise<RegExpExecArray>;
  readonly done: Promise<CliRun>;
  /** Ends the process (SIGKILL) if it still runs. */
  kill(): void;
}

/** Starts `cleveragents <args>` as runCli does, without waiting for it to end. */
export function startCli(
  args: string[],
  options: { home: CliHome; env?: Record<string, string | undefined>; timeoutMs?: number },
): RunningCli {
  const env = cliEnv(options.home, options.env);
  const started = performance.now();
  const child = spawn(process.execPath, [CLI_BIN, ...args], { env, cwd: options.home.dir, stdio: 'pipe' });
  child.stdin.end();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const waiters: (() => void)[] = [];
  const stderr = (): string => Buffer.concat(err).toString('utf8');
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => {
    err.push(c);
    for (const wake of waiters.splice(0)) wake();
  });
  const timeoutMs = options.timeoutMs ?? 120000;
  const done = new Promise<CliRun>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`cleveragents ${args.join(' ')} did not end in ${timeoutMs} ms\nstderr: ${stderr()}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      for (const wake of waiters.splice(0)) wake();
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: stderr(),
        ms: performance.now() - started,
      });
    });
  });
  let ended = false;
  void done.then(
    () => (ended = true),
    () => (ended = true),
  );
  return {
    done,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    async stderrMatching(pattern) {
      for (;;) {
        const match = pattern.exec(stderr());
        if (match) return match;
        if (ended || child.exitCode !== null) {
          throw new Error(`cleveragents ${args.join(' ')} ended without printing ${pattern}\nstderr: ${stderr()}`);
        }
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

/** A run's output for an assertion message. */
export function shown(run: CliRun): string {
  return `exit ${run.code}${run.signal ? ` (${run.signal})` : ''}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;
}

/** Asserts a run's exit code; a failure shows the run's whole output. */
export function expectExit(run: CliRun, code: number): void {
  expect({ code: run.code, run: shown(run) }).toEqual({ code, run: shown(run) });
}

/** The NDJSON lines of `--json` output, each parsed (a line that is not JSON fails the test). */
export function ndjson(stdout: string): Record<string, any>[] {
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, any>;
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
    });
}

/** An ANSI escape sequence (a colour, a cursor move) anywhere in the text. */
export const ANSI = /\u001b/;
