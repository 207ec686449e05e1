// Socket writes per request of ours: HTTP answers and PostgreSQL round trips (each a write or writev
// syscall, the largest self-time item in every CPU profile), for SendMessage and SendStreamingMessage,
// one client at a time and 16 at once. Counted, not timed: a busy machine does not move the figures.
//
//   node bench/socket-writes.mjs [--requests N] [--dist DIR | --rev GIT-REV]
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { call, pool, userMessage } from './lib/load.mjs';
import { PG_ADMIN_URL, createScratchDb, dropScratchDb } from './lib/pg.mjs';
import { sleep } from './lib/proc.mjs';
import { distDir, startOurs } from './lib/servers.mjs';
import { buildRevision } from './lib/snapshot.mjs';

const { values: opts } = parseArgs({
  options: { requests: { type: 'string', default: '400' }, dist: { type: 'string' }, rev: { type: 'string' } },
});
if (opts.dist) process.env.BENCH_DIST = opts.dist;
if (opts.rev) process.env.BENCH_DIST = buildRevision(opts.rev).dist;

const WORKLOADS = [
  ['SendMessage', 'tck-complete-task', {}],
  ['SendStreamingMessage', 'tck-stream-001', { accept: 'text/event-stream' }],
];
const requests = Number(opts.requests);
const dbName = `bench_writes_${process.pid}`;
const file = join(tmpdir(), `ca-bench-writes-${process.pid}.json`);
const url = await createScratchDb(dbName);
const server = await startOurs({
  name: 'ours-writes',
  port: 18150,
  auth: 'none',
  databaseUrl: url,
  nodeArgs: ['--import', join(import.meta.dirname, 'servers/count-writes.mjs')],
  extra: { BENCH_WRITES_FILE: file, BENCH_PG_PORT: new URL(PG_ADMIN_URL).port || '5432' },
});
async function counts() {
  rmSync(file, { force: true });
  server.child.kill('SIGWINCH');
  while (!existsSync(file)) await sleep(5);
  await sleep(20);
  return JSON.parse(readFileSync(file, 'utf8'));
}
try {
  console.log(`ours at ${distDir()}: socket writes per request, ${requests} requests after 20 of warm-up`);
  for (const [method, tag, headers] of WORKLOADS) {
    for (let i = 0; i < 20; i++) await call(server.base, headers, method, { message: userMessage(`${tag}-warm-${i}`) });
    for (const clients of [1, 16]) {
      const before = await counts();
      await pool(requests, clients, (i) =>
        call(server.base, headers, method, { message: userMessage(`${tag}-${clients}-${i}`) }),
      );
      const after = await counts();
      const per = (k) => ((after[k] - before[k]) / requests).toFixed(2);
      console.log(
        `  ${method.padEnd(21)} ${String(clients).padStart(2)} client(s): HTTP ${per('http')}, PostgreSQL ${per('pg')}`,
      );
    }
  }
} finally {
  await server.stop('SIGKILL');
  await dropScratchDb(dbName).catch(() => {});
  rmSync(file, { force: true });
}
