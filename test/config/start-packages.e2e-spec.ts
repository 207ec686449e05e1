import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { databaseTargets, TEST_DEFAULTS } from '../support/database.js';
import { startProcess, stopAll, type ServerProcess } from '../support/server-process.js';

/*
 * What a start loads on the server's thread (scripts/bundle-server.mjs, LAZY_PACKAGES): never PGlite, which
 * only the embedded database's own thread loads (src/database/pglite-thread.ts). node dist/main.js on each
 * database, with a preload that lists the packages the server's thread loaded.
 */

const PRELOAD = fileURLToPath(new URL('../fixtures/loaded-packages.mjs', import.meta.url));
const PGLITE = '@electric-sql/pglite';

describe('packages a server start loads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'start-packages-'));
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    await stopAll(servers);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the server on `kind`, waits until ready, stops it (SIGTERM) and returns what it loaded. */
  async function loadedBy(kind: 'embedded' | 'postgres'): Promise<string[]> {
    const target = databaseTargets().find((t) => t.kind === kind);
    if (!target) throw new Error(`no ${kind} database for tests`);
    const db = await target.create();
    const file = join(dir, `${kind}.json`);
    try {
      const server = await startProcess({
        ...TEST_DEFAULTS,
        ...db.env,
        CLEVERAGENTS_MIGRATE_ON_START: 'true',
        NODE_OPTIONS: `--import ${PRELOAD}`,
        LOADED_PACKAGES_FILE: file,
      });
      servers.push(server);
      server.process.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      return JSON.parse(readFileSync(file, 'utf8')) as string[];
    } finally {
      await db.cleanup();
    }
  }

  it('on PostgreSQL: no PGlite', async () => {
    const loaded = await loadedBy('postgres');
    // The list is real: packages the bundle leaves out and a start uses are in it.
    expect(loaded).toEqual(expect.arrayContaining(['pg', 'class-transformer']));
    expect(loaded).not.toContain(PGLITE);
  }, 90000);

  it("on the embedded database: no PGlite on the server's thread", async () => {
    const loaded = await loadedBy('embedded');
    expect(loaded).toEqual(expect.arrayContaining(['pg', 'class-transformer']));
    expect(loaded).not.toContain(PGLITE);
  }, 90000);
});
