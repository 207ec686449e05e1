// Cold start: from spawning `node dist/main.js` to the first 200 on /readyz (polled every 5 ms).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDb, dropScratchDb } from '../lib/pg.mjs';
import { startServer } from '../lib/proc.mjs';
import { distDir, oursEnv, ROOT } from '../lib/servers.mjs';
import { summary } from '../lib/stats.mjs';

const PORT = 18130;

async function startOnce(env) {
  const server = await startServer({ name: 'cold', args: [join(distDir(), 'main.js')], env, port: PORT, cwd: ROOT });
  await server.stop();
  return server.readyMs;
}

export async function runColdStart({ cfg, dbPrefix, log }) {
  const n = cfg.coldStarts;
  const out = { starts: n, auth: 'apiKey', variants: [] };
  const record = (key, label, samples) => {
    out.variants.push({ key, label, ms: summary(samples), samples });
    log(
      `cold start ${label}: median ${summary(samples).median.toFixed(0)} ms (${samples.map((s) => s.toFixed(0)).join(', ')})`,
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
    try {
      record(key, label, await run());
    } catch (err) {
      out.variants.push({ key, label, error: String(err?.message ?? err).slice(0, 2000) });
      log(`cold start ${label}: failed: ${String(err?.message ?? err).split('\n')[0]}`);
    }
  };
  const times = async (count, fn) => {
    const samples = [];
    for (let i = 0; i < count; i++) samples.push(await fn(i));
    return samples;
  };
  try {
    // PostgreSQL, fresh database: the start runs the migrations and mints the bootstrap key.
    await variant('pg-fresh', 'PostgreSQL, fresh database (migrations run)', () =>
      times(n, async (i) => {
        const name = `${dbPrefix}_cold_${i}`;
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
    await variant('embedded-warm', 'embedded, warm data directory', async () => {
      const embDir = dataDir();
      await startOnce(oursEnv({ auth: 'apiKey', dataDir: embDir }));
      return times(n, () => startOnce(oursEnv({ auth: 'apiKey', dataDir: embDir })));
    });
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    for (const name of dbs) await dropScratchDb(name).catch(() => {});
  }
  return out;
}
