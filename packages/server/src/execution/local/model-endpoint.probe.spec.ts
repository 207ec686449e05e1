import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManualClock } from '../../../../../test/support/manual-clock.js';
import { OutboundUrlRefusal } from '../../common/outbound/outbound-url.policy.js';
import { ModelEndpointProbe } from './model-endpoint.probe.js';

/** A model server on loopback whose `GET /v1/models` answers `status`, or never when `status` is 0. */
async function modelServer(): Promise<{
  server: Server;
  baseUrl: string;
  hits: () => number;
  seen: string[];
  answer: (status: number) => void;
}> {
  let status = 200;
  let hits = 0;
  const seen: string[] = [];
  const server = createServer((req, res) => {
    hits += 1;
    seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
    if (status === 0) return; // hangs
    res.writeHead(status, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    hits: () => hits,
    seen,
    answer: (next) => {
      status = next;
    },
  };
}

describe('ModelEndpointProbe: whether the model endpoint answers, for /readyz', () => {
  let endpoint: Awaited<ReturnType<typeof modelServer>>;

  beforeAll(async () => {
    endpoint = await modelServer();
  });
  afterAll(async () => {
    endpoint.server.closeAllConnections();
    await new Promise((resolve) => endpoint.server.close(resolve));
  });

  const probeOf = (clock: ManualClock, options = { cacheMs: 30_000, timeoutMs: 300 }, fetcher: typeof fetch = fetch) =>
    new ModelEndpointProbe(
      { baseUrl: `${endpoint.baseUrl}/`, model: 'llama', apiKey: 'sk-probe' },
      fetcher,
      clock,
      options,
    );

  it('asks GET {baseUrl}/models once per period, with the key; calls meanwhile share the answer', async () => {
    endpoint.answer(200);
    const clock = new ManualClock();
    const probe = probeOf(clock);
    const before = endpoint.hits();
    const answers = await Promise.all([probe.check(), probe.check(), probe.check()]);
    expect(answers).toEqual(
      Array(3).fill({
        ready: true,
        detail: expect.stringMatching(
          /^model llama at 127\.0\.0\.1:\d+: reachable \(GET \/v1\/models answered HTTP 200\)$/,
        ),
      }),
    );
    expect(endpoint.hits() - before).toBe(1);
    expect(endpoint.seen.at(-1)).toBe('GET /v1/models Bearer sk-probe');
    clock.advance(29_999);
    await probe.check();
    expect(endpoint.hits() - before).toBe(1);
    clock.advance(1);
    await probe.check();
    expect(endpoint.hits() - before).toBe(2);
  });

  it.each([
    [401, /answered HTTP 401: check CLEVERAGENTS_MODEL_API_KEY/],
    [403, /answered HTTP 403: check CLEVERAGENTS_MODEL_API_KEY/],
    [503, /answered HTTP 503: the model server is failing/],
  ])('HTTP %p is not ready, saying why', async (status, why) => {
    endpoint.answer(status);
    expect(await probeOf(new ManualClock()).check()).toEqual({ ready: false, detail: expect.stringMatching(why) });
  });

  it('a 404 (a server without a model list) is still a server that answers', async () => {
    endpoint.answer(404);
    expect(await probeOf(new ManualClock()).check()).toMatchObject({ ready: true });
  });

  it('no answer within the timeout, a refused connection and a refused host are each named', async () => {
    endpoint.answer(0);
    expect(await probeOf(new ManualClock()).check()).toEqual({
      ready: false,
      detail: expect.stringMatching(/: unreachable \(no answer within 300 ms\)$/),
    });
    endpoint.answer(200);

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const refused = new ModelEndpointProbe(
      { baseUrl: `http://127.0.0.1:${port}/v1`, model: 'llama', apiKey: undefined },
      fetch,
      new ManualClock(),
    );
    expect(await refused.check()).toEqual({
      ready: false,
      detail: `model llama at 127.0.0.1:${port}: unreachable (ECONNREFUSED: check CLEVERAGENTS_MODEL_BASE_URL)`,
    });

    const guarded = probeOf(new ManualClock(), undefined, () => {
      throw new TypeError('fetch failed', { cause: new OutboundUrlRefusal('url host 127.0.0.1 is not admitted') });
    });
    expect((await guarded.check()).detail).toMatch(/unreachable \(refused: url host 127\.0\.0\.1 is not admitted\)$/);
  });
});
