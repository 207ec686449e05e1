// ListTasks page latency with many tasks in one (namespace, owner) scope, seeded straight into
// our `tasks` table with INSERT … SELECT generate_series.
import { cannon, mustCall, rpc } from '../lib/load.mjs';
import { createScratchDb, dropScratchDb, withClient } from '../lib/pg.mjs';
import { startOurs } from '../lib/servers.mjs';

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

export async function runListAtScale({ cfg, dbPrefix, log }) {
  const rows = cfg.listRows;
  const dbName = `${dbPrefix}_list`;
  const url = await createScratchDb(dbName);
  const out = { rows, pageSize: 50, connections: 1, warmupS: cfg.warmupS, durationS: cfg.listDurationS, pages: [] };
  let server;
  try {
    // First start migrates the scratch database; seed while it is down.
    server = await startOurs({ name: 'ours-list', port: 18120, auth: 'none', databaseUrl: url });
    await server.stop();
    const t0 = performance.now();
    await seedTasks(url, rows);
    out.seedS = (performance.now() - t0) / 1000;
    log(`seeded ${rows} tasks in ${out.seedS.toFixed(1)} s`);
    server = await startOurs({ name: 'ours-list', port: 18120, auth: 'none', databaseUrl: url });

    const targets = [{ label: 'first page', offset: 0 }];
    for (const offset of [1000, Math.floor(rows / 2), rows - 50])
      targets.push({ label: `after ${offset.toLocaleString('en-US')} tasks`, offset });
    for (const t of targets) {
      const params = { pageSize: 50 };
      if (t.offset > 0) params.pageToken = await tokenAt(url, t.offset);
      const page = await mustCall(server.base, server.headers, 'ListTasks', params);
      if (page.tasks?.length !== 50) throw new Error(`ListTasks ${t.label}: ${page.tasks?.length} tasks, expected 50`);
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
      const r = await cannon({
        base: server.base,
        headers: server.headers,
        body: () => rpc('ListTasks', params),
        durationS: cfg.listDurationS,
        connections: 1,
      });
      const entry = {
        page: t.label,
        offset: t.offset,
        p50: r.latency.p50,
        p99: r.latency.p99,
        max: r.latency.max,
        rps: r.requests.total / r.duration,
        requests: r.requests.total,
        non2xx: r.non2xx,
        totalSize: page.totalSize,
      };
      out.pages.push(entry);
      log(`ListTasks at ${rows} tasks, ${t.label}: p50 ${entry.p50} ms, p99 ${entry.p99} ms`);
    }
  } finally {
    await server?.stop();
    await dropScratchDb(dbName).catch(() => {});
  }
  return out;
}
