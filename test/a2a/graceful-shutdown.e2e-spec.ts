import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { readSse, startServer } from '../support/server.js';
import { startProcess } from '../support/server-process.js';
import { wireMessageV1 } from '../factories/messages.js';
import { ifAssigned } from '../support/assigned.js';

const streamBody = (id: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'SendStreamingMessage',
    params: { message: wireMessageV1('test-resubscribe-message-id') },
  });

const target = databaseTargets()[0]; // embedded: the local-mode default, and the lock file matters here

describe(`graceful shutdown on ${target.kind}`, () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await target.create();
  });

  afterAll(async () => {
    await ifAssigned(db)?.cleanup();
  });

  it('closing the application ends an open stream with a last SERVER_SHUTTING_DOWN event', async () => {
    const server = await startServer(db);
    const res = await fetch(server.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: streamBody('s1'),
    });
    expect(res.headers.get('content-type')).toMatch(/event-stream/);
    const events = readSse(res);
    await new Promise((r) => setTimeout(r, 300));
    await server.close();
    const received = await events;
    expect(received[0].result.task).toBeDefined();
    const last = received.at(-1);
    expect(last.id).toBe('s1');
    expect(last.error.data[0]).toMatchObject({ reason: 'SERVER_SHUTTING_DOWN', domain: 'cleveragents' });
  });

  it('SIGTERM on the real process: stream gets its last event, the process exits, the data-dir lock is released', async () => {
    const server = await startProcess({
      NODE_ENV: 'test',
      CLEVERAGENTS_AUTH_SCHEMES: 'none',
      CLEVERAGENTS_ACTOR_BACKEND: 'conformance',
      ...db.env,
    });
    try {
      const endpoint = `${server.baseUrl}/a2a`;
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: streamBody('s2'),
      });
      const events = readSse(res);
      await new Promise((r) => setTimeout(r, 300));
      server.process.kill('SIGTERM');
      const received = await events;
      expect(received.at(-1).error.data[0].reason).toBe('SERVER_SHUTTING_DOWN');
      expect(await server.exited).toBe(0);
      expect(server.log()).toMatch(/"msg":"shutting down"/);
      expect(existsSync(join(db.env.CLEVERAGENTS_DATA_DIR, 'database.lock'))).toBe(false);
    } finally {
      if (server.process.exitCode === null) server.process.kill('SIGKILL');
    }
  });
});
