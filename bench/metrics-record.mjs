// The cost of recording one JSON-RPC call's metrics (RpcMetrics.observe: a counter and a histogram), in this
// build (OpenTelemetry instruments) and in a build before telemetry (prom-client), in one process: the one
// piece of work every call does differently between the two with tracing off. Blocks of calls alternate
// between the builds, so that the machine's load falls on both. Prints a Markdown table and one JSON line.
//
//   node bench/metrics-record.mjs --base-dir DIR [--blocks 20] [--calls 200000]
//   --base-dir DIR  a checkout of the commit before telemetry, built (DIR/packages/server/dist/)
import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { distDir } from './lib/servers.mjs';
import { median } from './lib/stats.mjs';

const { values: opts } = parseArgs({
  options: {
    'base-dir': { type: 'string' },
    blocks: { type: 'string', default: '20' },
    calls: { type: 'string', default: '200000' },
  },
});
if (!opts['base-dir']) throw new Error('--base-dir DIR: the built checkout of the commit before telemetry');
const blocks = Number(opts.blocks);
const calls = Number(opts.calls);

const builds = {
  base: join(resolve(opts['base-dir']), 'packages/server/dist/metrics/metrics.service.js'),
  this: join(distDir(), 'metrics/metrics.service.js'),
};
const recorders = {};
for (const [key, file] of Object.entries(builds)) {
  if (!existsSync(file)) throw new Error(`${file} is missing: build first`);
  const { MetricsService, RpcMetrics } = await import(pathToFileURL(file).href);
  const service = new MetricsService();
  recorders[key] = { service, rpc: new RpcMetrics(service) };
}

// The calls a busy server answers: a few methods, mostly ok, over HTTP.
const METHODS = ['SendMessage', 'GetTask', 'ListTasks', 'SendStreamingMessage'];
function block(rpc) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    rpc.observe(METHODS[i & 3], i % 50 === 0 ? -32001 : 'ok', 'http', (i % 97) / 1000);
  }
  return Number(process.hrtime.bigint() - started) / calls;
}

const before = loadavg()[0];
for (const key of Object.keys(recorders)) block(recorders[key].rpc); // warm-up: compile both paths
const ns = { base: [], this: [] };
for (let b = 0; b < blocks; b++) {
  const order = b % 2 === 0 ? ['base', 'this'] : ['this', 'base'];
  for (const key of order) ns[key].push(block(recorders[key].rpc));
}
// Both still answer /metrics with what was recorded.
for (const key of Object.keys(recorders)) {
  const text = await recorders[key].service.render();
  if (!/cleveragents_rpc_requests_total\{[^}]*method="SendMessage"/.test(text)) {
    throw new Error(`${key}: /metrics does not show the recorded calls`);
  }
  await recorders[key].service.onApplicationShutdown?.();
}
const after = loadavg()[0];

const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`;
const f = (x) => x.toFixed(0);
console.log(
  `RpcMetrics.observe, ${blocks} blocks of ${calls.toLocaleString('en-US')} calls per build, alternating (${machine}; load ${before.toFixed(1)} → ${after.toFixed(1)})`,
);
console.log('| build | ns per call, median | min | max |');
console.log('|---|---:|---:|---:|');
for (const key of ['base', 'this']) {
  console.log(`| ${key} | ${f(median(ns[key]))} | ${f(Math.min(...ns[key]))} | ${f(Math.max(...ns[key]))} |`);
}
const diff = ns.this.map((x, b) => x - ns.base[b]);
console.log(
  `| this − base, per pair of blocks | ${f(median(diff))} | ${f(Math.min(...diff))} | ${f(Math.max(...diff))} |`,
);
console.log(JSON.stringify({ bench: 'metrics-record', machine, calls, blocks, load: [before, after], ns }));
