// Preloaded with `node --import` into every benchmarked server. Counts the queries sent through
// node-postgres (each one a round trip to PostgreSQL; BEGIN and COMMIT included) and the garbage
// collections (young and full, with their pause times, from `gc` performance entries), and on SIGWINCH
// writes {queries, rss, heapUsed, external, gc} to BENCH_PROBE_FILE, after a full garbage collection when
// BENCH_PROBE_GC=1 and node runs with --expose-gc (and a heap snapshot, when one is asked for). SIGWINCH: ignored by default, and not one of the
// signals Nest's shutdown hooks act on. Cost: one increment per query.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { writeHeapSnapshot } from 'node:v8';
import pg from 'pg';

let queries = 0;
const original = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...args) {
  queries++;
  return original.apply(this, args);
};
/** Collections so far: scavenges (young) and the rest (mark-compact, incremental marking, weak callbacks). */
const gc = { young: 0, youngMs: 0, other: 0, otherMs: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) {
      gc.young++;
      gc.youngMs += entry.duration;
    } else {
      gc.other++;
      gc.otherMs += entry.duration;
    }
  }
}).observe({ entryTypes: ['gc'] });
const file = process.env.BENCH_PROBE_FILE;
const collect = process.env.BENCH_PROBE_GC === '1' && typeof globalThis.gc === 'function';
if (file) {
  process.on('SIGWINCH', () => {
    // Counted before the collection asked for here, which is the probe's own.
    const collections = { ...gc };
    if (collect) globalThis.gc();
    // A heap snapshot when asked for one: `${BENCH_PROBE_FILE}.snapshot` names where to write it.
    if (existsSync(`${file}.snapshot`)) {
      const target = readFileSync(`${file}.snapshot`, 'utf8').trim();
      rmSync(`${file}.snapshot`);
      writeHeapSnapshot(target);
    }
    const { rss, heapUsed, external } = process.memoryUsage();
    writeFileSync(file, JSON.stringify({ queries, rss, heapUsed, external, gc: collections }));
  });
}
