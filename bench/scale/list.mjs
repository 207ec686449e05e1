// ListTasks page latency with many tasks in one (namespace, owner) scope, seeded straight into
// our `tasks` table with INSERT … SELECT generate_series.
import { cannon, mustCall, rpc } from '../lib/load.mjs';
import { createScratchDb, dropScratchDb, withClient } from '../lib/pg.mjs';
import { join } from 'node:path';
import { cpuSeconds } from '../lib/proc.mjs';
import { probe, startOurs } from '../lib/servers.mjs';

/**
 * Seeds `rows` completed tasks in namespace "default", owner "anonymous" (the `none` caller), in
 * statements of SEED_BATCH rows, each its own transaction: whatever triggers the schema has on
 * `tasks` (the task counters) run as they would for real writes, without one transaction piling up
 * row versions of the same counter rows.
 */
export const SEED_BATCH = 10_000;
export async function seedTasks(url, rows) {
  await withClient(url, async (c) => {
    for (let from = 1; from <= rows; from += SEED_BATCH) {
      await c.query(SEED_SQL, [from, Math.min(rows, from + SEED_BATCH - 1)]);
    }
    await c.query('VACUUM ANALYZE tasks');
  });
}

const SEED_SQL = `
  INSERT INTO tasks (namespace, owner, id, context_id, state, status_timestamp, task, created_at, updated_at)
  SELECT 'default', 'anonymous', s.id, s.ctx, 'TASK_STATE_COMPLETED', s.ts,
    jsonb_build_object(
      'id', s.id, 'contextId', s.ctx,
      'status', jsonb_build_object('state', 'TASK_STATE_COMPLETED', 'timestamp', s.tstext,
        'message', jsonb_build_object('messageId', md5('a' || s.g), 'contextId', s.ctx, 'taskId', s.id,
          'role', 'ROLE_AGENT', 'parts', jsonb_build_array(jsonb_build_object('text', 'Hello from TCK', 'mediaType', 'text/plain')))),
      'history', jsonb_build_array(
        jsonb_build_object('messageId', 'tck-complete-task-' || s.g, 'contextId', s.ctx, 'taskId', s.id,
          'role', 'ROLE_USER', 'parts', jsonb_build_array(jsonb_build_object('text', 'benchmark'))))),
    s.ts, s.ts
  FROM (
    SELECT g, md5(g::text)::uuid::text AS id, md5('c' || (g % 10000))::uuid::text AS ctx,
           t.ts, to_char(t.ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS tstext
    FROM generate_series($1::int, $2::int) g,
         LATERAL (SELECT timestamptz '2026-01-01 00:00:00+00' + g * interval '7 milliseconds' AS ts) t
  ) s`;

/** Our page token for the row at `offset` in (status_timestamp DESC, id DESC) order: base64 "<ts>|<id>". */
async function tokenAt(url, offset) {
  return withClient(url, async (c) => {
    const { rows } = await c.query(
      `SELECT to_char(status_timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ts, id
         FROM tasks WHERE namespace = 'default' AND owner = 'anonymous'
         ORDER BY status_timestamp DESC, id DESC OFFSET $1 LIMIT 1`,
      [offset - 1],
    );
    return Buffer.from(`${rows[0].ts}|${rows[0].id}`, 'utf8').toString('base64');
  });
}

/** One contender's rounds on one page: latency of the middle round by p99, and per-request CPU and collections. */
function pageEntry(target, page, rounds) {
  const requests = rounds.reduce((n, r) => n + r.requests, 0);
  const seconds = rounds.reduce((n, r) => n + r.duration, 0);
  const per1k = (pick) =>
    rounds.every((r) => Number.isFinite(pick(r))) ? (rounds.reduce((n, r) => n + pick(r), 0) / requests) * 1000 : NaN;
  const byP99 = [...rounds].sort((a, b) => a.p99 - b.p99);
  const middle = byP99[Math.floor((byP99.length - 1) / 2)];
  return {
    page: target.label,
    offset: target.offset,
    p50: middle.p50,
    p99: middle.p99,
    p99s: rounds.map((r) => r.p99),
    max: Math.max(...rounds.map((r) => r.max)),
    rps: requests / seconds,
    requests,
    non2xx: rounds.reduce((n, r) => n + r.non2xx, 0),
    totalSize: page.totalSize,
    cpuMsPerReq: per1k((r) => r.cpuS),
    youngGcPer1k: per1k((r) => r.young),
    youngGcMsPer1k: per1k((r) => r.youngMs),
    fullGcPer1k: per1k((r) => r.other),
  };
}

/** One round of load on one server, with its CPU seconds and collections from the server's probe. */
async function measureRound(server, params, durationS) {
  const before = { cpu: cpuSeconds(server.pid), gc: (await probe(server))?.gc };
  const r = await cannon({
    base: server.base,
    headers: server.headers,
    body: () => rpc('ListTasks', params),
    durationS,
    connections: 1,
  });
  const after = { cpu: cpuSeconds(server.pid), gc: (await probe(server))?.gc };
  const gcDelta = (key) => (before.gc && after.gc ? after.gc[key] - before.gc[key] : NaN);
  return {
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    requests: r.requests.total,
    duration: r.duration,
    non2xx: r.non2xx,
    cpuS: after.cpu - before.cpu,
    young: gcDelta('young'),
    youngMs: gcDelta('youngMs'),
    other: gcDelta('other'),
  };
}

/**
 * Pages at several depths of `rows` tasks, one connection. With `--baseline`, the baseline build serves
 * the same database as `ours-base`, and the two take turns, three rounds each, on every page.
 */
export async function runListAtScale({ cfg, dbPrefix, log, baseline }) {
  const rows = cfg.listRows;
  const dbName = `${dbPrefix}_list`;
  const url = await createScratchDb(dbName);
  const rounds = baseline ? 3 : 1;
  const out = {
    rows,
    pageSize: 50,
    connections: 1,
    warmupS: cfg.warmupS,
    durationS: cfg.listDurationS,
    rounds,
    pages: [],
    ...(baseline ? { baseline: { commit: baseline.commit, pages: [] } } : {}),
  };
  const servers = [];
  const start = (key, port, entry) =>
    startOurs({ name: key, port, auth: 'none', databaseUrl: url, countQueries: true, ...(entry ? { entry } : {}) });
  try {
    // First start migrates the scratch database; seed while it is down.
    const migrating = await start('ours-list', 18120);
    await migrating.stop();
    const t0 = performance.now();
    await seedTasks(url, rows);
    out.seedS = (performance.now() - t0) / 1000;
    log(`seeded ${rows} tasks in ${out.seedS.toFixed(1)} s`);
    servers.push({ key: 'ours', server: await start('ours-list', 18120), pages: out.pages });
    if (baseline) {
      const entry = join(baseline.dist, 'main.js');
      servers.push({
        key: 'ours-base',
        server: await start('ours-base-list', 18121, entry),
        pages: out.baseline.pages,
      });
    }

    const targets = [{ label: 'first page', offset: 0 }];
    for (const offset of [1000, Math.floor(rows / 2), rows - 50])
      targets.push({ label: `after ${offset.toLocaleString('en-US')} tasks`, offset });
    for (const t of targets) {
      const params = { pageSize: 50 };
      if (t.offset > 0) params.pageToken = await tokenAt(url, t.offset);
      const measured = new Map();
      for (const { key, server } of servers) {
        const page = await mustCall(server.base, server.headers, 'ListTasks', params);
        if (page.tasks?.length !== 50)
          throw new Error(`ListTasks ${t.label}: ${page.tasks?.length} tasks, expected 50`);
        measured.set(key, { page, rounds: [] });
        // Warmed up on the same page first, as the throughput section is: the first target is otherwise also
        // the fresh server's first traffic, and its p99 was its code being compiled.
        if (cfg.warmupS > 0) {
          await cannon({
            base: server.base,
            headers: server.headers,
            body: () => rpc('ListTasks', params),
            durationS: cfg.warmupS,
            connections: 1,
          });
        }
      }
      for (let round = 0; round < rounds; round++) {
        for (const { key, server } of servers) {
          measured.get(key).rounds.push(await measureRound(server, params, cfg.listDurationS));
        }
      }
      for (const { key, pages } of servers) {
        const { page, rounds: done } = measured.get(key);
        const entry = pageEntry(t, page, done);
        pages.push(entry);
        log(
          `ListTasks at ${rows} tasks, ${t.label}, ${key}: p50 ${entry.p50} ms, p99 ${entry.p99} ms` +
            ` (rounds ${entry.p99s.join(', ')}), ${entry.cpuMsPerReq.toFixed(3)} ms CPU/req,` +
            ` ${entry.youngGcPer1k.toFixed(1)} young GCs (${entry.youngGcMsPer1k.toFixed(1)} ms) per 1,000`,
        );
      }
    }
  } finally {
    for (const { server } of servers) await server.stop();
    await dropScratchDb(dbName).catch(() => {});
  }
  return out;
}
