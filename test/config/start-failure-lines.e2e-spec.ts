import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { spawnServer, type SpawnedServer, stopAll } from '../support/server-process.js';
import { freePort } from '../support/server.js';

/*
 * A start that fails on a setting the operator must fix prints, besides the JSON log, one plain line on
 * stderr naming that setting (docs/errors.md, start-up failures): the port taken (PORT), the database
 * unreachable (DATABASE_URL, its password masked). The real process, node dist/main.js.
 */

const PASSWORD = 'sekret-pw-never-shown';

describe('the human line of a start that fails', () => {
  let db: TestDatabase | undefined;
  let blocker: Server | undefined;
  const started: SpawnedServer[] = [];

  beforeAll(async () => {
    db = await createEmbeddedTestDatabase();
  });

  afterAll(async () => {
    await stopAll(started);
    await new Promise((resolve) => (blocker ? blocker.close(resolve) : resolve(undefined)));
    await db?.cleanup();
  });

  const base = { NODE_ENV: 'test', LOG_LEVEL: 'info', CLEVERAGENTS_ACTOR_BACKEND: 'conformance' };

  it('port taken: names the address and PORT', async () => {
    if (!db) throw new Error('no database');
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    const failed = await spawnServer({ ...db.env, ...base }, port);
    started.push(failed);
    expect(await failed.exited).not.toBe(0);
    const lines = failed.log().split('\n');
    expect(lines).toContain(`cleveragents-server: cannot listen on 127.0.0.1:${port} (PORT): address in use`);
    // the JSON log line stays
    expect(failed.log()).toMatch(/"msg":"failed to start"/);
  }, 90_000);

  it('database unreachable: names DATABASE_URL with the password masked, and the password appears nowhere', async () => {
    const closed = await freePort();
    const failed = await spawnServer({
      ...base,
      DATABASE_URL: `postgres://agent:${PASSWORD}@127.0.0.1:${closed}/agents`,
      CLEVERAGENTS_DATABASE_CONNECT_SECONDS: '1',
      CLEVERAGENTS_MIGRATE_ON_START: 'true',
    });
    started.push(failed);
    expect(await failed.exited).not.toBe(0);
    const lines = failed.log().split('\n');
    expect(lines).toContain(
      `cleveragents-server: cannot reach the database at postgres://agent:****@127.0.0.1:${closed}/agents (DATABASE_URL): ECONNREFUSED`,
    );
    expect(failed.log()).not.toContain(PASSWORD);
  }, 60_000);
});
