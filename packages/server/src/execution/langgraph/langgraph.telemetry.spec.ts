import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RetryReason } from '../../metrics/outbound-metrics.js';
import { countingRetries, tracingRequests } from './langgraph.telemetry.js';

describe('tracingRequests', () => {
  const url = new URL('http://127.0.0.1:1/threads/t/runs/r/stream');

  it('counts the SDK re-opening a stream (a GET naming the last event read), not a join from the start', async () => {
    const reasons: RetryReason[] = [];
    const hook = tracingRequests((reason) => reasons.push(reason));
    await hook(url, { method: 'GET', headers: { 'last-event-id': '-1' } });
    await hook(url, { method: 'GET', headers: {} });
    await hook(url, { method: 'POST', headers: { 'last-event-id': '7' } });
    expect(reasons).toEqual([]);
    await hook(url, { method: 'GET', headers: { 'last-event-id': '7' } });
    await hook(url, { method: 'GET', headers: new Headers({ 'Last-Event-ID': '8' }) });
    expect(reasons).toEqual(['stream_ended', 'stream_ended']);
  });

  it('leaves the request as it is while tracing is off (no traceparent added)', async () => {
    const init = { method: 'GET', headers: { accept: 'application/json' } };
    expect(await tracingRequests(undefined)(url, init)).toBe(init);
  });
});

describe('countingRetries (against a loopback server)', () => {
  let server: http.Server;
  let base: string;
  let answered = 0;

  beforeAll(async () => {
    // 503 to every other request, starting with the first.
    server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(answered++ % 2 === 0 ? 503 : 200).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('counts an init sent again after it failed, for the reason it failed; a new init is no retry', async () => {
    const reasons: RetryReason[] = [];
    const fetchOf = countingRetries((reason) => reasons.push(reason));
    const init: RequestInit = { method: 'GET' };
    expect((await fetchOf(base, init)).status).toBe(503);
    expect((await fetchOf(base, init)).status).toBe(200);
    expect(reasons).toEqual(['http_5xx']);
    expect((await fetchOf(base, { method: 'GET' })).status).toBe(503);
    expect((await fetchOf(base, { method: 'GET' })).status).toBe(200);
    expect(reasons).toEqual(['http_5xx']);
  });
});
