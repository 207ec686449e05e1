// Concurrent open SubscribeToTask streams held by one server process: memory per idle stream and
// time to first event. The tasks are conformance `tck-input-required` tasks: they stay in
// TASK_STATE_INPUT_REQUIRED (not terminal), so a subscription to one stays open until the client leaves.
import http from 'node:http';
import { mustCall, openSubscription, pool, userMessage } from '../lib/load.mjs';
import { createScratchDb, dropScratchDb } from '../lib/pg.mjs';
import { sleep } from '../lib/proc.mjs';
import { probe, startOurs, startSdk } from '../lib/servers.mjs';
import { quantile } from '../lib/stats.mjs';

const OPEN_BATCH = 100;

async function streamsOn(server, { levels, probes, log }) {
  const top = Math.max(...levels);
  const t0 = performance.now();
  const tasks = await pool(top + probes, 32, async (i) => {
    const r = await mustCall(server.base, server.headers, 'SendMessage', {
      message: userMessage(`tck-input-required-stream-${i}`),
    });
    return r.task.id;
  });
  log(`${server.name}: ${tasks.length} input-required tasks in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  await sleep(1000);
  const MiB = 1024 * 1024;
  const before = await probe(server); // after a full collection in the server
  const baseline = before.rss / MiB;
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const open = [];
  const ttfe = [];
  const out = { server: server.name, baselineRssMiB: baseline, baselineHeapMiB: before.heapUsed / MiB, levels: [] };
  try {
    for (const level of levels) {
      while (open.length < level) {
        const batch = Math.min(OPEN_BATCH, level - open.length);
        const start = open.length;
        const subs = await Promise.all(
          Array.from({ length: batch }, (_, k) =>
            openSubscription(server.base, server.headers, tasks[start + k], agent),
          ),
        );
        for (const s of subs) {
          open.push(s);
          ttfe.push(s.ttfeMs);
        }
      }
      await sleep(1000);
      const now = await probe(server);
      const rss = now.rss / MiB;
      const entry = {
        streams: level,
        rssMiB: rss,
        heapMiB: now.heapUsed / MiB,
        kibPerStream: ((rss - baseline) * 1024) / level,
        heapKibPerStream: (now.heapUsed + now.external - before.heapUsed - before.external) / 1024 / level,
        ttfeWhileOpeningP50: quantile(ttfe, 0.5),
        ttfeWhileOpeningP99: quantile(ttfe, 0.99),
      };
      if (level === levels[0]) {
        // New subscribers one at a time while `level` streams are held: the latency a client sees.
        const probeTtfe = [];
        for (let p = 0; p < probes; p++) {
          const s = await openSubscription(server.base, server.headers, tasks[top + p], agent);
          probeTtfe.push(s.ttfeMs);
          s.req.destroy();
        }
        entry.probeTtfeP50 = quantile(probeTtfe, 0.5);
        entry.probeTtfeP99 = quantile(probeTtfe, 0.99);
        entry.probes = probes;
      }
      out.levels.push(entry);
      log(
        `${server.name}: ${level} streams, RSS ${rss.toFixed(0)} MiB (base ${baseline.toFixed(0)}), ` +
          `${entry.kibPerStream.toFixed(1)} KiB/stream (heap + external ${entry.heapKibPerStream.toFixed(1)})` +
          (entry.probeTtfeP99 !== undefined
            ? `, TTFE p50 ${entry.probeTtfeP50.toFixed(1)} p99 ${entry.probeTtfeP99.toFixed(1)} ms`
            : ''),
      );
    }
  } finally {
    for (const s of open) s.req.destroy();
    agent.destroy();
  }
  return out;
}

export async function runStreams({ cfg, dbPrefix, log }) {
  const results = [];
  const dbName = `${dbPrefix}_streams`;
  const url = await createScratchDb(dbName);
  try {
    const contenders = [
      () => startOurs({ name: 'ours-none', port: 18111, auth: 'none', databaseUrl: url, gc: true }),
      () => startSdk({ name: 'sdk-memory', port: 18112, store: 'memory', gc: true }),
    ];
    for (const start of contenders) {
      const server = await start();
      try {
        results.push(await streamsOn(server, { levels: cfg.streamLevels, probes: cfg.ttfeProbes, log }));
      } catch (err) {
        results.push({ server: server.name, error: String(err?.message ?? err) });
        log(`${server.name}: streams failed: ${err?.message ?? err}`);
      } finally {
        await server.stop('SIGKILL');
      }
    }
  } finally {
    await dropScratchDb(dbName).catch(() => {});
  }
  return { openBatch: OPEN_BATCH, results };
}
