// What durable commits cost the embedded database: SendMessage (the conformance actor completes each task at
// once) on `node dist/main.js` over a fresh embedded data directory, at 1 and at 16 requests in flight,
// for this build and, with --baseline REV, for that commit's build, taking turns.
//
//   node bench/embedded-durability.mjs [--dir FOLDER] [--requests N] [--baseline GIT-REV]
//   --dir   where the data directories go (default: the system's temporary folder); name a folder on the
//           disk to measure (a loop mount, say): the cost of an fsync is the disk's
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pool, mustCall, userMessage } from './lib/load.mjs';
import { distDir } from './lib/servers.mjs';
import { buildRevision } from './lib/snapshot.mjs';
import { quantile } from './lib/stats.mjs';

const { values: opts } = parseArgs({
  options: {
    dir: { type: 'string', default: tmpdir() },
    requests: { type: 'string', default: '400' },
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '2' },
  },
});
const REQUESTS = Number(opts.requests);
const builds = [{ label: 'this build', dist: distDir() }];
if (opts.baseline) {
  const base = buildRevision(opts.baseline);
  builds.push({ label: `baseline ${base.commit}`, dist: base.dist });
}

async function startServer(dist, port) {
  const dataDir = mkdtempSync(join(opts.dir, 'ca-bench-durable-'));
  const child = spawn(process.execPath, [join(dist, 'main.js')], {
    env: {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      PORT: String(port),
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      CLEVERAGENTS_AUTH_SCHEMES: 'none',
      CLEVERAGENTS_ACTOR_BACKEND: 'conformance',
      CLEVERAGENTS_DATA_DIR: dataDir,
      CLEVERAGENTS_RATE_LIMIT_PER_MINUTE: '0',
    },
    stdio: 'ignore',
  });
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if ((await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200) break;
    if (child.exitCode !== null) throw new Error(`the server on ${dist} exited at start`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    base,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function measure(base, concurrency, tag) {
  const latencies = [];
  const started = performance.now();
  await pool(REQUESTS, concurrency, async (i) => {
    const t = performance.now();
    const result = await mustCall(base, {}, 'SendMessage', { message: userMessage(`tck-complete-task-${tag}-${i}`) });
    if (result.task?.status?.state !== 'TASK_STATE_COMPLETED') throw new Error(`task ${i} did not complete`);
    latencies.push(performance.now() - t);
  });
  const seconds = (performance.now() - started) / 1000;
  return { rps: REQUESTS / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
}

const rows = [];
let port = 18201;
for (let round = 0; round < Number(opts.rounds); round++) {
  for (const build of builds) {
    const server = await startServer(build.dist, port++);
    try {
      await measure(server.base, 4, `warm-${round}`);
      for (const concurrency of [1, 16]) {
        const figures = await measure(server.base, concurrency, `${round}-${concurrency}`);
        rows.push({ build: build.label, concurrency, ...figures });
        console.error(`${build.label}, ${concurrency} in flight: ${figures.rps.toFixed(0)} req/s`);
      }
    } finally {
      await server.stop();
    }
  }
}
console.log('| build | in flight | req/s (median of rounds) | p50 ms | p99 ms |');
console.log('| --- | --- | --- | --- | --- |');
for (const build of builds) {
  for (const concurrency of [1, 16]) {
    const mine = rows.filter((row) => row.build === build.label && row.concurrency === concurrency);
    const mid = mine.sort((a, b) => a.rps - b.rps)[Math.floor(mine.length / 2)];
    console.log(
      `| ${build.label} | ${concurrency} | ${mid.rps.toFixed(0)} | ${mid.p50.toFixed(1)} | ${mid.p99.toFixed(1)} |`,
    );
  }
}
