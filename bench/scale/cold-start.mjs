// Cold start: from spawning `node dist/main.js` to the first 200 on /readyz (polled every 5 ms), next to
// the bare SDK server's start (bench/servers/sdk-server.mjs, in-memory store) measured in the same run,
// and with --baseline, the baseline build's start too, taking turns start by start.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDb, dropScratchDb } from '../lib/pg.mjs';
import { startServer } from '../lib/proc.mjs';
import { distDir, oursEnv, ROOT } from '../lib/servers.mjs';
import { summary } from '../lib/stats.mjs';

const PORT = 18130;

async function startWith(dist, env) {
  const server = await startServer({ name: 'cold', args: [join(dist, 'main.js')], env, port: PORT, cwd: ROOT });
  await server.stop();
  return server.readyMs;
}

async function startSdkOnce() {
  const server = await startServer({
    name: 'cold-sdk',
    args: ['bench/servers/sdk-server.mjs', 'memory'],
    env: { NODE_ENV: 'development', BENCH_DIST: distDir() },
    port: PORT,
    cwd: ROOT,
  });
  await server.stop();
  return server.readyMs;
}

const load1 = () => loadavg()[0].toFixed(2);
const line = (samples) =>
  `median ${summary(samples).median.toFixed(0)} ms (${samples.map((s) => s.toFixed(0)).join(', ')})`;

export async function runColdStart({ cfg, dbPrefix, log, baseline }) {
  const n = cfg.coldStarts;
  const out = { starts: n, auth: 'apiKey', variants: [], ...(baseline ? { baseline: baseline.commit } : {}) };
  // The build under test, and the baseline build start by start after it on the same kind of state.
  let startOnce = (env) => startWith(distDir(), env);
  const base = [];
  const record = (key, label, samples, loadBefore) => {
    const v = { key, label, ms: summary(samples), samples, load: [loadBefore, load1()] };
    if (base.length) v.base = { ms: summary(base), samples: base.splice(0) };
    out.variants.push(v);
    log(`cold start ${label}: ${line(samples)}${v.base ? `; baseline ${line(v.base.samples)}` : ''}; load ${v.load}`);
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

    // Embedded (PGlite): a fresh data directory each time, then the same one again and again.
    await variant('embedded-fresh', 'embedded, fresh data directory', () =>
      times(cfg.coldStartsEmbeddedFresh ?? n, () => startOnce(oursEnv({ auth: 'apiKey', dataDir: dataDir() }))),
    );
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
