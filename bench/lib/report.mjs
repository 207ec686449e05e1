// A run's report (every table, generated into bench/results/ beside the JSON) and docs/benchmarks.md (the goal
// table of the run and the "Reading", written by a human between the reading markers and kept as is).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './servers.mjs';
import { PROFILES } from './profiles.mjs';

export const DOC_PATH = join(ROOT, 'docs/benchmarks.md');
/** The report of the last run (git-ignored); bench/run.mjs also writes one per run, `<stamp>-<mode>.md`. */
export const LATEST_REPORT_PATH = join(ROOT, 'bench/results/latest.md');
/** Reports of earlier runs kept in the repository (the runs the reading discusses). */
const KEPT_REPORTS_DIR = join(ROOT, 'bench/reports');
const READING_START = '<!-- reading:start (kept when the file is regenerated) -->';
const READING_END = '<!-- reading:end -->';
const PROFILE_WORKLOADS = ['SendMessage', 'GetTask', 'ListTasks'];
const profilePath = (workload) => join(ROOT, `bench/results/profile-${workload}.json`);

const f0 = (x) => (Number.isFinite(x) ? x.toFixed(0) : '—');
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '—');
const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : '—');
const spread = (s, fmt = f0) => (s ? `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})` : '—');
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : NaN);
const table = (head, rows) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join(
    '\n',
  );

/** Ratios ours/bare per workload, from the medians across rounds. */
export function ratios(result) {
  const out = [];
  for (const [workload, { servers }] of Object.entries(result.throughput ?? {})) {
    if (!servers['sdk-memory']) continue;
    const rps = (k) => servers[k]?.rps.median;
    const p99 = (k) => servers[k]?.p99.median;
    out.push({
      workload,
      noneVsDb: ratio(rps('ours-none'), rps('sdk-db')),
      noneVsMem: ratio(rps('ours-none'), rps('sdk-memory')),
      keyVsDb: ratio(rps('ours-apikey'), rps('sdk-db')),
      keyVsMem: ratio(rps('ours-apikey'), rps('sdk-memory')),
      p99NoneVsMem: ratio(p99('ours-none'), p99('sdk-memory')),
      p99KeyVsMem: ratio(p99('ours-apikey'), p99('sdk-memory')),
      keyCost: 1 - ratio(rps('ours-apikey'), rps('ours-none')),
    });
  }
  return out;
}

/** With --baseline: the build under test against the baseline commit, both auth none, per workload. */
export function baselineTable(result) {
  const rows = [];
  for (const [workload, { servers }] of Object.entries(result.throughput ?? {})) {
    const now = servers['ours-none'];
    const before = servers['ours-base'];
    if (!now || !before) continue;
    rows.push([
      workload,
      `${f0(before.rps.median)} → ${f0(now.rps.median)}`,
      `${f2(ratio(now.rps.median, before.rps.median))}×`,
      `${f1(before.p99.median)} → ${f1(now.p99.median)}`,
      `${f2(before.cpuPer1k.median)} → ${f2(now.cpuPer1k.median)}`,
      `${f2(before.pgCpuPer1k?.median)} → ${f2(now.pgCpuPer1k?.median)}`,
      `${f1(before.queriesPerRequest?.median)} → ${f1(now.queriesPerRequest?.median)}`,
      `${spread(before.rps)} / ${spread(now.rps)}`,
    ]);
  }
  return table(
    [
      'workload',
      'req/s before → after',
      'after ÷ before',
      'p99 ms before → after',
      'CPU s / 1,000 req',
      'PostgreSQL CPU s / 1,000 req',
      'queries / req',
      'req/s spread (min–max) before / after',
    ],
    rows,
  );
}

function baselineSection(result) {
  if (!result.baseline) return '';
  return `## Before and after (--baseline ${result.baseline.commit})

\`ours-base\` is commit ${result.baseline.commit} built apart (git archive + tsc) and run beside the build under test,
auth none on its own scratch database, taking turns with every other contender in each round.

${baselineTable(result)}

`;
}

export function ratioTable(result) {
  return table(
    [
      'workload',
      'req/s ours-none ÷ SDK-db',
      'req/s ours-none ÷ SDK-mem',
      'req/s ours-apikey ÷ SDK-db',
      'req/s ours-apikey ÷ SDK-mem',
      'p99 ours-none ÷ SDK-mem',
      'p99 ours-apikey ÷ SDK-mem',
      'API-key cost (1 − apikey÷none)',
    ],
    ratios(result).map((r) => [
      r.workload,
      `${f2(r.noneVsDb)}×`,
      `${f2(r.noneVsMem)}×`,
      `${f2(r.keyVsDb)}×`,
      `${f2(r.keyVsMem)}×`,
      `${f2(r.p99NoneVsMem)}×`,
      `${f2(r.p99KeyVsMem)}×`,
      Number.isFinite(r.keyCost) ? `${(r.keyCost * 100).toFixed(1)} %` : '—',
    ]),
  );
}

/** Each issue-22 goal (and the earlier ones still held), with its figure and met / missed / not measured. */
export function goals(result) {
  const byWorkload = Object.fromEntries(ratios(result).map((r) => [r.workload, r]));
  const send = byWorkload.SendMessage ?? {};
  const get = byWorkload.GetTask ?? {};
  const streaming = byWorkload.SendStreamingMessage ?? {};
  const verdict = (ok) => (ok === undefined ? 'not measured' : ok ? '**met**' : '**missed**');
  const has = (x) => Number.isFinite(x);
  const rows = [];
  const add = (goal, figure, ok) => rows.push({ goal, figure, status: verdict(ok) });
  const atLeast = (goal, x, bound) => add(goal, `${f2(x)}×`, has(x) ? x >= bound : undefined);

  atLeast('SendMessage ours (PostgreSQL, API key) ≥ 0.7× SDK-memory', send.keyVsMem, 0.7);
  atLeast('SendStreamingMessage ours (PostgreSQL, API key) ≥ 0.5× SDK-memory', streaming.keyVsMem, 0.5);
  add(
    'GetTask p99 ours (PostgreSQL, API key) ≤ 1.2× SDK-memory',
    `${f2(get.p99KeyVsMem)}×`,
    has(get.p99KeyVsMem) ? get.p99KeyVsMem <= 1.2 : undefined,
  );
  for (const [w, r] of [
    ['SendMessage', send],
    ['GetTask', get],
  ]) {
    add(
      `API-key auth costs ≤ 5 % of ${w} throughput`,
      has(r.keyCost) ? `${(r.keyCost * 100).toFixed(1)} %` : '—',
      has(r.keyCost) ? r.keyCost <= 0.05 : undefined,
    );
  }
  atLeast('SendMessage ours (auth none) ≥ 1.0× SDK-db', send.noneVsDb, 1.0);
  atLeast('SendMessage ours (API key) ≥ 1.0× SDK-db', send.keyVsDb, 1.0);

  const ours = result.streams?.results?.find((s) => s.server === 'ours-none');
  const levels = ours?.levels ?? [];
  const top = levels.at(-1);
  const at10k = levels.find((l) => l.streams >= 10_000);
  add(
    '10,000 concurrent streams on one process',
    at10k
      ? `${at10k.streams.toLocaleString('en-US')} held`
      : top
        ? `only ${top.streams.toLocaleString('en-US')} tried in this run`
        : (ours?.error ?? '—'),
    at10k ? true : ours?.error ? false : undefined,
  );
  // Judged on the JS heap + external growth at 10,000 streams; a smaller run shows its figure, unjudged.
  const heapAt = (l) => (l && has(l.heapKibPerStream) ? l.heapKibPerStream : NaN);
  const shown = at10k ?? top;
  add(
    '≤ 16 KiB JS heap + external per idle stream at 10,000 streams',
    shown
      ? `${f1(heapAt(shown))} KiB at ${shown.streams.toLocaleString('en-US')} streams; RSS ${f1(shown.kibPerStream)} KiB`
      : '—',
    has(heapAt(at10k)) ? heapAt(at10k) <= 16 : undefined,
  );
  const at1k = levels.find((l) => l.streams === 1000);
  add(
    'p99 time to first event ≤ 50 ms at 1,000 streams',
    at1k?.probeTtfeP99 !== undefined ? `${f1(at1k.probeTtfeP99)} ms` : '—',
    at1k?.probeTtfeP99 !== undefined ? at1k.probeTtfeP99 <= 50 : undefined,
  );

  const list = result.listAtScale;
  const worst = list?.pages?.length ? Math.max(...list.pages.map((p) => p.p99)) : NaN;
  add(
    'ListTasks p99 ≤ 5 ms per page at 1,000,000 tasks',
    has(worst) ? `${f1(worst)} ms worst page p99 at ${list.rows.toLocaleString('en-US')} tasks` : '—',
    has(worst) && list.rows >= 1_000_000 ? worst <= 5 : undefined,
  );

  // Cold starts against the bare SDK server's start in the same run; without it, not measured.
  const cold = Object.fromEntries((result.coldStart?.variants ?? []).filter((v) => v.ms).map((v) => [v.key, v]));
  for (const [key, what, bound, floorKey] of COLD_GOALS) {
    const ratio = cold[key] && cold.sdk ? cold[key].ms.median / cold.sdk.ms.median : NaN;
    const floor = floorKey && cold[floorKey] && cold.sdk ? cold[floorKey].ms.median / cold.sdk.ms.median : NaN;
    add(
      `Cold start ≤ ${bound}× the bare SDK server's on ${what}`,
      has(ratio)
        ? `${f1(ratio)}× (${f0(cold[key].ms.median)} ms vs ${f0(cold.sdk.ms.median)} ms, medians)` +
            (has(floor) ? `; floor, PGlite alone: ${f1(floor)}×` : '')
        : '—',
      has(ratio) ? ratio <= bound : undefined,
    );
  }
  return rows;
}

function throughputSection(result) {
  const parts = [];
  const label = Object.fromEntries(result.servers.map((s) => [s.key, s.label]));
  for (const [workload, { what, servers }] of Object.entries(result.throughput ?? {})) {
    parts.push(`### ${workload}\n\n${what}.\n`);
    parts.push(
      table(
        [
          'server',
          'req/s median (min–max)',
          'p50 ms',
          'p99 ms median (min–max)',
          'server CPU s / 1,000 req',
          'PostgreSQL CPU s / 1,000 req',
          'PostgreSQL queries / req',
          'peak RSS MiB',
          'non-2xx / errors',
        ],
        Object.entries(servers).map(([k, s]) => [
          `${k} (${label[k]})`,
          spread(s.rps),
          f1(s.p50.median),
          spread(s.p99, f1),
          f2(s.cpuPer1k.median),
          f2(s.pgCpuPer1k?.median),
          f1(s.queriesPerRequest?.median),
          f0(s.peakRssMiB),
          `${s.non2xx} / ${s.errors}`,
        ]),
      ),
    );
    parts.push('');
  }
  return parts.join('\n');
}

function streamsSection(result) {
  const s = result.streams;
  if (!s) return '_Not run._';
  const rows = [];
  for (const r of s.results) {
    if (r.error) {
      rows.push([r.server, '—', '—', '—', '—', '—', `failed: ${r.error}`]);
      continue;
    }
    for (const l of r.levels) {
      rows.push([
        r.server,
        l.streams.toLocaleString('en-US'),
        `${f0(l.rssMiB)} (base ${f0(r.baselineRssMiB)})`,
        f1(l.kibPerStream),
        f1(l.heapKibPerStream),
        `${f1(l.ttfeWhileOpeningP50)} / ${f1(l.ttfeWhileOpeningP99)}`,
        l.probeTtfeP99 !== undefined ? `${f1(l.probeTtfeP50)} / ${f1(l.probeTtfeP99)} (${l.probes} probes)` : '',
      ]);
    }
  }
  return [
    `Tasks left in \`TASK_STATE_INPUT_REQUIRED\` by the conformance actor (\`tck-input-required-*\`), one SubscribeToTask`,
    `stream each, opened ${s.openBatch} at a time from one client process (http.Agent, keep-alive, unlimited sockets).`,
    `Memory per stream = (RSS with N streams held − RSS before the first) ÷ N, both read right after a full garbage`,
    `collection in the server (\`--expose-gc\`, bench/servers/probe.mjs); likewise the JS heap + external (Buffers) per
stream, which is what the streams retain. RSS after a collection keeps the pages the allocator already holds, so its
delta can under- or over-state; the goal is judged on the heap + external figure when there is one. "Probe" TTFE: new subscribers, one at a`,
    `time, while the first level's streams are held (each probe stream closed after its first event).`,
    '',
    table(
      [
        'server',
        'streams held',
        'server RSS MiB',
        'KiB per stream: RSS',
        'KiB per stream: JS heap + external',
        'TTFE while opening p50 / p99 ms',
        'probe TTFE p50 / p99 ms',
      ],
      rows,
    ),
  ].join('\n');
}

function listSection(result) {
  const l = result.listAtScale;
  if (!l) return '_Not run._';
  const rows = (pages) =>
    pages.map((p) => [
      p.page,
      f1(p.p50),
      f1(p.p99),
      f1(p.max),
      f0(p.rps),
      f2(p.cpuMsPerReq),
      f1(p.youngGcPer1k),
      f1(p.youngGcMsPer1k),
      p.totalSize ?? '—',
    ]);
  const head = [
    'page',
    'p50 ms',
    'p99 ms',
    'max ms',
    'req/s',
    'server CPU ms / req',
    'young GCs / 1,000 req',
    'their pauses ms / 1,000 req',
    'totalSize answered',
  ];
  const rounds = l.rounds > 1 ? `, ${l.rounds} rounds each in turn (the p99 of the middle round by p99)` : '';
  return [
    `${l.rows.toLocaleString('en-US')} completed tasks in one scope (namespace \`default\`, owner \`anonymous\`), seeded with`,
    `\`INSERT … SELECT generate_series\` (batches of 10,000, the schema's triggers firing) in ${f1(l.seedS)} s. Ours, auth none; ListTasks \`pageSize\` ${l.pageSize}, one connection,`,
    `${l.warmupS ? `${l.warmupS} s of warm-up then ` : ''}${l.durationS} s per page${rounds}; deep pages use the keyset page token of the task at that offset.`,
    'Server CPU from `/proc/<pid>/stat`; collections from `gc` performance entries in the server (bench/servers/probe.mjs).',
    '',
    table(head, rows(l.pages)),
    ...(l.baseline
      ? [
          '',
          `Baseline ${l.baseline.commit} (--baseline), same database, in turn:`,
          '',
          table(head, rows(l.baseline.pages)),
        ]
      : []),
  ].join('\n');
}

/** Cold-start goals: variant key, what it starts on, the bound as a multiple of the bare SDK server's start. */
const COLD_GOALS = [
  ['pg-warm', 'PostgreSQL (migrated database)', 2],
  // The embedded goals with their floor: PGlite alone opening the same kind of directory.
  ['embedded-warm', 'a warm embedded data directory', 2, 'pglite-warm'],
  ['embedded-fresh', 'a fresh embedded data directory', 4, 'pglite-fresh'],
];

function coldSection(result) {
  const c = result.coldStart;
  if (!c) return '_Not run._';
  const sdk = c.variants.find((v) => v.key === 'sdk' && v.ms);
  const cpu = (figures) => f2(figures?.cpu?.median);
  return [
    `\`node dist/main.js\` spawned to the first 200 on \`/readyz\` (polled every 5 ms), auth \`apiKey\`, ${c.starts} starts each; the bare SDK server (\`bench/servers/sdk-server.mjs memory\`) started in the same run.${c.baseline ? ` Baseline: ${c.baseline} (--baseline), started before each start of the build under test.` : ''} CPU: the process's CPU seconds (user + system) when it answered, which depend less on the machine's load than the wall time. The floor rows are PGlite alone (\`bench/servers/pglite-open.mjs\`) opening the same kind of data directory and answering one \`SELECT 1\`: what an embedded start cannot go below while it opens PGlite before it is ready.`,
    '',
    table(
      [
        'variant',
        'median ms',
        'min–max ms',
        '× bare SDK',
        'CPU s (median)',
        ...(c.baseline ? ['baseline median ms', 'baseline CPU s'] : []),
        'load avg (1 min)',
      ],
      c.variants.map((v) =>
        v.error
          ? [v.label, 'failed', v.error.split('\n')[0], '—', '—', ...(c.baseline ? ['—', '—'] : []), '—']
          : [
              v.label,
              f0(v.ms.median),
              `${f0(v.ms.min)}–${f0(v.ms.max)}`,
              sdk && v.key !== 'sdk' ? f1(v.ms.median / sdk.ms.median) : '—',
              cpu(v),
              ...(c.baseline ? [v.base ? f0(v.base.ms.median) : '—', cpu(v.base)] : []),
              v.load ? v.load.join(' → ') : '—',
            ],
      ),
    ),
  ].join('\n');
}

function firstEventSection(result) {
  const fe = result.firstEvent;
  if (!fe) return '_Not run._';
  const what = [
    ['firstEventMs', 'first SSE event (the task)'],
    ['firstTokenMs', 'first `answer` artifact update (first token)'],
    ['completedMs', '`COMPLETED` status (last event)'],
  ];
  const rows = [];
  for (const r of fe.runs) {
    for (const [k, label] of what) {
      rows.push([
        r.concurrency === 1 ? '1 (one after another)' : `${r.concurrency} concurrent`,
        label,
        f1(r[k].median),
        f1(r[k].p95),
        f1(r[k].p99),
        `${r[k].n} of ${r.requests}`,
        r.failures === 0 ? '0' : `**${r.failures}**`,
      ]);
    }
  }
  const failures = fe.runs.flatMap((r) =>
    r.failureReasons.map((x) => `- ${r.concurrency} client(s), ×${x.count}: ${x.reason}`),
  );
  return [
    `Ours (\`node dist/main.js\`, PostgreSQL, auth \`none\`) with \`CLEVERAGENTS_ACTOR_BACKEND=local\`: every task runs the`,
    `in-process LangGraph orchestrator, whose model is a scripted OpenAI-compatible endpoint served by the harness itself`,
    `on loopback (\`POST /v1/chat/completions\`, \`stream: true\`: a role delta, ${fe.tokens} content tokens, \`finish_reason: stop\`,`,
    `\`[DONE]\`, all written at once, no delay), so the times are the server's own overhead around a model call. Two runs`,
    `of ${fe.runs[0]?.requests ?? '—'} \`SendStreamingMessage\` requests (v1.0, a new \`messageId\` each, no \`contextId\`, so each starts a`,
    `session): one client sending them one after another, then ${fe.runs[1]?.concurrency ?? '—'} concurrent clients sharing them. The time`,
    `is from sending the request to each event's arrival at the client (keep-alive connections, after ${fe.warmup} warm-up streams), and`,
    `a stream is timed only if it ended \`COMPLETED\` with the scripted answer assembled from its artifact updates (the`,
    `streamed tokens and the last chunk alike); any other ending counts as failed. Model calls answered: ${fe.modelCalls}.`,
    '',
    table(['clients', 'time to', 'median ms', 'p95 ms', 'p99 ms', 'streams timed', 'failed'], rows),
    ...(failures.length ? ['', 'Failures:', '', ...failures] : []),
  ].join('\n');
}

function cliSection(result) {
  const c = result.cliStartup;
  if (!c) return '_Not run._';
  return [
    `The \`cleveragents\` client (\`node dist/client/cli/bin.js\`), ${c.runs} timed runs of each command after ${c.warmup} untimed`,
    `ones, one after another, against ours started from \`dist/\` on a temporary embedded database with the conformance`,
    `actor (it answers at once, so the times are the client's and the server's, not a model's). \`send\` is timed to`,
    `the first byte of the answer on stdout; \`--local\` spawns \`dist/main.js --stdio\` itself, on a data directory the`,
    `warm-up runs made (WARM) or on a new one each run (FRESH, a first use of local mode). Load average (1 min)`,
    `${c.load[0][0]} → ${c.load[1][0]}.`,
    '',
    table(
      ['command', 'measured', 'median ms', 'p95 ms', 'min–max ms', 'median to exit ms'],
      c.results.map((r) => [
        `\`${r.command}\``,
        r.measured,
        f0(r.median),
        f0(r.p95),
        `${f0(r.min)}–${f0(r.max)}`,
        f0(r.exitMedian ?? r.median),
      ]),
    ),
  ].join('\n');
}

const PROFILES_HEADING = '### CPU profiles of ours';

/** The last report: bench/results/latest.md, else the newest report kept in bench/reports/. */
function lastReportPath() {
  if (existsSync(LATEST_REPORT_PATH)) return LATEST_REPORT_PATH;
  if (!existsSync(KEPT_REPORTS_DIR)) return undefined;
  const kept = readdirSync(KEPT_REPORTS_DIR)
    .filter((name) => name.endsWith('.md'))
    .sort();
  return kept.length > 0 ? join(KEPT_REPORTS_DIR, kept.at(-1)) : undefined;
}

/**
 * The profile blocks ("#### <workload>" to the next one) of the last report. Profile results live in the
 * git-ignored bench/results/, so a checkout without them keeps the blocks a profile run rendered earlier
 * (each names its own date and command) instead of dropping them.
 */
function keptProfiles() {
  const path = lastReportPath();
  if (!path) return {};
  const text = readFileSync(path, 'utf8');
  const at = text.indexOf(`\n${PROFILES_HEADING}\n`);
  if (at < 0) return {};
  const kept = {};
  for (const block of text.slice(at + PROFILES_HEADING.length + 2).split(/^(?=#### )/m)) {
    const name = block.match(/^#### (\S+)/)?.[1];
    if (name && PROFILE_WORKLOADS.includes(name)) kept[name] = block.trim();
  }
  return kept;
}

function profileSection() {
  const kept = keptProfiles();
  const found = PROFILE_WORKLOADS.filter((w) => existsSync(profilePath(w)) || kept[w]);
  if (found.length === 0) return '_No profile yet: run `npm run bench:profile`._';
  return found
    .map((w) => {
      if (!existsSync(profilePath(w))) return kept[w];
      const p = JSON.parse(readFileSync(profilePath(w), 'utf8'));
      return [
        `#### ${w}`,
        '',
        `\`npm run bench:profile -- --workload ${w}\` (${p.date.slice(0, 16).replace('T', ' ')} UTC): ours (${p.auth}) under ${w} load,`,
        `${p.durationS} s, ${p.connections} connections, \`--cpu-prof\` (startup included), ${f0(p.rps)} req/s.`,
        `Self time by package, ${f1(p.totalMs / 1000)} s sampled (idle excluded):`,
        '',
        table(
          ['group', 'self ms', 'share', 'largest packages (ms)'],
          p.groups.slice(0, 12).map((g) => [
            g.group,
            f0(g.ms),
            `${f1(g.share * 100)} %`,
            g.packages
              .slice(0, 4)
              .map((x) => `${x.pkg} ${f0(x.ms)}`)
              .join(', '),
          ]),
        ),
        '',
        'Top functions by self time:',
        '',
        table(
          ['function', 'where', 'self ms', 'share'],
          p.functions.slice(0, 15).map((x) => [`\`${x.name}\``, x.where, f0(x.ms), `${f1(x.share * 100)} %`]),
        ),
      ].join('\n');
    })
    .join('\n\n');
}

function keptReading() {
  if (!existsSync(DOC_PATH)) return undefined;
  const text = readFileSync(DOC_PATH, 'utf8');
  const a = text.indexOf(READING_START);
  const b = text.indexOf(READING_END);
  return a >= 0 && b > a ? text.slice(a + READING_START.length, b).trim() : undefined;
}

const runOf = (result) =>
  `\`${result.command}\` (bench/run.mjs) on ${result.date.slice(0, 16).replace('T', ' ')} UTC, commit ${result.build?.commit ?? '?'}`;

function goalSection(result) {
  return `## Goals (issue 22)

${table(
  ['goal', 'figure in this run', 'status'],
  goals(result).map((g) => [g.goal, g.figure, g.status]),
)}

"Not measured" means this run did not reach the goal's scale (the quick run holds 1,000 streams and seeds 100,000
tasks; \`npm run bench:full\` measures 10,000 streams and 1,000,000 tasks), or did not measure the figure the goal
is judged against (the cold-start goals need the bare SDK server's start, \`coldStart.sdk\`).`;
}

/** docs/benchmarks.md: the goal table of `result` and the reading, kept; every other table is in the run's report. */
export function renderDocs(result) {
  const reading =
    keptReading() ??
    "_To be written by a human after a run: where the time goes, what is ours and what is the framework's (see the run's report)._";
  return `# Benchmarks

The server against the bare \`@a2a-js/sdk\` server, side by side. The goal table below is from
${runOf(result)}; regenerate with \`npm run bench\` (quick, < 5 min) or \`npm run bench:full\`. Each run writes its whole report (the
machine, how it measures, every table, the CPU profiles) to \`bench/results/latest.md\` and
\`bench/results/<stamp>-<mode>.md\`, beside the raw JSON (git-ignored); reports of the runs the reading discusses are
kept in \`bench/reports/\`. The goal table is rewritten by every run; the reading is kept.

${goalSection(result)}

## Reading

${READING_START}
${reading}
${READING_END}
`;
}

/** The whole report of one run: what it ran on, how it measured, every table, the goals and the CPU profiles. */
export function renderReport(result) {
  const m = result.machine;
  const c = result.config;
  return `# Benchmark run

Generated by ${runOf(result)}; the raw figures are in \`bench/results/latest.json\`. The reading of the
figures is in docs/benchmarks.md.

## Machine

| | |
|---|---|
| CPU | ${m.cpuModel}, ${m.cores} cores |
| RAM | ${m.ramGiB} GiB |
| Node.js | ${m.node} |
| PostgreSQL | ${m.postgres} (same server for every contender, a scratch database each) |
| OS | ${m.platform} |
| build under test | commit ${result.build?.commit ?? '?'}${result.build?.clean ? ` (${result.build.clean})` : ''}${result.build?.dirty ? ' with uncommitted changes in packages/' : ''} |
| run | ${result.mode}, ${f0(result.elapsedS)} s${result.failures ? `; **failed sections: ${result.failures.map((x) => x.section).join(', ')}**` : ''} |

## How it is measured

\`\`\`sh
npm ci
npm run bench            # npm run build, then node bench/run.mjs         (quick: ${PROFILES.quick.rounds} rounds × ${PROFILES.quick.durationS} s, 1k streams, 100k tasks, ${PROFILES.quick.firstEventRequests} model streams)
npm run bench:full       # npm run build, then node bench/run.mjs --full  (${PROFILES.full.rounds} rounds × ${PROFILES.full.durationS} s, 1k/5k/10k streams, 1M tasks, ${PROFILES.full.firstEventRequests} model streams)
npm run bench:profile    # ours under SendMessage with --cpu-prof; self time grouped by package
npm run bench -- --rev HEAD   # measure a commit built apart from the working tree (git archive + tsc)
npm run bench -- --baseline REV   # also run commit REV as the contender ours-base: before and after in one run
\`\`\`

This run: \`${result.argv ?? result.command}\`.

- Contenders, each its own process on 127.0.0.1, started in the same run against the same PostgreSQL:
${result.servers.map((s) => `  - \`${s.key}\`: ${s.label}`).join('\n')}
- Ours is \`node dist/main.js\` with \`CLEVERAGENTS_ACTOR_BACKEND=conformance\` (\`local\` for the time to first event), \`CLEVERAGENTS_RATE_LIMIT_PER_MINUTE=0\`,
  \`CLEVERAGENTS_MIGRATE_ON_START=true\`, \`LOG_LEVEL=${c.logLevel}\`, \`NODE_ENV=development\` (\`none\` is refused in production);
  the API-key contender sends the bootstrap key in \`X-API-Key\`.
- The bare SDK is \`bench/servers/sdk-server.mjs\`: Express + \`DefaultRequestHandler\` + \`jsonRpcHandler\` /
  \`agentCardHandler\`, running **our conformance executor itself** (imported from \`dist/\`), with \`InMemoryTaskStore\` or
  \`DatabaseTaskStore\` (Kysely + pg, pool of 10). The SDK 1.3.0 ships no migration for that store: the harness creates its
  \`tasks\` table from the SDK's \`TaskRow\`, keyed (tenant, owner, id) and indexed as our table is.
- Wire: ${c.wire}, both sides. Loader: ${c.loader}, ${c.connections} connections, no pipelining.
- First a warm-up pass: every contender runs every workload for ${c.jitWarmupS ?? 0} s, so that no workload's rounds pay for a fresh
  process's compilation and heap growth. Each workload: a probe request checked for the right answer, a ${c.warmupS} s warm-up per contender, then ${c.rounds} rounds
  of ${c.durationS} s taking turns A B C D A B C D …; tables give the median across rounds and the min–max spread.
- Before each workload every scratch database is \`ANALYZE\`d (the earlier workloads insert thousands of tasks; without
  fresh statistics PostgreSQL may scan a whole scope for ListTasks by context, depending on when autovacuum ran).
- Server CPU seconds come from \`/proc/<pid>/stat\` (utime + stime) around each round; peak RSS is \`VmHWM\` from
  \`/proc/<pid>/status\`, reset through \`/proc/<pid>/clear_refs\` before each round (the max over rounds is shown).
- PostgreSQL CPU seconds: utime + stime of the PostgreSQL backends connected to the server's scratch database (found
  through \`pg_stat_activity\`, read from \`/proc/<pid>/stat\`) around each round; shared processes (WAL writer,
  checkpointer) are not counted, nor a backend that exits mid-round; — when PostgreSQL is not on this machine.
- PostgreSQL queries per request: every server is started with \`--import bench/servers/count-queries.mjs\`, which counts
  the queries sent through node-postgres (each a round trip; BEGIN/COMMIT included) and reports the count on SIGWINCH.
- The SDK server's card says \`pushNotifications: false\` (as a bare SDK app without a push store would), so the SDK sends
  no push notifications and reads no push configs; ours declares push notifications and its sender looks for configs of
  every task event.
- The loader shares the machine (${m.cores} cores) with the servers, so absolute figures are low and noisy; the ratios are
  the point.

${baselineSection(result)}## Ratios ours ÷ bare SDK

${ratioTable(result)}

## Throughput and latency

${throughputSection(result)}
## Scale

### Concurrent SubscribeToTask streams

${streamsSection(result)}

### ListTasks at scale

${listSection(result)}

### Cold start to ready

${coldSection(result)}

### Time to first event, local backend with a scripted model

${firstEventSection(result)}

### Client start-up

${cliSection(result)}

${goalSection(result)}

${PROFILES_HEADING}

${profileSection()}
`;
}

/** Writes the run's report to `reportPaths` (bench/results/latest.md when none are named); the report's text. */
export function writeReport(result, reportPaths = [LATEST_REPORT_PATH]) {
  const report = renderReport(result);
  for (const path of reportPaths) writeFileSync(path, report);
  return report;
}

/** Writes docs/benchmarks.md and the run's report (bench/results/latest.md); the doc's path. */
export function writeDocs(result) {
  writeReport(result);
  writeFileSync(DOC_PATH, renderDocs(result));
  return DOC_PATH;
}
