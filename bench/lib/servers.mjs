// The servers under test: ours (dist/main.js) and the bare SDK (bench/servers/sdk-server.mjs).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sleep, startServer } from './proc.mjs';

export const ROOT = resolve(import.meta.dirname, '../..');
export const LOG_LEVEL = 'warn';

/** The build under test: BENCH_DIST (set by run.mjs --dist or --rev), else the server package's dist/. */
export const distDir = () => resolve(ROOT, process.env.BENCH_DIST || 'packages/server/dist');

const PROBE = resolve(import.meta.dirname, '../servers/probe.mjs');
let probes = 0;

/**
 * Node arguments and environment for bench/servers/probe.mjs: the server counts its PostgreSQL
 * queries and, with `gc`, runs a full collection before it reports its memory (see probe()).
 */
function probeSetup(gc = false) {
  const file = join(tmpdir(), `ca-bench-probe-${process.pid}-${++probes}`);
  return {
    nodeArgs: ['--import', PROBE, ...(gc ? ['--expose-gc'] : [])],
    env: { BENCH_PROBE_FILE: file, BENCH_PROBE_GC: gc ? '1' : '0' },
    file,
  };
}
const NO_PROBE = { nodeArgs: [], env: {}, file: undefined };

/** What the server's probe reports: {queries, rss, heapUsed, external}; undefined without a probe. */
export async function probe(server, timeoutMs = 2000) {
  if (!server.probeFile) return undefined;
  rmSync(server.probeFile, { force: true });
  server.child.kill('SIGWINCH');
  for (const until = performance.now() + timeoutMs; performance.now() < until;) {
    if (existsSync(server.probeFile)) {
      try {
        return JSON.parse(readFileSync(server.probeFile, 'utf8'));
      } catch {
        /* still being written */
      }
    }
    await sleep(5);
  }
  return undefined;
}

/** Queries the server has sent to PostgreSQL so far (NaN when it has no probe). */
export async function queryCount(server) {
  return (await probe(server))?.queries ?? NaN;
}

/** Environment every instance of ours runs with (besides the database and auth scheme). */
export function oursEnv({ auth = 'none', databaseUrl, dataDir, migrate = true, extra = {} }) {
  const env = {
    NODE_ENV: 'development',
    CLEVERAGENTS_ACTOR_BACKEND: 'conformance',
    CLEVERAGENTS_AUTH_SCHEMES: auth,
    CLEVERAGENTS_RATE_LIMIT_PER_MINUTE: '0',
    CLEVERAGENTS_MIGRATE_ON_START: String(migrate),
    CLEVERAGENTS_DATA_DIR: dataDir ?? mkdtempSync(join(tmpdir(), 'ca-bench-data-')),
    LOG_LEVEL,
    ...extra,
  };
  env.DATABASE_URL = databaseUrl ?? '';
  return env;
}

const BOOTSTRAP_KEY = /\bca_[0-9a-z]{26}_[A-Za-z0-9_-]{20,}/;

/** Ours on PostgreSQL; with auth apiKey, `headers` carries the bootstrap key printed on first start. */
export async function startOurs({
  name,
  port,
  auth,
  databaseUrl,
  nodeArgs = [],
  entry = join(distDir(), 'main.js'),
  extra,
  countQueries = false,
  gc = false,
}) {
  const counting = countQueries || gc ? probeSetup(gc) : NO_PROBE;
  const env = oursEnv({ auth, databaseUrl, extra: { ...extra, ...counting.env } });
  const server = await startServer({
    name,
    args: [entry],
    env,
    port,
    nodeArgs: [...counting.nodeArgs, ...nodeArgs],
    cwd: ROOT,
  });
  server.probeFile = counting.file;
  server.headers = {};
  if (auth === 'apiKey') {
    let key = server.output.stderr.match(BOOTSTRAP_KEY)?.[0];
    // The key may reach stderr a moment after the server answers its readiness probe.
    for (let waited = 0; !key && waited < 3000; waited += 50) {
      await sleep(50);
      key = server.output.stderr.match(BOOTSTRAP_KEY)?.[0];
    }
    if (!key) {
      // Not printed (the database already had keys): mint one with the admin CLI.
      const out = execFileSync(
        process.execPath,
        [join(distDir(), 'cli/admin.js'), 'apikey', 'create', '--name', `bench-${Date.now()}`, '--role', 'owner'],
        { cwd: ROOT, env: { ...process.env, ...env } },
      ).toString();
      key = out.trim().split('\n').pop().trim();
    }
    server.headers = { 'x-api-key': key };
  }
  return server;
}

/** The bare SDK server with its in-memory or database task store. */
export async function startSdk({ name, port, store, databaseUrl, nodeArgs = [], countQueries = false, gc = false }) {
  const counting = countQueries || gc ? probeSetup(gc) : NO_PROBE;
  const server = await startServer({
    name,
    args: ['bench/servers/sdk-server.mjs', store],
    env: { NODE_ENV: 'development', DATABASE_URL: databaseUrl ?? '', BENCH_DIST: distDir(), ...counting.env },
    port,
    nodeArgs: [...counting.nodeArgs, ...nodeArgs],
    cwd: ROOT,
  });
  server.probeFile = counting.file;
  server.headers = {};
  return server;
}
