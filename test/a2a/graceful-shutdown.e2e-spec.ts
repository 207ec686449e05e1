import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { startServer } from '../support/server.js';
import { startProcess } from '../support/server-process.js';
import { wireMessageV1 } from '../factories/messages.js';
import { ifAssigned } from '../support/assigned.js';
import { sseCall } from '../support/sse.js';

/** A stream on a task the conformance actor holds working for about 4 s. */
const streamRequest = (id: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'SendStreamingMessage',
  params: { message: wireMessageV1('test-resubscribe-message-id') },
});

/** The messages of a stream, read to its end; `opened` runs once its first event has arrived. */
async function readStream(endpoint: string, id: string, opened: () => void): Promise<any[]> {
  const received: any[] = [];
  for await (const event of sseCall(endpoint, streamRequest(id))) {
    received.push(event.message);
    if (received.length === 1) opened();
  }
  return received;
}

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
    let closed: Promise<void> | undefined;
    // The stream is under way (its first event arrived) when the application closes.
    const received = await readStream(server.endpoint, 's1', () => (closed = server.close()));
    await closed;
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
      const received = await readStream(`${server.baseUrl}/a2a`, 's2', () => server.process.kill('SIGTERM'));
      expect(received[0].result.task).toBeDefined();
      expect(received.at(-1).error.data[0].reason).toBe('SERVER_SHUTTING_DOWN');
      expect(await server.exited).toBe(0);
      expect(server.log()).toMatch(/"msg":"shutting down"/);
      expect(existsSync(join(db.env.CLEVERAGENTS_DATA_DIR, 'database.lock'))).toBe(false);
    } finally {
      if (server.process.exitCode === null) server.process.kill('SIGKILL');
    }
  });
});
