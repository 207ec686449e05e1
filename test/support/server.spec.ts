import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { freePort, listenOnFreePort } from './server.js';

/*
 * The harness picks a free port before the server boots (the Agent Card names it), so another process
 * may take the port in between: a CI run lost a whole suite to `listen EADDRINUSE`. The harness then
 * picks another port and boots again.
 */
describe('listenOnFreePort', () => {
  let taken: Server;
  let takenPort: number;

  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    takenPort = (taken.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => taken.close(() => resolve()));
  });

  const listenOn = (port: number): Promise<Server> =>
    new Promise((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve(server));
    });

  it('boots again on another port when the one it chose was taken meanwhile', async () => {
    const chosen: number[] = [];
    const ports = [takenPort];
    const server = await listenOnFreePort(listenOn, async () => {
      const port = ports.shift() ?? (await freePort());
      chosen.push(port);
      return port;
    });
    try {
      expect(chosen).toHaveLength(2);
      expect(chosen[0]).toBe(takenPort);
      expect((server.address() as AddressInfo).port).toBe(chosen[1]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('gives up after a few tries, with the last error', async () => {
    let tries = 0;
    await expect(
      listenOnFreePort(listenOn, () => {
        tries += 1;
        return Promise.resolve(takenPort);
      }),
    ).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect(tries).toBe(5);
  });

  it('does not retry other errors', async () => {
    let tries = 0;
    await expect(
      listenOnFreePort(
        () => Promise.reject(new Error('the database is down')),
        async () => {
          tries += 1;
          return freePort();
        },
      ),
    ).rejects.toThrow('the database is down');
    expect(tries).toBe(1);
  });
});
