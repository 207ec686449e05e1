import { describe, expect, it } from '@jest/globals';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { JsonRpcTransportHandler } from '@a2a-js/sdk/server';
import { INPUT_LIMITS } from '../common/input-limits.js';
import { AppConfig } from '../config/app.config.js';
import { WebhookUrlGuard } from './webhook-url.guard.js';

const guardWith = (allowed = ''): WebhookUrlGuard =>
  new WebhookUrlGuard(AppConfig.fromEnv({ CLEVERAGENTS_PUSH_ALLOWED_HOSTS: allowed }));

async function refusal(guard: WebhookUrlGuard, url: string): Promise<Error> {
  try {
    await guard.assertAllowed(url);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`expected ${url} to be refused`);
}

describe('WebhookUrlGuard', () => {
  const guard = guardWith();

  describe('refuses literal addresses of every non-public class', () => {
    it.each([
      ['loopback', 'http://127.0.0.1/hook'],
      ['loopback (other /8 address)', 'http://127.10.0.5:8080/hook'],
      ['loopback (integer form)', 'http://2130706433/hook'],
      ['loopback (hex form)', 'http://0x7f.1/hook'],
      ['private 10/8', 'https://10.1.2.3/hook'],
      ['private 172.16/12 (low end)', 'https://172.16.0.1/hook'],
      ['private 172.16/12 (high end)', 'https://172.31.255.254/hook'],
      ['private 192.168/16', 'http://192.168.1.10/hook'],
      ['CGNAT 100.64/10', 'http://100.64.0.1/hook'],
      ['link-local', 'http://169.254.10.20/hook'],
      ['cloud metadata address', 'http://169.254.169.254/latest/meta-data/'],
      ['unspecified', 'http://0.0.0.0:8080/'],
      ['multicast', 'http://224.0.0.1/'],
      ['broadcast', 'http://255.255.255.255/'],
      ['IPv6 loopback', 'http://[::1]:8080/hook'],
      ['IPv6 unspecified', 'http://[::]/hook'],
      ['IPv6 unique local (fc00::/7)', 'http://[fd12:3456::1]/hook'],
      ['IPv6 link-local', 'http://[fe80::1]/hook'],
      ['IPv6 multicast', 'http://[ff02::1]/hook'],
      ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/hook'],
      ['IPv4-mapped private', 'http://[::ffff:10.0.0.1]/hook'],
      ['IPv4-mapped metadata', 'http://[::ffff:169.254.169.254]/hook'],
      ['NAT64-embedded metadata', 'http://[64:ff9b::a9fe:a9fe]/hook'],
      ['6to4-embedded loopback', 'http://[2002:7f00:1::1]/hook'],
    ])('%s: %s', async (_class, url) => {
      const error = await refusal(guard, url);
      expect(error).toBeInstanceOf(RequestMalformedError);
      expect(JsonRpcTransportHandler.mapToJSONRPCError(error).code).toBe(-32602);
      expect(error.message).toContain('url');
      expect(error.message).toContain('CLEVERAGENTS_PUSH_ALLOWED_HOSTS');
    });
  });

  it('accepts public addresses, including neighbours of the refused ranges', async () => {
    for (const url of [
      'https://93.184.216.34/hook',
      'http://172.32.0.1/hook',
      'http://100.128.0.1/hook',
      'http://11.0.0.1/hook',
      'https://[2606:2800:220:1:248:1893:25c8:1946]/hook',
    ]) {
      await expect(guard.assertAllowed(url)).resolves.toBeUndefined();
    }
  });

  it('refuses a host name that resolves to loopback (localhost), without saying where it points', async () => {
    const error = await refusal(guard, 'http://localhost:8080/hook');
    expect(error).toBeInstanceOf(RequestMalformedError);
    expect(error.message).toContain('url host "localhost" does not resolve to an admitted address');
    expect(error.message).not.toMatch(/127\.0\.0\.1|::1|\(loopback\)/);
  });

  it.each([
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://METADATA.google.internal./',
    'http://metadata/',
  ])('refuses the metadata host name %s without needing to resolve it', async (url) => {
    const error = await refusal(guard, url);
    expect(error.message).toContain('metadata');
  });

  it.each([
    'ftp://example.com/hook',
    'file:///etc/passwd',
    'gopher://example.com/',
    'javascript:alert(1)',
    'not a url',
    '',
  ])('refuses %j: only absolute http and https URLs', async (url) => {
    const error = await refusal(guard, url);
    expect(error).toBeInstanceOf(RequestMalformedError);
    expect(error.message).toContain('url must');
  });

  it('refuses a URL longer than the documented limit before anything else, without repeating it', async () => {
    const allowed = guardWith('127.0.0.1');
    const long = `http://127.0.0.1/hook?pad=${'p'.repeat(INPUT_LIMITS.webhookUrl)}`;
    const error = await refusal(allowed, long);
    expect(error).toBeInstanceOf(RequestMalformedError);
    expect(error.message).toContain(`${INPUT_LIMITS.webhookUrl}`);
    expect(error.message.length).toBeLessThan(400);
    await expect(allowed.assertAllowed(long.slice(0, INPUT_LIMITS.webhookUrl))).resolves.toBeUndefined();
  });

  it('refuses a host name that does not resolve, as one that resolves to a refused address', async () => {
    const error = await refusal(guard, 'http://no-such-host.invalid/hook');
    expect(error.message).toContain('url host "no-such-host.invalid" does not resolve to an admitted address');
  });

  describe('operator allow-list (CLEVERAGENTS_PUSH_ALLOWED_HOSTS)', () => {
    it('admits a host name, and vets the addresses it resolves to for delivery', async () => {
      const vetted = await guardWith('LocalHost').vet('http://localhost:9999/hook');
      expect(vetted.host).toBe('localhost');
      expect(vetted.addresses.map((a) => a.address)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^(127\.0\.0\.1|::1)$/)]),
      );
    });

    it('admits an IP address, literally or behind a name or an IPv4-mapped form', async () => {
      const allowLoopback = guardWith('127.0.0.1, ::1');
      await expect(allowLoopback.assertAllowed('http://127.0.0.1:9999/hook')).resolves.toBeUndefined();
      await expect(allowLoopback.assertAllowed('http://localhost:9999/hook')).resolves.toBeUndefined();
      await expect(allowLoopback.assertAllowed('http://[::ffff:127.0.0.1]/hook')).resolves.toBeUndefined();
      await expect(allowLoopback.assertAllowed('http://127.0.0.2/hook')).rejects.toBeInstanceOf(RequestMalformedError);
    });

    it('admits the addresses of a CIDR block and nothing else', async () => {
      const allowTen = guardWith('10.0.0.0/8,fd00::/8');
      await expect(allowTen.assertAllowed('http://10.20.30.40/hook')).resolves.toBeUndefined();
      await expect(allowTen.assertAllowed('http://[fd00::1]/hook')).resolves.toBeUndefined();
      await expect(allowTen.assertAllowed('http://192.168.0.1/hook')).rejects.toBeInstanceOf(RequestMalformedError);
      await expect(allowTen.assertAllowed('http://[fc00::1]/hook')).rejects.toBeInstanceOf(RequestMalformedError);
    });

    it('a name on the list does not admit other names that resolve to the same address', async () => {
      const error = await refusal(guardWith('internal.example'), 'http://localhost/hook');
      expect(error).toBeInstanceOf(RequestMalformedError);
    });

    it('a metadata host name is admitted only when listed by name', async () => {
      await expect(
        guardWith('169.254.0.0/16').assertAllowed('http://metadata.google.internal/'),
      ).rejects.toBeInstanceOf(RequestMalformedError);
    });
  });
});
