import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort } from './server.js';
import { DIST_MAIN } from './stdio-client.js';
import { until } from './wait.js';

/** The server as a real process (node dist/main.js), for tests that kill it. */
export interface ServerProcess {
  process: ChildProcess;
  baseUrl: string;
  /** The exit code; null when a signal ended it. */
  exited: Promise<number | null>;
  /** The last 20000 characters it wrote (stdout and stderr). */
  log(): string;
}

/** Starts `node dist/main.js` on a free loopback port with `env` (and PATH only) and waits until it is ready. */
export async function startProcess(env: Record<string, string>): Promise<ServerProcess> {
  if (!existsSync(DIST_MAIN)) throw new Error(`${DIST_MAIN} is missing: run "npm run build" first (npm test does)`);
  const port = await freePort();
  const child = spawn(process.execPath, [DIST_MAIN], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-20000)));
  child.stderr?.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-20000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  await until(
    async () => {
      if (child.exitCode !== null) throw new Error(`server exited at start:\n${output}`);
      return (await fetch(`${baseUrl}/readyz`).catch(() => undefined))?.status === 200;
    },
    'the server to be ready',
    30000,
  );
  return { process: child, baseUrl, exited, log: () => output };
}
