import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort, listenOnFreePort } from './server.js';
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

/** How a server process ended: its exit code, or the signal that ended it. */
export interface ProcessEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A server process just spawned, not yet known to be ready. */
export interface SpawnedServer extends ServerProcess {
  endpoint: string;
  ended: Promise<ProcessEnd>;
}

/** For a suite's teardown: kills each of `servers` still running and waits until every one has ended. */
export async function stopAll(servers: readonly ServerProcess[]): Promise<void> {
  for (const server of servers) {
    if (server.process.exitCode === null && server.process.signalCode === null) server.process.kill('SIGKILL');
    await server.exited;
  }
}

/** Spawns `node dist/main.js` on `port` (a free loopback one unless given) with `env` (and PATH only); does not wait for it. */
export async function spawnServer(env: Record<string, string>, port?: number): Promise<SpawnedServer> {
  if (!existsSync(DIST_MAIN)) throw new Error(`${DIST_MAIN} is missing: run "npm run build" first (npm test does)`);
  port ??= await freePort();
  const child = spawn(process.execPath, [DIST_MAIN], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-20000)));
  child.stderr.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-20000)));
  const ended = new Promise<ProcessEnd>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    process: child,
    baseUrl,
    endpoint: `${baseUrl}/a2a`,
    exited: ended.then(({ code }) => code),
    ended,
    log: () => output,
  };
}

/** Starts `node dist/main.js` on a free loopback port with `env` (and PATH only) and waits until it is ready. */
export async function startProcess(env: Record<string, string>): Promise<ServerProcess> {
  // The port is chosen before the spawn, so another process may take it first: then spawn again.
  return listenOnFreePort(async (port) => {
    const server = await spawnServer(env, port);
    // Ended by itself (an exit code) or by a signal (exitCode stays null then).
    const exited = (): boolean => server.process.exitCode !== null || server.process.signalCode !== null;
    await until(
      async () => exited() || (await fetch(`${server.baseUrl}/readyz`).catch(() => undefined))?.status === 200,
      'the server to be ready',
      // A cold start on a database created empty migrates it: with both cores busy that passed 30 s once.
      60000,
    );
    if (!exited()) return server;
    const how = server.process.signalCode ?? `code ${server.process.exitCode}`;
    const failure: NodeJS.ErrnoException = new Error(`server exited at start (${how}):\n${server.log()}`);
    if (server.log().includes('EADDRINUSE')) failure.code = 'EADDRINUSE';
    throw failure;
  });
}

/**
 * The environment of a server process on `database` (its env) running the local backend against the model
 * endpoint at `modelBaseUrl`, auth none, with `leaseSeconds` task leases: the crash and replica tests.
 */
export function localBackendEnv(
  database: { env: Record<string, string> },
  modelBaseUrl: string,
  leaseSeconds: number,
): Record<string, string> {
  return {
    ...database.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    CLEVERAGENTS_MIGRATE_ON_START: 'true',
    CLEVERAGENTS_AUTH_SCHEMES: 'none',
    CLEVERAGENTS_ACTOR_BACKEND: 'local',
    CLEVERAGENTS_MODEL_BASE_URL: modelBaseUrl,
    CLEVERAGENTS_MODEL: 'onprem-model',
    CLEVERAGENTS_TASK_LEASE_SECONDS: String(leaseSeconds),
  };
}
