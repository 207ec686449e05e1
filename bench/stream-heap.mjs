// What one idle SubscribeToTask stream keeps alive in a server: heap snapshots (after a full GC)
// before and after opening N streams, diffed by object type and constructor; prints the top
// per-stream retainers. For the "≤ 20 KiB per idle stream" goal.
//
//   node bench/stream-heap.mjs [--streams 1000] [--server ours|sdk-memory] [--dist DIR | --rev GIT-REV]
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { mustCall, openSubscription, pool, userMessage } from './lib/load.mjs';
import { createScratchDb, dropScratchDb } from './lib/pg.mjs';
import { probe, startOurs, startSdk } from './lib/servers.mjs';
import { buildRevision } from './lib/snapshot.mjs';

const { values: opts } = parseArgs({
  options: {
    streams: { type: 'string', default: '1000' },
    server: { type: 'string', default: 'ours' },
    dist: { type: 'string' },
    rev: { type: 'string' },
  },
});
if (opts.dist) process.env.BENCH_DIST = opts.dist;
if (opts.rev) process.env.BENCH_DIST = buildRevision(opts.rev).dist;

/** Self size and count per "type:name" of a .heapsnapshot. */
function census(path) {
  const snap = JSON.parse(readFileSync(path, 'utf8'));
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const out = new Map();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + iType]];
    let name = snap.strings[snap.nodes[i + iName]];
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') name = '';
    if (name.length > 60) name = `${name.slice(0, 57)}…`;
    const key = `${type}:${name}`;
    const e = out.get(key) ?? { count: 0, bytes: 0 };
    e.count++;
    e.bytes += snap.nodes[i + iSize];
    out.set(key, e);
  }
  return out;
}

async function snapshot(server, path) {
  writeFileSync(`${server.probeFile}.snapshot`, path);
  if (!(await probe(server, 300_000))) throw new Error('no heap snapshot');
  return census(path);
}

const n = Number(opts.streams);
const dir = mkdtempSync(join(tmpdir(), 'ca-bench-heap-'));
const dbName = `bench_heap_${process.pid}`;
const url = await createScratchDb(dbName);
const server =
  opts.server === 'ours'
    ? await startOurs({ name: 'ours-none', port: 18150, auth: 'none', databaseUrl: url, gc: true })
    : await startSdk({ name: 'sdk-memory', port: 18150, store: 'memory', gc: true });
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const open = [];
try {
  const tasks = await pool(n, 32, async (i) => {
    const r = await mustCall(server.base, server.headers, 'SendMessage', {
      message: userMessage(`tck-input-required-heap-${i}`),
    });
    return r.task.id;
  });
  // One stream opened and closed first, so that lazily created singletons are not counted per stream.
  const warm = await openSubscription(server.base, server.headers, tasks[0], agent);
  warm.req.destroy();
  const before = await snapshot(server, join(dir, 'before.heapsnapshot'));
  for (let i = 0; i < n; i += 100) {
    const batch = tasks.slice(i, i + 100);
    open.push(...(await Promise.all(batch.map((id) => openSubscription(server.base, server.headers, id, agent)))));
  }
  const after = await snapshot(server, join(dir, 'after.heapsnapshot'));
  const diff = [];
  for (const [key, a] of after) {
    const b = before.get(key) ?? { count: 0, bytes: 0 };
    if (a.bytes - b.bytes > 0) diff.push({ key, count: (a.count - b.count) / n, bytes: (a.bytes - b.bytes) / n });
  }
  diff.sort((x, y) => y.bytes - x.bytes);
  const total = diff.reduce((s, d) => s + d.bytes, 0);
  console.log(`${server.name}: ${n} idle streams; JS heap growth ${(total / 1024).toFixed(1)} KiB per stream\n`);
  console.log('  bytes/stream  objects/stream  type:constructor');
  for (const d of diff.slice(0, 30)) {
    console.log(`  ${d.bytes.toFixed(0).padStart(12)}  ${d.count.toFixed(2).padStart(14)}  ${d.key}`);
  }
} finally {
  for (const s of open) s.req.destroy();
  agent.destroy();
  await server.stop('SIGKILL');
  await dropScratchDb(dbName).catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
