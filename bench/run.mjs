// The benchmark: ours against the bare @a2a-js/sdk server, side by side, in one run.
//
//   npm run bench                 quick run (< 5 min)
//   npm run bench:full            full run (~15–20 min): more rounds, 1k/5k/10k streams, 1M tasks
//   node bench/run.mjs [--full] [--only throughput,streams,list,cold,first,cli] [--rounds N] [--duration S]
//                      [--connections C] [--no-docs] [--dist DIR] [--rev GIT-REV] [--baseline GIT-REV]
//                      [--workloads SendMessage,SendStreamingMessage,…] (throughput of those alone; with --no-docs)
//   --dist DIR   run another build of ours (default ./dist, which npm run bench rebuilds first)
//   --rev REV    build that commit in a temporary directory (git archive + tsc) and run it: figures for
//                one commit while the working tree is being edited
//   --baseline REV  also build that commit and run it as one more contender, `ours-base` (auth none, its own
//                scratch database), taking turns with the others in every round: before and after in one run
//                (cold: the baseline starts before each start of the build under test, on the same kind of state;
//                list: the baseline serves the same seeded database, three rounds each in turn on every page)
//
// Needs a build (npm run build) and PostgreSQL (BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/postgres;
// the run creates and drops its own scratch databases). Writes bench/results/<stamp>-<mode>.json and .md (the report:
// every table) and bench/results/latest.json and .md, then regenerates docs/benchmarks.md (goals; the reading is kept).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pool, cannon, call, mustCall, userMessage, rpc } from './lib/load.mjs';
import { backendCpu, backendCpuSpent, createScratchDb, dropScratchDb, postgresVersion, withClient } from './lib/pg.mjs';
import { cpuSeconds, peakRssMiB, resetPeak, rssMiB } from './lib/proc.mjs';
import { ROOT, LOG_LEVEL, distDir, queryCount, startOurs, startSdk } from './lib/servers.mjs';
import { summary } from './lib/stats.mjs';
import { LATEST_REPORT_PATH, writeDocs, writeReport } from './lib/report.mjs';
import { buildRevision } from './lib/snapshot.mjs';
import { PROFILES } from './lib/profiles.mjs';
import { runStreams } from './scale/streams.mjs';
import { runListAtScale } from './scale/list.mjs';
import { runColdStart } from './scale/cold-start.mjs';
import { runFirstEvent } from './scale/first-event.mjs';
import { runCliStartup } from './scale/cli-startup.mjs';

const { values: opts } = parseArgs({
  options: {
    full: { type: 'boolean', default: false },
    only: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string' },
    'no-docs': { type: 'boolean', default: false },
    workloads: { type: 'string' },
    dist: { type: 'string' },
    rev: { type: 'string' },
    baseline: { type: 'string' },
  },
});
if (opts.dist) process.env.BENCH_DIST = opts.dist;
let revision;
if (opts.rev) {
  revision = buildRevision(opts.rev);
  process.env.BENCH_DIST = revision.dist;
}

const mode = opts.full ? 'full' : 'quick';
const cfg = { ...PROFILES[mode] };
if (opts.rounds) cfg.rounds = Number(opts.rounds);
if (opts.duration) cfg.durationS = Number(opts.duration);
if (opts.connections) cfg.connections = Number(opts.connections);
const sections = new Set((opts.only ?? 'throughput,streams,list,cold,first,cli').split(','));

if (!existsSync(join(distDir(), 'main.js'))) {
  console.error(`bench: ${join(distDir(), 'main.js')} is missing; run \`npm run build\` first (npm run bench does).`);
  process.exit(2);
}

const started = new Date();
const stamp = started.toISOString().replace(/[:.]/g, '-');
const dbPrefix = `bench_${process.pid}`;
const log = (msg) =>
  console.error(`[bench ${((Date.now() - started.getTime()) / 1000).toFixed(0).padStart(4)}s] ${msg}`);

/** The servers in the order they take turns in every round (A B C D A B C D …). */
const SERVERS = [
  { key: 'ours-none', label: 'ours, PostgreSQL, auth none', kind: 'ours', auth: 'none', port: 18101 },
  { key: 'ours-apikey', label: 'ours, PostgreSQL, API key', kind: 'ours', auth: 'apiKey', port: 18102 },
  { key: 'sdk-db', label: 'bare SDK, DatabaseTaskStore (PostgreSQL)', kind: 'sdk', store: 'database', port: 18103 },
  { key: 'sdk-memory', label: 'bare SDK, InMemoryTaskStore', kind: 'sdk', store: 'memory', port: 18104 },
];

const baseline = opts.baseline ? buildRevision(opts.baseline) : undefined;
if (baseline) {
  SERVERS.splice(1, 0, {
    key: 'ours-base',
    label: `ours at ${baseline.commit} (--baseline), PostgreSQL, auth none`,
    kind: 'ours',
    auth: 'none',
    port: 18105,
    entry: join(baseline.dist, 'main.js'),
  });
}

const LIST_CONTEXT = 'bench-list-context';
const LIST_SEED = 200;

/** The workloads; `body(i, tag)` makes the i-th request. `ours` marks ours-only workloads. */
const WORKLOADS = [
  {
    key: 'SendMessage',
    what: 'SendMessage, blocking; the conformance actor completes the task at once (tck-complete-task)',
    body: (i, tag) => rpc('SendMessage', { message: userMessage(`tck-complete-task-${tag}-${i}`) }),
    check: (r) => r.body?.result?.task?.status?.state === 'TASK_STATE_COMPLETED',
  },
  {
    key: 'GetTask',
    what: 'GetTask of one pre-created completed task',
    body: (_i, _tag, s) => rpc('GetTask', { id: s.taskId }),
    check: (r, s) => r.body?.result?.id === s.taskId,
  },
  {
    key: 'ListTasks',
    what: `ListTasks, one page of 50, of a context holding ${LIST_SEED} tasks`,
    body: () => rpc('ListTasks', { contextId: LIST_CONTEXT, pageSize: 50 }),
    check: (r) => r.body?.result?.tasks?.length === 50,
  },
  {
    key: 'SendStreamingMessage',
    what: 'SendStreamingMessage to completion: task, working, artifact, completed (tck-stream-001), 4 SSE events',
    headers: { accept: 'text/event-stream' },
    body: (i, tag) => rpc('SendStreamingMessage', { message: userMessage(`tck-stream-001-${tag}-${i}`) }),
    check: (r) => typeof r.text === 'string' && r.text.includes('TASK_STATE_COMPLETED'),
  },
  {
    key: 'diagnostics/health',
    what: '_cleveragents/diagnostics/health (ours only: the SDK has no counterpart)',
    ours: true,
    body: () => rpc('_cleveragents/diagnostics/health', {}),
    check: (r) => r.status === 200 && r.body?.result !== undefined,
  },
];

/** The throughput workloads of this run: --workloads picks some, for an A/B that needs no others. */
const RUN_WORKLOADS = opts.workloads
  ? opts.workloads.split(',').map((key) => {
      const found = WORKLOADS.find((w) => w.key === key);
      if (!found) throw new Error(`--workloads: ${key} is none of ${WORKLOADS.map((w) => w.key).join(', ')}`);
      return found;
    })
  : WORKLOADS;
if (opts.workloads && !opts['no-docs']) throw new Error('--workloads measures part of a run: add --no-docs');

/** Which build ran: the dist directory and the commit of this checkout (dirty when packages/ differs). */
function buildUnderTest() {
  const git = (...args) => {
    try {
      return execFileSync('git', args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim();
    } catch {
      return '';
    }
  };
  if (revision) return { dist: distDir(), commit: revision.commit, dirty: false, clean: 'git archive of the commit' };
  if (process.env.BENCH_DIST)
    return { dist: distDir(), commit: 'unknown (--dist: a build made elsewhere)', dirty: false };
  return {
    dist: distDir(),
    commit: git('rev-parse', '--short', 'HEAD'),
    dirty: git('status', '--porcelain', '--', 'packages') !== '',
  };
}

async function machine() {
  const cpu = cpus();
  return {
    cpuModel: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    ramGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    postgres: await postgresVersion(),
    platform: `${process.platform} ${process.arch}`,
  };
}

/** Per server: one completed task for GetTask and LIST_SEED tasks in LIST_CONTEXT for ListTasks. */
async function prepare(server) {
  const first = await mustCall(server.base, server.headers, 'SendMessage', {
    message: userMessage('tck-complete-task-getme'),
  });
  server.taskId = first.task.id;
  await pool(LIST_SEED, 8, (i) =>
    mustCall(server.base, server.headers, 'SendMessage', {
      message: userMessage(`tck-complete-task-list-${i}`, { contextId: LIST_CONTEXT }),
    }),
  );
}

async function measureRound(server, workload, tag, durationS) {
  const pid = server.pid;
  const q0 = await queryCount(server);
  const peakReset = resetPeak(pid);
  const pg0 = server.database ? await backendCpu(server.database) : new Map();
  const cpu0 = cpuSeconds(pid);
  const r = await cannon({
    base: server.base,
    headers: { ...server.headers, ...(workload.headers ?? {}) },
    body: (i) => workload.body(i, tag, server),
    durationS,
    connections: cfg.connections,
  });
  const cpu = cpuSeconds(pid) - cpu0;
  const pgCpu = server.database ? backendCpuSpent(pg0, await backendCpu(server.database)) : NaN;
  const total = r.requests.total;
  const queries = (await queryCount(server)) - q0;
  return {
    rps: total / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpuPer1k: total > 0 ? cpu / (total / 1000) : NaN,
    pgCpuPer1k: total > 0 ? pgCpu / (total / 1000) : NaN,
    queriesPerRequest: total > 0 ? queries / total : NaN,
    peakRssMiB: peakReset ? peakRssMiB(pid) : NaN,
    rssMiB: rssMiB(pid),
    requests: total,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}

async function runThroughput(result) {
  const dbs = { ours_none: `${dbPrefix}_ours_none`, ours_key: `${dbPrefix}_ours_key`, sdk: `${dbPrefix}_sdk` };
  if (baseline) dbs.ours_base = `${dbPrefix}_ours_base`;
  const urls = {};
  for (const [k, name] of Object.entries(dbs)) urls[k] = await createScratchDb(name);
  const running = [];
  try {
    for (const s of SERVERS) {
      const server =
        s.kind === 'ours'
          ? await startOurs({
              name: s.key,
              port: s.port,
              auth: s.auth,
              databaseUrl: s.entry ? urls.ours_base : s.auth === 'none' ? urls.ours_none : urls.ours_key,
              ...(s.entry ? { entry: s.entry } : {}),
              countQueries: true,
            })
          : await startSdk({ name: s.key, port: s.port, store: s.store, databaseUrl: urls.sdk, countQueries: true });
      Object.assign(server, s);
      // Whose PostgreSQL backends to time: the database this server's connections serve (none for SDK-memory).
      server.database =
        s.kind === 'sdk'
          ? s.store === 'database'
            ? dbs.sdk
            : undefined
          : s.entry
            ? dbs.ours_base
            : s.auth === 'none'
              ? dbs.ours_none
              : dbs.ours_key;
      running.push(server);
      log(`started ${s.key} (pid ${server.pid}, ready in ${server.readyMs.toFixed(0)} ms)`);
    }
    for (const server of running) await prepare(server);
    // A warm-up pass over every workload before the first one is measured: a fresh process spends its
    // first seconds under load compiling (V8's optimising compiler runs on threads whose CPU counts as the
    // server's) and growing its heap, and the per-workload warm-up alone left that to the first workload's
    // rounds (SendMessage: 2.6, 2.3, 1.7 ms of server CPU per call over its three rounds, 1.1 once warm).
    for (const server of running) {
      for (const workload of RUN_WORKLOADS) {
        if (workload.ours && server.kind !== 'ours') continue;
        await measureRound(server, workload, 'jit', cfg.jitWarmupS);
      }
    }
    result.throughput = {};
    for (const workload of RUN_WORKLOADS) {
      const servers = running.filter((s) => !workload.ours || s.kind === 'ours');
      // Fresh planner statistics on every database before each workload, as autovacuum would
      // eventually give them: the earlier workloads inserted thousands of tasks, and without an
      // ANALYZE the plans (e.g. ListTasks by context) depend on whether autovacuum happened to run.
      for (const url of Object.values(urls)) await withClient(url, (c) => c.query('ANALYZE'));
      for (const server of servers) {
        const probe = await call(
          server.base,
          { ...server.headers, ...(workload.headers ?? {}) },
          workload.body(0, 'probe', server).method,
          workload.body(0, 'probe', server).params,
        );
        if (!workload.check(probe, server)) {
          throw new Error(
            `${workload.key} on ${server.key} answered unexpectedly: HTTP ${probe.status} ${probe.text.slice(0, 400)}`,
          );
        }
        await measureRound(server, workload, 'warmup', cfg.warmupS);
      }
      const rounds = Object.fromEntries(servers.map((s) => [s.key, []]));
      for (let round = 0; round < cfg.rounds; round++) {
        for (const server of servers) {
          rounds[server.key].push(await measureRound(server, workload, `r${round}`, cfg.durationS));
        }
      }
      const bySever = {};
      for (const server of servers) {
        const rs = rounds[server.key];
        bySever[server.key] = {
          rounds: rs,
          rps: summary(rs.map((r) => r.rps)),
          p50: summary(rs.map((r) => r.p50)),
          p99: summary(rs.map((r) => r.p99)),
          cpuPer1k: summary(rs.map((r) => r.cpuPer1k)),
          pgCpuPer1k: summary(rs.map((r) => r.pgCpuPer1k)),
          queriesPerRequest: summary(rs.map((r) => r.queriesPerRequest)),
          peakRssMiB: Math.max(...rs.map((r) => r.peakRssMiB)),
          non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
          errors: rs.reduce((a, r) => a + r.errors, 0),
        };
      }
      result.throughput[workload.key] = { what: workload.what, servers: bySever };
      const line = servers
        .map(
          (s) =>
            `${s.key} ${bySever[s.key].rps.median.toFixed(0)}/s p99 ${bySever[s.key].p99.median}ms cpu ${bySever[s.key].cpuPer1k.median.toFixed(2)} pg ${bySever[s.key].pgCpuPer1k.median.toFixed(2)} q ${bySever[s.key].queriesPerRequest.median.toFixed(2)}`,
        )
        .join(' | ');
      log(`${workload.key}: ${line}`);
    }
    result.serverReadyMs = Object.fromEntries(running.map((s) => [s.key, s.readyMs]));
  } finally {
    await Promise.all(running.map((s) => s.stop()));
    for (const name of Object.values(dbs)) await dropScratchDb(name).catch(() => {});
  }
}

const result = {
  mode,
  ...(baseline ? { baseline: { commit: baseline.commit } } : {}),
  date: started.toISOString(),
  config: {
    ...cfg,
    logLevel: LOG_LEVEL,
    wire: 'JSON-RPC over HTTP, A2A-Version: 1.0',
    loader: 'autocannon (same process as the orchestrator)',
  },
  command: mode === 'full' ? 'npm run bench:full' : 'npm run bench',
  argv: `node bench/run.mjs ${process.argv.slice(2).join(' ')}`.trim(),
  servers: SERVERS,
  workloads: RUN_WORKLOADS.map((w) => ({ key: w.key, what: w.what, oursOnly: !!w.ours })),
};
result.machine = await machine();
result.build = buildUnderTest();
log(
  `${mode} run on ${result.machine.cpuModel} × ${result.machine.cores}, node ${result.machine.node}, PostgreSQL ${result.machine.postgres}`,
);

const resultsDir = join(ROOT, 'bench/results');
mkdirSync(resultsDir, { recursive: true });
const save = () => {
  const text = `${JSON.stringify(result, null, 2)}\n`;
  writeFileSync(join(resultsDir, `${stamp}-${mode}.json`), text);
  writeFileSync(join(resultsDir, 'latest.json'), text);
};

const ctx = { cfg, dbPrefix, log, baseline };
const steps = [
  ['throughput', () => runThroughput(result)],
  ['streams', async () => (result.streams = await runStreams(ctx))],
  ['list', async () => (result.listAtScale = await runListAtScale(ctx))],
  ['cold', async () => (result.coldStart = await runColdStart(ctx))],
  ['first', async () => (result.firstEvent = await runFirstEvent(ctx))],
  ['cli', async () => (result.cliStartup = await runCliStartup({ runs: cfg.cliRuns, warmup: cfg.cliWarmup, log }))],
];
let failed = false;
for (const [name, step] of steps) {
  if (!sections.has(name)) continue;
  log(`--- ${name}`);
  try {
    await step();
  } catch (err) {
    failed = true;
    result.failures = [...(result.failures ?? []), { section: name, error: String(err?.stack ?? err) }];
    console.error(`bench: ${name} failed: ${err?.stack ?? err}`);
  }
  save();
}
result.finished = new Date().toISOString();
result.elapsedS = (Date.now() - started.getTime()) / 1000;
save();
writeReport(result, [join(resultsDir, `${stamp}-${mode}.md`), LATEST_REPORT_PATH]);
if (!opts['no-docs']) {
  const path = writeDocs(result);
  log(`wrote ${path}`);
}
log(
  `done in ${result.elapsedS.toFixed(0)} s; results in bench/results/latest.json, the report in bench/results/latest.md`,
);
process.exit(failed ? 1 : 0);
