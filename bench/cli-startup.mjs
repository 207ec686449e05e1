// How long the `cleveragents` client takes from start to exit: `card --server URL` (connect, read the
// card, print it) over N runs, with `--help` (no network) as the floor. Prints the figures (median,
// p95, min, max in ms) and one JSON line; writes no files but its temporary ones, removed at the end.
//
//   node bench/cli-startup.mjs [--server URL] [--runs 20] [--warmup 2] [--dist DIR]
//   --server URL  a running server (default: start ours from dist/ on a temporary embedded database)
//   --dist DIR    the build whose CLI and server to run (default ./dist; npm run build first)
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startServer } from './lib/proc.mjs';
import { ROOT, distDir, oursEnv } from './lib/servers.mjs';
import { quantile } from './lib/stats.mjs';

const { values: opts } = parseArgs({
  options: {
    server: { type: 'string' },
    runs: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '2' },
    dist: { type: 'string' },
  },
});
if (opts.dist) process.env.BENCH_DIST = opts.dist;
const runs = Number(opts.runs);
const warmup = Number(opts.warmup);
const bin = join(distDir(), 'client/cli/bin.js');
if (!existsSync(bin)) throw new Error(`${bin} is missing: run "npm run build" first`);

async function freePort() {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

// The CLI's own HOME: no stored login, no config of the user's.
const home = mkdtempSync(join(tmpdir(), 'ca-bench-cli-'));
const cliEnv = {
  PATH: process.env.PATH,
  HOME: home,
  XDG_CONFIG_HOME: join(home, 'config'),
  XDG_DATA_HOME: join(home, 'data'),
};

/** One run: milliseconds from spawn to exit; a non-zero exit fails the benchmark. */
function timeRun(args) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, ...args], { env: cliEnv, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('exit', (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolve(ms);
      else reject(new Error(`cleveragents ${args.join(' ')} exited ${code}: ${stderr}`));
    });
  });
}

async function measure(args) {
  for (let i = 0; i < warmup; i++) await timeRun(args);
  const times = [];
  for (let i = 0; i < runs; i++) times.push(await timeRun(args));
  const round = (x) => Math.round(x * 10) / 10;
  return {
    command: `cleveragents ${args.join(' ')}`,
    runs,
    median: round(quantile(times, 0.5)),
    p95: round(quantile(times, 0.95)),
    min: round(Math.min(...times)),
    max: round(Math.max(...times)),
  };
}

let server;
let dataDir;
try {
  let url = opts.server;
  if (!url) {
    dataDir = mkdtempSync(join(tmpdir(), 'ca-bench-cli-data-'));
    server = await startServer({
      name: 'ours',
      args: [join(distDir(), 'main.js')],
      env: oursEnv({ dataDir }),
      port: await freePort(),
      cwd: ROOT,
    });
    url = server.base;
  }
  const results = [await measure(['--help']), await measure(['card', '--server', url])];
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}`;
  console.log(`cleveragents start to exit, ${runs} runs after ${warmup} warm-up (${machine}); server ${url}`);
  console.log('| command | median ms | p95 ms | min ms | max ms |');
  console.log('|---|---:|---:|---:|---:|');
  for (const r of results)
    console.log(`| \`${r.command.replace(url, 'URL')}\` | ${r.median} | ${r.p95} | ${r.min} | ${r.max} |`);
  console.log(JSON.stringify({ bench: 'cli-startup', machine, results }));
} finally {
  await server?.stop();
  rmSync(home, { recursive: true, force: true });
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}
