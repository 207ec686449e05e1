import { spawn } from 'node:child_process';
import type { CliHome, CliRun } from './cli.js';
import { CLI_BIN } from './terminal.js';

/** A `cleveragents` process still running, whose stdout and stderr can be waited on. */
export interface WatchedCli {
  /** Resolves once stdout (or stderr) so far matches `pattern`; rejects if the process ends first. */
  outputMatching(stream: 'stdout' | 'stderr', pattern: RegExp): Promise<RegExpExecArray>;
  readonly done: Promise<CliRun>;
  kill(): void;
}

/** Starts `cleveragents <args>` (pipes, so not a TTY) with `home`'s environment, PATH and `env`. */
export function watchCli(
  args: string[],
  options: { home: CliHome; env?: Record<string, string>; timeoutMs?: number },
): WatchedCli {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...options.home.env, ...options.env };
  const started = performance.now();
  const child = spawn(process.execPath, [CLI_BIN, ...args], { env, cwd: options.home.dir, stdio: 'pipe' });
  child.stdin.end();
  const output = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  const text = (stream: 'stdout' | 'stderr'): string => Buffer.concat(output[stream]).toString('utf8');
  const waiters: (() => void)[] = [];
  const wake = (): void => {
    for (const w of waiters.splice(0)) w();
  };
  child.stdout.on('data', (c: Buffer) => (output.stdout.push(c), wake()));
  child.stderr.on('data', (c: Buffer) => (output.stderr.push(c), wake()));
  let ended = false;
  const timeoutMs = options.timeoutMs ?? 240000;
  const done = new Promise<CliRun>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`cleveragents ${args.join(' ')} did not end in ${timeoutMs} ms\nstderr: ${text('stderr')}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      ended = true;
      wake();
      resolve({ code, signal, stdout: text('stdout'), stderr: text('stderr'), ms: performance.now() - started });
    });
  });
  return {
    done,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
    async outputMatching(stream, pattern) {
      for (;;) {
        const match = pattern.exec(text(stream));
        if (match) return match;
        if (ended) {
          throw new Error(
            `cleveragents ${args.join(' ')} ended without printing ${pattern} on ${stream}\nstdout: ${text('stdout')}\nstderr: ${text('stderr')}`,
          );
        }
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}
