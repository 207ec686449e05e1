// Cold start: from spawning `node dist/main.js` to the first 200 on /readyz (polled every 5 ms), next to
// the bare SDK server's start (bench/servers/sdk-server.mjs, in-memory store) measured in the same run,
// and with --baseline, the baseline build's start too, taking turns start by start. Each start also
// records the CPU seconds the process had used when it answered (utime + stime): a figure less moved
// than the wall time by what else runs on the machine. The embedded variants come with their floor:
// PGlite alone opening the same kind of data directory (bench/servers/pglite-open.mjs).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDb, dropScratchDb } from '../lib/pg.mjs';
import { cpuSeconds, startServer } from '../lib/proc.mjs';
import { distDir, oursEnv, ROOT } from '../lib/servers.mjs';
import { summary } from '../lib/stats.mjs';

const PORT = 18130;

/** Starts, waits for /readyz, stops: the wall time to ready and the CPU seconds used by then. */
async function timedStart(options) {
  const server = await startServer({ ...options, port: PORT, cwd: ROOT });
  let cpu = NaN;
  try {
    cpu = cpuSeconds(server.pid);
  } catch {
    /* exited already */
  }
  await server.stop();
  return { ms: server.readyMs, cpu };
}

const startWith = (dist, env) => timedStart({ name: 'cold', args: [join(dist, 'main.js')], env });

const startSdkOnce = () =>
  timedStart({
    name: 'cold-sdk',
    args: ['bench/servers/sdk-server.mjs', 'memory'],
    env: { NODE_ENV: 'development', BENCH_DIST: distDir() },
  });

/** PGlite alone on `dataDir` (seeded from the build's template first with `seed`): see pglite-open.mjs. */
const openPgliteOnce = (dataDir, seed) =>
  timedStart({
    name: 'cold-pglite',
    args: ['bench/servers/pglite-open.mjs', ...(seed ? ['--seed'] : [])],
    env: { BENCH_DIST: distDir(), CLEVERAGENTS_DATA_DIR: dataDir },
  });

const load1 = () => loadavg()[0].toFixed(2);
const line = (starts) =>
  `median ${summary(starts.map((s) => s.ms)).median.toFixed(0)} ms (${starts.map((s) => s.ms.toFixed(0)).join(', ')}), ` +
  `CPU median ${summary(starts.map((s) => s.cpu)).median.toFixed(2)} s`;

export async function runColdStart({ cfg, dbPrefix, log, baseline }) {
  const n = cfg.coldStarts;
  const out = { starts: n, auth: 'apiKey', variants: [], ...(baseline ? { baseline: baseline.commit } : {}) };
  // The build under test, and the baseline build start by start after it on the same kind of state.
  let startOnce = (env) => startWith(distDir(), env);
  const base = [];
  // samples: wall ms to ready; cpu: CPU seconds to ready, start by start.
  const figures = (starts) => ({
    ms: summary(starts.map((s) => s.ms)),
    samples: starts.map((s) => s.ms),
    cpu: summary(starts.map((s) => s.cpu)),
    cpuSamples: starts.map((s) => s.cpu),
  });
  const record = (key, label, starts, loadBefore) => {
    const v = { key, label, ...figures(starts), load: [loadBefore, load1()] };
    const baseStarts = base.splice(0);
    if (baseStarts.length) v.base = figures(baseStarts);
    out.variants.push(v);
    log(
      `cold start ${label}: ${line(starts)}${baseStarts.length ? `; baseline ${line(baseStarts)}` : ''}; load ${v.load}`,
    );
  };
  const dirs = [];
  const dbs = [];
  const dataDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'ca-bench-cold-'));
    dirs.push(d);
    return d;
  };
  // Each variant on its own: one that cannot start is recorded as failed and the others still run.
  const variant = async (key, label, run) => {
    const loadBefore = load1();
    base.length = 0;
    try {
      record(key, label, await run(), loadBefore);
    } catch (err) {
      out.variants.push({ key, label, error: String(err?.message ?? err).slice(0, 2000) });
      log(`cold start ${label}: failed: ${String(err?.message ?? err).split('\n')[0]}`);
    }
  };
  // With a baseline, `fn` runs twice per sample, the baseline first, each on its own fresh state.
  const times = async (count, fn, { alone = false } = {}) => {
    const samples = [];
    for (let i = 0; i < count; i++) {
      if (baseline && !alone) {
        const ours = startOnce;
        startOnce = (env) => startWith(baseline.dist, env);
        try {
          base.push(await fn(i, 'base'));
        } finally {
          startOnce = ours;
        }
      }
      samples.push(await fn(i, 'ours'));
    }
    return samples;
  };
  try {
    await variant('sdk', 'bare SDK server (InMemoryTaskStore)', () => times(n, startSdkOnce, { alone: true }));

    // PostgreSQL, fresh database: the start runs the migrations and mints the bootstrap key.
    await variant('pg-fresh', 'PostgreSQL, fresh database (migrations run)', () =>
      times(n, async (i, who) => {
        const name = `${dbPrefix}_cold_${i}_${who}`;
        dbs.push(name);
        const url = await createScratchDb(name);
        return startOnce(oursEnv({ auth: 'apiKey', databaseUrl: url, dataDir: dataDir(), migrate: true }));
      }),
    );
    const warmName = `${dbPrefix}_cold_warm`;
    const warmDir = dataDir();
    let warm; // the migrated database, made by one start before the first warm variant
    const warmUrl = () =>
      (warm ??= (async () => {
        dbs.push(warmName);
        const url = await createScratchDb(warmName);
        await startOnce(oursEnv({ auth: 'apiKey', databaseUrl: url, dataDir: warmDir, migrate: true }));
        return url;
      })());
    await variant('pg-warm', 'PostgreSQL, migrated database, CLEVERAGENTS_MIGRATE_ON_START=false', () =>
      times(n, async () =>
        startOnce(oursEnv({ auth: 'apiKey', databaseUrl: await warmUrl(), dataDir: warmDir, migrate: false })),
      ),
    );
    await variant('pg-warm-migrate', 'PostgreSQL, migrated database, CLEVERAGENTS_MIGRATE_ON_START=true', () =>
      times(n, async () =>
        startOnce(oursEnv({ auth: 'apiKey', databaseUrl: await warmUrl(), dataDir: warmDir, migrate: true })),
      ),
    );

    // Embedded (PGlite): a fresh data directory each time, then the same one again and again; each after
    // its floor, PGlite alone opening the same kind of directory.
    await variant('pglite-fresh', 'floor: PGlite alone, fresh data directory (template copied, SELECT 1)', () =>
      times(cfg.coldStartsEmbeddedFresh ?? n, () => openPgliteOnce(dataDir(), true), { alone: true }),
    );
    await variant('embedded-fresh', 'embedded, fresh data directory', () =>
      times(cfg.coldStartsEmbeddedFresh ?? n, () => startOnce(oursEnv({ auth: 'apiKey', dataDir: dataDir() }))),
    );
    await variant('pglite-warm', 'floor: PGlite alone, warm data directory (SELECT 1)', async () => {
      const dir = dataDir();
      await openPgliteOnce(dir, true);
      return times(n, () => openPgliteOnce(dir, false), { alone: true });
    });
    // Each build warms a directory of its own: a data directory once opened by one build is not the other's.
    await variant('embedded-warm', 'embedded, warm data directory', async () => {
      const warmDirs = {};
      return times(n, async (_i, who) => {
        if (!warmDirs[who]) {
          warmDirs[who] = dataDir();
          await startOnce(oursEnv({ auth: 'apiKey', dataDir: warmDirs[who] }));
        }
        return startOnce(oursEnv({ auth: 'apiKey', dataDir: warmDirs[who] }));
      });
    });
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    for (const name of dbs) await dropScratchDb(name).catch(() => {});
  }
  return out;
}
