// Preloaded with `node --import` into every benchmarked server: counts the queries sent through
// node-postgres (each one a round trip to PostgreSQL; BEGIN and COMMIT included). On SIGWINCH the count
// is written to BENCH_QUERY_COUNT_FILE (SIGWINCH: not one of the signals Nest's shutdown hooks act on,
// and ignored by default). Cost: one increment per query.
import { writeFileSync } from 'node:fs';
import pg from 'pg';

let queries = 0;
const original = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...args) {
  queries++;
  return original.apply(this, args);
};
const file = process.env.BENCH_QUERY_COUNT_FILE;
if (file) process.on('SIGWINCH', () => writeFileSync(file, String(queries)));
