import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import {
  spawnServer,
  startProcess,
  type ServerProcess,
  type SpawnedServer,
  stopAll,
} from '../support/server-process.js';
import { rawCall } from '../support/server.js';
import { until } from '../support/wait.js';

/*
 * The bootstrap API key is shown once and the database keeps only its hash: it is minted and printed
 * only once the server listens (docs/operations.md, first start). A first start that fails before —
 * the port taken — mints nothing, and the next start that serves prints it. The real process,
 * node dist/main.js, on a fresh embedded database.
 */

const KEY_IN_TEXT = /ca_[0-9a-z]{26}_[A-Za-z0-9_-]{43}/g;

describe('the bootstrap key and a start that fails', () => {
  let db: TestDatabase | undefined;
  let blocker: Server | undefined;
  const started: (ServerProcess | SpawnedServer)[] = [];

  beforeAll(async () => {
    db = await createEmbeddedTestDatabase();
  });

  afterAll(async () => {
    await stopAll(started);
    await new Promise((resolve) => (blocker ? blocker.close(resolve) : resolve(undefined)));
    await db?.cleanup();
  });

  const envOf = (database: TestDatabase): Record<string, string> => ({
    ...database.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    CLEVERAGENTS_AUTH_SCHEMES: 'apiKey',
    CLEVERAGENTS_ACTOR_BACKEND: 'conformance',
  });

  it('port taken: the start fails with no key minted; the next start prints one after listening, and it works', async () => {
    if (!db) throw new Error('no database');
    const taken = createServer();
    blocker = taken;
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;

    const failed = await spawnServer(envOf(db), port);
    started.push(failed);
    expect(await failed.exited).toBe(1);
    expect(failed.log()).toContain('EADDRINUSE');
    // The start got as far as the database (the default namespace), but printed and minted no key.
    expect(failed.log()).toMatch(/created the default namespace/);
    expect(failed.log().match(KEY_IN_TEXT)).toBeNull();
    expect(failed.log()).not.toContain('bootstrap API key');

    const server = await startProcess(envOf(db));
    started.push(server);
    // Ready means listening; the key follows at once.
    await until(() => /minted the bootstrap API key/.test(server.log()), 'the bootstrap key', 20_000);
    const log = server.log();
    const keys = log.match(KEY_IN_TEXT) ?? [];
    expect(keys).toHaveLength(1); // the database had no key: the failed start minted none
    expect(log.indexOf('"msg":"listening"')).toBeGreaterThanOrEqual(0);
    expect(log.indexOf('"msg":"listening"')).toBeLessThan(log.indexOf(keys[0]!));

    const whoami = await rawCall(
      `${server.baseUrl}/a2a`,
      { jsonrpc: '2.0', id: 1, method: '_cleveragents/auth/whoami' },
      { 'X-API-Key': keys[0]! },
    );
    expect(whoami.json.result).toMatchObject({
      scheme: 'apiKey',
      defaultNamespace: 'default',
      defaultNamespaceRole: 'owner',
    });
  }, 120_000);
});
