import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { LoopFileSystem } from '../support/loop-filesystem.js';
import { describeNeeding, loopFileSystem } from '../support/requirements.js';
import { rawCall } from '../support/server.js';
import { startProcess, stopAll, type ServerProcess } from '../support/server-process.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The embedded database on a disk that runs full (a loop-mounted ext4 file system the test fills): writes
 * answer the retryable -32010 STORAGE_UNAVAILABLE, never -32603; /readyz says 503 with the reason while
 * /healthz stays 200; reads go on; once space is freed the server writes again and has lost nothing.
 */

describeNeeding(loopFileSystem(), 'the embedded database on a full disk (process)', () => {
  let disk: LoopFileSystem;
  let server: ServerProcess;

  beforeAll(async () => {
    disk = await LoopFileSystem.create(128);
    server = await startProcess({
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      CLEVERAGENTS_DATA_DIR: join(disk.path, 'data'),
      CLEVERAGENTS_AUTH_SCHEMES: 'none',
      CLEVERAGENTS_ACTOR_BACKEND: 'conformance',
    });
  }, 90_000);

  afterAll(async () => {
    const running = ifAssigned(server);
    await stopAll(running ? [running] : []);
    await ifAssigned(disk)?.destroy();
  });

  const call = (method: string, params: object) =>
    rawCall(`${server.baseUrl}/a2a`, { jsonrpc: '2.0', id: 1, method, params }, { 'a2a-version': '1.0' });
  // Text that does not compress: each message takes its size on disk.
  const send = (messageId: string, kilobytes = 1) =>
    call('SendMessage', {
      message: { messageId, role: 'ROLE_USER', parts: [{ text: randomBytes(kilobytes * 512).toString('hex') }] },
    });
  const readiness = async () => {
    const res = await fetch(`${server.baseUrl}/readyz`);
    return { status: res.status, body: (await res.json()) as { checks: { database: Record<string, unknown> } } };
  };

  it('answers STORAGE_UNAVAILABLE while the disk is full, and writes again once space is freed', async () => {
    const stored = (await send('before-the-disk-filled')).json.result.task;
    expect((await readiness()).status).toBe(200);

    await disk.fill();
    await until(async () => (await readiness()).status === 503, '/readyz to say the disk is full', 30_000);
    expect((await readiness()).body.checks.database).toMatchObject({ ok: false, reason: 'STORAGE_UNAVAILABLE' });
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);

    // Pages the database already holds take a few writes: then one finds no block to extend its table.
    let refused: Awaited<ReturnType<typeof send>> | undefined;
    for (let i = 0; i < 200 && refused === undefined; i++) {
      const answer = await send(`on-a-full-disk-${i}`, 200);
      if (answer.json.error) refused = answer;
    }
    expect(refused).toBeDefined();
    expect({ status: refused!.status, retryAfter: refused!.headers.get('retry-after') }).toEqual({
      status: 503,
      retryAfter: '5',
    });
    expect(refused!.json.error).toMatchObject({
      code: -32010,
      data: [{ reason: 'STORAGE_UNAVAILABLE', metadata: { retryable: 'true', retryAfterSeconds: '5' } }],
    });
    // Reads go on.
    expect((await call('GetTask', { id: stored.id })).json.result).toEqual(stored);

    await disk.free();
    await until(async () => (await readiness()).status === 200, '/readyz to be ready once space is freed', 60_000);
    expect((await send('after-space-was-freed')).json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await call('GetTask', { id: stored.id })).json.result).toEqual(stored);
  }, 180_000);
});
