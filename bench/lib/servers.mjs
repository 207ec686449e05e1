// The servers under test: ours (dist/main.js) and the bare SDK (bench/servers/sdk-server.mjs).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sleep, startServer } from './proc.mjs';

const COUNT_QUERIES = resolve(import.meta.dirname, '../servers/count-queries.mjs');
let counters = 0;

/** Node arguments and environment that make a server count its PostgreSQL queries (see queryCount). */
function countingSetup() {
  const file = join(tmpdir(), `ca-bench-queries-${process.pid}-${++counters}`);
  return { nodeArgs: ['--import', COUNT_QUERIES], env: { BENCH_QUERY_COUNT_FILE: file }, file };
}

/** Queries the server has sent to PostgreSQL so far (NaN when it does not count them). */
export async function queryCount(server) {
  if (!server.countFile) return NaN;
  rmSync(server.countFile, { force: true });
  server.child.kill('SIGWINCH');
  for (let i = 0; i < 200 && !existsSync(server.countFile); i++) await sleep(5);
  try {
    return Number(readFileSync(server.countFile, 'utf8'));
  } catch {
    return NaN;
  }
}

export const ROOT = resolve(import.meta.dirname, '../..');
export const LOG_LEVEL = 'warn';

/** The build under test: BENCH_DIST (set by run.mjs --dist), else ./dist. */
export const distDir = () => resolve(ROOT, process.env.BENCH_DIST || 'dist');

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
}) {
  const counting = countQueries ? countingSetup() : { nodeArgs: [], env: {} };
  const env = oursEnv({ auth, databaseUrl, extra: { ...extra, ...counting.env } });
  const server = await startServer({
    name,
    args: [entry],
    env,
    port,
    nodeArgs: [...counting.nodeArgs, ...nodeArgs],
    cwd: ROOT,
  });
  server.countFile = counting.file;
  server.headers = {};
  if (auth === 'apiKey') {
    let key = server.output.stderr.match(BOOTSTRAP_KEY)?.[0];
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
export async function startSdk({ name, port, store, databaseUrl, nodeArgs = [], countQueries = false }) {
  const counting = countQueries ? countingSetup() : { nodeArgs: [], env: {} };
  const server = await startServer({
    name,
    args: ['bench/servers/sdk-server.mjs', store],
    env: { NODE_ENV: 'development', DATABASE_URL: databaseUrl ?? '', BENCH_DIST: distDir(), ...counting.env },
    port,
    nodeArgs: [...counting.nodeArgs, ...nodeArgs],
    cwd: ROOT,
  });
  server.countFile = counting.file;
  server.headers = {};
  return server;
}
