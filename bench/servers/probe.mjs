// Preloaded with `node --import` into every benchmarked server. Counts the queries sent through
// node-postgres (each one a round trip to PostgreSQL; BEGIN and COMMIT included), and on SIGWINCH
// writes {queries, rss, heapUsed, external} to BENCH_PROBE_FILE, after a full garbage collection when
// BENCH_PROBE_GC=1 and node runs with --expose-gc (and a heap snapshot, when one is asked for). SIGWINCH: ignored by default, and not one of the
// signals Nest's shutdown hooks act on. Cost: one increment per query.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { writeHeapSnapshot } from 'node:v8';
import pg from 'pg';

let queries = 0;
const original = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...args) {
  queries++;
  return original.apply(this, args);
};
const file = process.env.BENCH_PROBE_FILE;
const collect = process.env.BENCH_PROBE_GC === '1' && typeof globalThis.gc === 'function';
if (file) {
  process.on('SIGWINCH', () => {
    if (collect) globalThis.gc();
    // A heap snapshot when asked for one: `${BENCH_PROBE_FILE}.snapshot` names where to write it.
    if (existsSync(`${file}.snapshot`)) {
      const target = readFileSync(`${file}.snapshot`, 'utf8').trim();
      rmSync(`${file}.snapshot`);
      writeHeapSnapshot(target);
    }
    const { rss, heapUsed, external } = process.memoryUsage();
    writeFileSync(file, JSON.stringify({ queries, rss, heapUsed, external }));
  });
}
