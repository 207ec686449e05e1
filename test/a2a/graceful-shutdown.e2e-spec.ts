import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { freePort, readSse, startServer } from '../support/server.js';
import { DIST_MAIN } from '../support/stdio-client.js';
import { wireMessageV1 } from '../factories/messages.js';

const streamBody = (id: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'SendStreamingMessage',
    params: { message: wireMessageV1('test-resubscribe-message-id') },
  });

async function waitFor(probe: () => Promise<boolean>, timeoutMs = 20000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const target = databaseTargets()[0]!; // embedded: the local-mode default, and the lock file matters here

describe(`graceful shutdown on ${target.kind}`, () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await target.create();
  });

  afterAll(async () => {
    await db?.cleanup();
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
    const port = await freePort();
    const child = spawn(process.execPath, [DIST_MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'test',
        PORT: String(port),
        HOST: '127.0.0.1',
        CLEVERAGENTS_AUTH_SCHEMES: 'none',
        CLEVERAGENTS_ACTOR_BACKEND: 'conformance',
        ...db.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let logs = '';
    child.stdout.on('data', (c: Buffer) => (logs += c.toString()));
    child.stderr.on('data', (c: Buffer) => (logs += c.toString()));
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 + 15 : null))),
    );
    try {
      const endpoint = `http://127.0.0.1:${port}/a2a`;
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok);
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: streamBody('s2'),
      });
      const events = readSse(res);
      await new Promise((r) => setTimeout(r, 300));
      child.kill('SIGTERM');
      const received = await events;
      expect(received.at(-1).error.data[0].reason).toBe('SERVER_SHUTTING_DOWN');
      const code = await exited;
      expect([0, 143]).toContain(code);
      expect(logs).toMatch(/"msg":"shutting down"/);
      expect(existsSync(join(db.env.CLEVERAGENTS_DATA_DIR!, 'database.lock'))).toBe(false);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
