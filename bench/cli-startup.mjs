// The `cleveragents` client's start-up on its own (bench/run.mjs measures the same as its `cli` section):
// `--help`, `card`, `send` to the first byte of the answer against a running server, and `send --local`
// (the client spawning the server over stdio) on a warm and on a fresh data directory. Prints a table and
// one JSON line; writes no files but its temporary ones, removed at the end.
//
//   node bench/cli-startup.mjs [--server URL] [--runs 20] [--warmup 2] [--dist DIR]
//   --server URL  a running server (default: start ours from dist/ on a temporary embedded database)
//   --dist DIR    the build whose CLI and server to run (default ./dist; npm run build first)
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { runCliStartup } from './scale/cli-startup.mjs';

const { values: opts } = parseArgs({
  options: {
    server: { type: 'string' },
    runs: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '2' },
    dist: { type: 'string' },
  },
});
if (opts.dist) process.env.BENCH_DIST = opts.dist;

const r = await runCliStartup({ runs: Number(opts.runs), warmup: Number(opts.warmup), server: opts.server });
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}`;
console.log(`cleveragents start-up, ${r.runs} runs after ${r.warmup} warm-up (${machine}); server ${r.server}`);
console.log(`load average ${r.load[0].join(' ')} → ${r.load[1].join(' ')}`);
console.log('| command | measured | median ms | p95 ms | min ms | max ms |');
console.log('|---|---|---:|---:|---:|---:|');
for (const x of r.results) {
  console.log(`| \`${x.command}\` | ${x.measured} | ${x.median} | ${x.p95} | ${x.min} | ${x.max} |`);
}
console.log(JSON.stringify({ bench: 'cli-startup', machine, ...r }));
