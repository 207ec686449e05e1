import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databaseTargets, TEST_DEFAULTS, type TestDatabase } from '../support/database.js';
import { startProcess, stopAll, type ServerProcess } from '../support/server-process.js';
import { holdsThroughout, until } from '../support/wait.js';

/*
 * The bundle's code cache on a Node without a compile cache of its own (src/common/code-cache.ts): the
 * first start writes it once serving, a later start reads it and leaves it as it is, a cache of other
 * code is replaced, and a place that cannot hold one costs nothing but the cache. node dist/main.js,
 * NODE_COMPILE_CACHE pointing at a folder of the test's own.
 */

/** Long enough after serving for a start to have written its code cache, if it writes one. */
const CACHE_WRITTEN_MS = 1000;

const nodeHasCompileCache = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function';

describe('the code cache of dist/main.js', () => {
  let db: TestDatabase | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'compile-cache-e2e-'));
  const cacheDir = join(dir, 'cache');
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    db = await databaseTargets().at(-1)!.create();
  });

  afterAll(async () => {
    await stopAll(servers);
    await db?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (extra: Record<string, string> = {}): Promise<ServerProcess> => {
    if (!db) throw new Error('no database');
    const env = { ...TEST_DEFAULTS, ...db.env, CLEVERAGENTS_MIGRATE_ON_START: 'true', NODE_COMPILE_CACHE: cacheDir };
    const server = await startProcess({ ...env, ...extra });
    servers.push(server);
    return server;
  };
  const stop = async (server: ServerProcess): Promise<void> => {
    server.process.kill('SIGTERM');
    await server.exited;
  };
  const cacheFiles = (): string[] => {
    const folder = join(cacheDir, 'cleveragents-script');
    return existsSync(folder) ? readdirSync(folder).map((name) => join(folder, name)) : [];
  };

  (nodeHasCompileCache ? it.skip : it)(
    'is written by the first start, read by the next, replaced when stale',
    async () => {
      const first = await start();
      await until(() => cacheFiles().some((f) => f.endsWith('.v8cache')), 'the code cache to be written', 20000);
      await stop(first);
      const [file] = cacheFiles();
      expect(cacheFiles()).toEqual([file]);
      const written = readFileSync(file);
      expect(written.length).toBeGreaterThan(100_000);

      // Read and accepted: left as it is.
      const mtime = statSync(file).mtimeMs;
      const second = await start();
      expect((await fetch(`${second.baseUrl}/readyz`)).status).toBe(200);
      // The first start wrote its cache moments after it served (above): a second that rewrote an accepted
      // one would have done so within this second.
      await holdsThroughout(
        () => statSync(file).mtimeMs === mtime,
        'the accepted cache left as it is',
        CACHE_WRITTEN_MS,
      );
      await stop(second);
      expect(statSync(file).mtimeMs).toBe(mtime);
      expect(readFileSync(file).equals(written)).toBe(true);

      // A cache of other code (its digest differs): never used, and replaced once the start serves.
      const stale = Buffer.from(written);
      stale[0] ^= 0xff;
      writeFileSync(file, stale);
      const third = await start();
      await until(() => readFileSync(file)[0] === written[0], 'the stale cache to be replaced', 20000);
      await stop(third);
      expect(readFileSync(file).subarray(0, 32).equals(written.subarray(0, 32))).toBe(true);
    },
  );

  it('does not stand in the way of a start where it cannot be kept', async () => {
    const notAFolder = join(dir, 'plain-file');
    writeFileSync(notAFolder, 'not a folder');
    const server = await start({ NODE_COMPILE_CACHE: notAFolder });
    expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200);
    // Where the cache can be kept, it is written moments after the start serves (the test above): by the
    // end of this window the attempt to keep it here has been made.
    await holdsThroughout(() => server.process.exitCode === null, 'the server running', CACHE_WRITTEN_MS);
    expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200);
    await stop(server);
    expect(server.log()).not.toMatch(/v8cache|ENOTDIR/);
  });
});
