import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { AppConfig } from '../config/app.config.js';
import { GuardedWebhookPoster } from './guarded-webhook.poster.js';
import { WebhookUrlGuard } from './webhook-url.guard.js';

/** A real receiver on loopback answering the n-th request (from 0) with `status(n)`. */
async function receiver(status: (n: number) => number) {
  const hosts: string[] = [];
  const server = http.createServer((req, res) => {
    hosts.push(req.headers.host ?? '');
    req.resume();
    req.on('end', () => res.writeHead(status(hosts.length - 1)).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    hosts,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const silent = new Logger('spec');
silent.warn = () => undefined;
silent.debug = () => undefined;

const configWith = (env: Record<string, string>) =>
  AppConfig.fromEnv({ CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1', CLEVERAGENTS_PUSH_TIMEOUT_MS: '10000', ...env });

describe('GuardedWebhookPoster', () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(stops.splice(0).map((stop) => stop()));
  });

  const post = (url: string) => ({ url, headers: {}, body: '{}', what: 'spec webhook', where: {} });

  it('says how a delivery ended: delivered after a retry, given up on with the last status, or refused unsent', async () => {
    const flaky = await receiver((n) => (n === 0 ? 503 : 201));
    const broken = await receiver(() => 500);
    stops.push(flaky.stop, broken.stop);
    const config = configWith({ CLEVERAGENTS_PUSH_RETRIES: '1' });
    const poster = new GuardedWebhookPoster(new WebhookUrlGuard(config), config, { retryBaseDelayMs: 10 }, silent);
    expect(await poster.post(post(`http://127.0.0.1:${flaky.port}/x`))).toEqual({
      delivered: true,
      status: 201,
      attempts: 2,
    });
    expect(await poster.post(post(`http://127.0.0.1:${broken.port}/x`))).toEqual({
      delivered: false,
      status: 500,
      attempts: 2,
      reason: 'HTTP 500',
    });
    const refused = await poster.post(post('http://10.1.2.3/x'));
    expect(refused).toMatchObject({ delivered: false, status: null, attempts: 0 });
    expect(refused.delivered === false && refused.reason).toMatch(/^webhook URL not admissible: /);
  });

  it('connects to the address its guard vetted, never to a fresh resolution of the name', async () => {
    const hook = await receiver(() => 200);
    stops.push(hook.stop);
    class GuardWithOwnDns extends WebhookUrlGuard {
      readonly resolved: string[] = [];
      protected override resolveHost(host: string) {
        this.resolved.push(host);
        return Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
      }
    }
    const config = configWith({ CLEVERAGENTS_PUSH_RETRIES: '0' });
    const guard = new GuardWithOwnDns(config);
    const poster = new GuardedWebhookPoster(guard, config, {}, silent);
    // Had the HTTP client resolved the name itself (where a rebinding DNS could answer otherwise), it would fail.
    expect(await poster.post(post(`http://hooks.rebind.invalid:${hook.port}/x`))).toMatchObject({ delivered: true });
    expect(guard.resolved).toEqual(['hooks.rebind.invalid']);
    expect(hook.hosts).toEqual([`hooks.rebind.invalid:${hook.port}`]);
  });
});
