// What tracing costs SendMessage: the built server with the OTEL_* variables unset (tracing off, the
// default) against the same server built from a commit before telemetry (`base`), and with tracing on
// (every trace sampled, exported over OTLP http/protobuf to bench/servers/otlp-sink.mjs, a receiver that
// counts the spans and answers 200). All run at once, each on its own scratch PostgreSQL database, and take
// turns round by round (the order rotating), so that a change in the machine's load falls on all of them.
// Prints a Markdown table and one JSON line; with --docs, writes the table into docs/benchmarks.md.
//
//   npm run bench:tracing -- [--base-dir DIR | --base REV] [--runs 7] [--duration 8] [--connections 16]
//                            [--warmup 5] [--docs]        (npm run build, then node bench/tracing.mjs …)
//   --base-dir DIR  a checkout of the commit before telemetry, built (DIR/packages/server/dist/main.js), e.g.
//                   git worktree add /var/tmp/ca-base <commit>; link node_modules; npm run build there
//   --base REV      build that commit apart from the working tree first (bench/lib/snapshot.mjs)
//   --runs N        rounds per configuration (each a --duration seconds autocannon run)
//   --no-control    leave out the second server with tracing off (the A/A pair that shows the noise)
//   --docs          replace the block between the tracing markers in docs/benchmarks.md
//
// Needs PostgreSQL (BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/postgres).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cannon, mustCall, rpc, userMessage } from './lib/load.mjs';
import { createScratchDb, dropScratchDb } from './lib/pg.mjs';
import { cpuSeconds, sleep, startServer } from './lib/proc.mjs';
import { ROOT, distDir, startOurs } from './lib/servers.mjs';
import { buildRevision } from './lib/snapshot.mjs';
import { median } from './lib/stats.mjs';

const { values: opts } = parseArgs({
  allowNegative: true,
  options: {
    'base-dir': { type: 'string' },
    base: { type: 'string' },
    runs: { type: 'string', default: '7' },
    duration: { type: 'string', default: '8' },
    connections: { type: 'string', default: '16' },
    warmup: { type: 'string', default: '5' },
    docs: { type: 'boolean', default: false },
    control: { type: 'boolean', default: true },
  },
});
const runs = Number(opts.runs);
const durationS = Number(opts.duration);
const connections = Number(opts.connections);
const warmupS = Number(opts.warmup);
const DOC_PATH = join(ROOT, 'docs/benchmarks.md');
const MARK_START = '<!-- tracing:start (written by node bench/tracing.mjs --docs) -->';
const MARK_END = '<!-- tracing:end -->';

const git = (cwd, ...args) => {
  try {
    return execFileSync('git', args, { cwd, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return '?';
  }
};

let base;
if (opts['base-dir']) {
  const dir = resolve(opts['base-dir']);
  base = { entry: join(dir, 'packages/server/dist/main.js'), commit: git(dir, 'rev-parse', '--short', 'HEAD') };
} else if (opts.base) {
  const built = buildRevision(opts.base);
  base = { entry: join(built.dist, 'main.js'), commit: built.commit };
}
if (base && !existsSync(base.entry)) throw new Error(`${base.entry} is missing: build the base checkout first`);
if (!existsSync(join(distDir(), 'main.js'))) throw new Error(`${distDir()}/main.js is missing: npm run build`);

// The servers must not inherit the caller's telemetry settings: each configuration sets its own.
for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_')) delete process.env[name];

const SINK_PORT = 18140;
const CONTENDERS = [
  ...(base ? [{ key: 'base', label: `commit before telemetry (${base.commit})`, entry: base.entry, port: 18141 }] : []),
  { key: 'off', label: 'this build, OTEL_* unset (tracing off)', port: 18142 },
  // A second, identical server: off ÷ control shows how far two equal servers differ on this machine now.
  ...(opts.control ? [{ key: 'control', label: 'this build, OTEL_* unset, a second server (A/A)', port: 18144 }] : []),
  {
    key: 'on',
    label: 'this build, tracing on: always_on sampler, OTLP http/protobuf to a local receiver',
    port: 18143,
    env: {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${SINK_PORT}/v1/traces`,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      OTEL_TRACES_SAMPLER: 'always_on',
    },
  },
];

const started = Date.now();
const log = (msg) => console.error(`[tracing ${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${msg}`);
const body = (tag) => (i) => rpc('SendMessage', { message: userMessage(`tck-complete-task-${tag}-${i}`) });

async function sinkStats() {
  const res = await fetch(`http://127.0.0.1:${SINK_PORT}/stats`);
  return res.json();
}

async function round(server, tag, seconds) {
  const cpu0 = cpuSeconds(server.pid);
  const r = await cannon({
    base: server.base,
    headers: server.headers,
    body: body(tag),
    durationS: seconds,
    connections,
  });
  const cpu = cpuSeconds(server.pid) - cpu0;
  const total = r.requests.total;
  const failed = r.non2xx + r.errors + r.timeouts;
  if (failed > 0) throw new Error(`${server.key}: ${failed} of ${total} requests failed in round ${tag}`);
  return { rps: total / r.duration, p50: r.latency.p50, p99: r.latency.p99, cpuMs: (cpu * 1000) / total, total };
}

const dbPrefix = `bench_tracing_${process.pid}`;
const servers = [];
let sink;
const loads = [loadavg()];
const results = Object.fromEntries(CONTENDERS.map((c) => [c.key, []]));
let onRequests = 0;
let exported;
try {
  sink = await startServer({
    name: 'otlp-sink',
    args: [join(ROOT, 'bench/servers/otlp-sink.mjs')],
    port: SINK_PORT,
    readyPath: '/stats',
    cwd: ROOT,
  });
  for (const c of CONTENDERS) {
    const databaseUrl = await createScratchDb(`${dbPrefix}_${c.key}`);
    const server = await startOurs({
      name: c.key,
      port: c.port,
      auth: 'none',
      databaseUrl,
      extra: c.env,
      ...(c.entry ? { entry: c.entry } : {}),
    });
    Object.assign(server, c);
    servers.push(server);
    const answer = await mustCall(server.base, server.headers, 'SendMessage', {
      message: userMessage(`tck-complete-task-probe-${c.key}`),
    });
    if (answer?.task?.status?.state !== 'TASK_STATE_COMPLETED')
      throw new Error(`${c.key}: SendMessage did not complete`);
    log(`started ${c.key} (pid ${server.pid}, ready in ${server.readyMs.toFixed(0)} ms)`);
  }
  for (const server of servers) {
    const w = await round(server, `warmup-${server.key}`, warmupS);
    if (server.key === 'on') onRequests += w.total;
    log(`warm-up ${server.key}: ${w.rps.toFixed(0)} req/s`);
  }
  for (let run = 0; run < runs; run++) {
    // Rotate who goes first: A B C, B C A, C A B, ...
    const order = servers.map((_, i) => servers[(i + run) % servers.length]);
    for (const server of order) {
      const r = await round(server, `r${run}-${server.key}`, durationS);
      results[server.key].push(r);
      if (server.key === 'on') onRequests += r.total;
    }
    loads.push(loadavg());
    log(
      `run ${run + 1}/${runs}: ${order.map((s) => `${s.key} ${results[s.key].at(-1).rps.toFixed(0)} req/s`).join(', ')}; load ${loadavg()[0].toFixed(2)}`,
    );
  }
  // The batch span processor exports every 5 s: wait for its last batch before counting.
  await sleep(6000);
  exported = await sinkStats();
} finally {
  for (const server of servers) await server.stop();
  await sink?.stop();
  for (const c of CONTENDERS) await dropScratchDb(`${dbPrefix}_${c.key}`).catch(() => undefined);
}

// Figures: median over rounds (min–max), and per run the ratio of two configurations measured back to back.
const f0 = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');
const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : '—');
const pct = (x) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %` : '—');
const col = (key, field) => results[key].map((r) => r[field]);
/** Per run, `a`'s figure over `b`'s, minus one: two configurations measured in the same run. */
const paired = (a, b, field) => results[a].map((r, i) => r[field] / results[b][i][field] - 1);

/**
 * The median's distribution-free interval: the order statistics k and n + 1 − k, covering the true median
 * with at least 95 % probability; undefined under 6 values.
 */
function medianInterval(values) {
  const v = [...values].sort((x, y) => x - y);
  const n = v.length;
  let k = 0;
  let tail = 0;
  let ways = 1;
  for (let i = 0; i < n; i++) {
    tail += ways / 2 ** n;
    if (tail > 0.025) break;
    k = i + 1;
    ways = (ways * (n - i)) / (i + 1);
  }
  return k === 0 ? undefined : [v[k - 1], v[n - k]];
}
const withInterval = (values) => {
  const interval = medianInterval(values);
  return `${pct(median(values))} (${interval ? `${pct(interval[0])} … ${pct(interval[1])}` : 'too few runs'})`;
};

const rows = CONTENDERS.map((c) => {
  const rps = col(c.key, 'rps');
  const range = `${f0(Math.min(...rps))}–${f0(Math.max(...rps))}`;
  return `| ${c.key}: ${c.label} | ${f0(median(rps))} (${range}) | ${f2(median(col(c.key, 'p50')))} | ${f2(median(col(c.key, 'p99')))} | ${f2(median(col(c.key, 'cpuMs')))} |`;
});
const costs = [];
const verdicts = [];
const compare = (a, b) => {
  const [rps, cpu, p99] = ['rps', 'cpuMs', 'p99'].map((field) => paired(a, b, field));
  costs.push(`| ${a} ÷ ${b} | ${withInterval(rps)} | ${withInterval(cpu)} | ${withInterval(p99)} |`);
  return rps;
};
const control = opts.control ? medianInterval(compare('off', 'control')) : undefined;
if (base) {
  const rps = compare('off', 'base');
  const interval = medianInterval(rps);
  // The goal: off loses at most 1 % of base's throughput. Decided only when the interval is on one side.
  let status = 'not decided (too few runs for an interval)';
  if (interval && interval[0] >= -0.01) status = '**met**';
  else if (interval && interval[1] < -0.01) status = '**missed**';
  else if (interval) status = 'not decided: the interval is wider than the goal (a busy machine; more --runs)';
  verdicts.push(
    `Goal: tracing off loses ≤ 1 % of SendMessage throughput against the build before telemetry. Off ÷ base: ${withInterval(rps)}: ${status}.` +
      (control
        ? ` Two identical servers (off ÷ control) differed by ${pct(control[0])} … ${pct(control[1])} in the same run.`
        : ''),
  );
}
compare('on', 'off');
const spansPerRequest = onRequests > 0 ? exported.spans / onRequests : NaN;
verdicts.push(
  `Tracing on: ${exported.spans.toLocaleString('en-US')} spans received in ${exported.requests} exports for ${onRequests.toLocaleString('en-US')} SendMessage calls (${f2(spansPerRequest)} per call${exported.failures ? `, ${exported.failures} exports not decoded` : ''}).` +
    (exported.spans === 0
      ? ' **This build exported no span: the "on" row measures the OTEL_* variables set, not tracing.**'
      : ''),
);

const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`;
const loadText = `${Math.min(...loads.map((l) => l[0])).toFixed(1)}–${Math.max(...loads.map((l) => l[0])).toFixed(1)}`;
const head = git(ROOT, 'rev-parse', '--short', 'HEAD');
const dirty = git(ROOT, 'status', '--porcelain', '--', 'packages') !== '' ? ' with uncommitted changes' : '';
const command = `node bench/tracing.mjs ${process.argv.slice(2).join(' ')}`.trim();
const block = `### Tracing: what OpenTelemetry costs SendMessage (${new Date().toISOString().slice(0, 10)})

\`${command}\` on commit ${head}${dirty} (${machine}; 1-minute load average ${loadText} during the run).
SendMessage, blocking, the conformance actor completing each task at once, auth \`none\`, PostgreSQL (a scratch
database per server), autocannon with ${connections} connections; ${runs} round(s) of ${durationS} s per configuration after a
${warmupS} s warm-up, the configurations taking turns in a rotating order. Medians over the rounds (min–max); CPU is
the server process's utime + stime per call. Ratios: per run, one configuration's figure over the other's
(measured in the same run), the median over runs and its distribution-free 95 % interval.

| configuration | req/s | p50 ms | p99 ms | server CPU ms per call |
|---|---:|---:|---:|---:|
${rows.join('\n')}

| ratio − 1, median of the runs (95 % interval) | req/s | CPU per call | p99 |
|---|---:|---:|---:|
${costs.join('\n')}

${verdicts.join('\n')}`;

console.log(block);
console.log(
  JSON.stringify({
    bench: 'tracing',
    machine,
    commit: head,
    base: base?.commit,
    load: loads,
    runs,
    durationS,
    connections,
    exported,
    onRequests,
    results,
  }),
);

if (opts.docs) {
  const text = readFileSync(DOC_PATH, 'utf8');
  const a = text.indexOf(MARK_START);
  const b = text.indexOf(MARK_END);
  if (a < 0 || b < a) throw new Error(`docs/benchmarks.md has no ${MARK_START} … ${MARK_END} block`);
  writeFileSync(DOC_PATH, `${text.slice(0, a + MARK_START.length)}\n${block}\n${text.slice(b)}`);
  log('wrote docs/benchmarks.md');
}
