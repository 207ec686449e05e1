import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { rawCall, startServer, type TestServer } from '../support/server.js';
import { wireMessageV1 } from '../factories/messages.js';

const target = databaseTargets()[0]!;

describe(`SSE streams on ${target.kind}`, () => {
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    db = await target.create();
    server = await startServer(db, { CLEVERAGENTS_SSE_HEARTBEAT_MS: '1000' });
  });

  afterAll(async () => {
    await server?.close();
    await db?.cleanup();
  });

  const open = (signal?: AbortSignal) =>
    fetch(server.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'hb',
        method: 'SendStreamingMessage',
        params: { message: wireMessageV1('test-resubscribe-message-id') },
      }),
      signal,
    });

  it('an idle stream carries keep-alive comments until its last event', async () => {
    const text = await (await open()).text();
    const heartbeats = text.split('\n').filter((line) => line === ': keep-alive').length;
    expect(heartbeats).toBeGreaterThanOrEqual(2); // the task holds for about 4 s, beats every 1 s
    const events = text
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    expect(events.at(-1).result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('a client that disconnects does not cancel the task; the open-streams gauge goes back down', async () => {
    const controller = new AbortController();
    const res = await open(controller.signal);
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const taskId = JSON.parse(
      first
        .split('\n')
        .find((l) => l.startsWith('data: '))!
        .slice(6),
    ).result.task.id;
    const gauge = async () => {
      const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
      return Number(/^cleveragents_open_streams (\d+)/m.exec(metrics)?.[1]);
    };
    expect(await gauge()).toBe(1);
    controller.abort();
    const until = Date.now() + 10000;
    let state = '';
    while (Date.now() < until) {
      state = (await rawCall(server.endpoint, { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: taskId } }))
        .json.result.status.state;
      if (state === 'TASK_STATE_COMPLETED' || state === 'TASK_STATE_CANCELED') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(state).toBe('TASK_STATE_COMPLETED');
    expect(await gauge()).toBe(0);
  });
});
