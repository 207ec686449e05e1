// Preloaded with `node --import` into every benchmarked server: counts the queries sent through
// node-postgres (each one a round trip to PostgreSQL; BEGIN and COMMIT included). On SIGUSR2 the count
// is written to BENCH_QUERY_COUNT_FILE. Cost: one increment per query.
import { writeFileSync } from 'node:fs';
import pg from 'pg';

let queries = 0;
const original = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...args) {
  queries++;
  return original.apply(this, args);
};
const file = process.env.BENCH_QUERY_COUNT_FILE;
if (file) process.on('SIGUSR2', () => writeFileSync(file, String(queries)));
