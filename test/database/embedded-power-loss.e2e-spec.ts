/**
 * A power loss under the embedded database: the real server on an ext4 loop disk answers tasks, then
 * the disk is cut off where it stands (a copy of what its device received, nothing of what the kernel
 * still cached) and a new server opens that disk. Every task a client was answered about is there.
 */
import { afterEach, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rawCall } from '../support/server.js';
import { startProcess, stopAll, type ServerProcess } from '../support/server-process.js';
import { LoopDisk, loopDiskSupport } from '../support/disk-faults.js';
import { describeNeeding } from '../support/requirements.js';

const V1 = { 'a2a-version': '1.0' };
const TASKS = 60;
const AT_ONCE = 6;

const serverOn = (dataDir: string) =>
  startProcess({
    NODE_ENV: 'test',
    CLEVERAGENTS_AUTH_SCHEMES: 'none',
    CLEVERAGENTS_ACTOR_BACKEND: 'conformance',
    CLEVERAGENTS_DATA_DIR: dataDir,
  });

async function sendMessage(server: ServerProcess, n: number): Promise<string> {
  const { json } = await rawCall(
    `${server.baseUrl}/a2a`,
    {
      jsonrpc: '2.0',
      id: n,
      method: 'SendMessage',
      params: { message: { messageId: `power-loss-${n}`, role: 'ROLE_USER', parts: [{ text: `task ${n}` }] } },
    },
    V1,
  );
  const id = json?.result?.task?.id as string | undefined;
  if (!id) throw new Error(`SendMessage ${n} was not answered with a task: ${JSON.stringify(json)}`);
  return id;
}

describeNeeding(loopDiskSupport(), 'the embedded database through a power loss (ext4 loop disk)', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  // Two embedded servers start and 120 calls run: past Jest's 60 s default on a busy machine (seen at load 16–19).
  it('keeps every task a client was answered about, and the data directory opens', async () => {
    const work = mkdtempSync(join(tmpdir(), 'cleveragents-power-loss-'));
    cleanup.push(() => rmSync(work, { recursive: true, force: true }));
    // The journal commits once a minute: within the test only what was synced reaches the device.
    const disk = LoopDisk.create(work, 'disk', 256, 60);
    cleanup.push(() => disk.remove());
    const servers: ServerProcess[] = [];
    cleanup.push(() => stopAll(servers));

    const live = await serverOn(join(disk.mountPoint, 'data'));
    servers.push(live);
    const answered: string[] = [];
    for (let n = 0; n < TASKS; n += AT_ONCE) {
      const ids = await Promise.all(Array.from({ length: AT_ONCE }, (_, i) => sendMessage(live, n + i)));
      answered.push(...ids);
    }

    // The power goes: the device keeps what it received; the server never runs again on this disk.
    const image = disk.powerLossImage(join(work, 'after-power-loss.img'));
    live.process.kill('SIGKILL');
    await live.exited;
    disk.remove();

    const recovered = LoopDisk.mount(image, join(work, 'recovered'));
    cleanup.push(() => recovered.remove());
    const restarted = await serverOn(join(recovered.mountPoint, 'data'));
    servers.push(restarted);
    const missing: string[] = [];
    for (const id of answered) {
      const { json } = await rawCall(
        `${restarted.baseUrl}/a2a`,
        { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } },
        V1,
      );
      if (json?.result?.id !== id) missing.push(id);
    }
    // Before the fix, with PGlite's fsync off, all 60 were missing and the data directory would not
    // always open (an empty postmaster.pid).
    expect({ answered: answered.length, missing }).toEqual({ answered: TASKS, missing: [] });
  }, 300_000);
});
