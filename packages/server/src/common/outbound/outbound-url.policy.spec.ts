import { describe, expect, it } from '@jest/globals';
import { OutboundUrlPolicy, OutboundUrlRefusal, type ResolveHost } from './outbound-url.policy.js';

/** A resolver that knows a few names and fails the test if asked for any other. */
const dns: ResolveHost = (host) => {
  const known: Record<string, string> = { 'llm.internal': '10.1.2.3', 'api.example.com': '93.184.216.34' };
  if (!known[host]) return Promise.reject(new Error(`unexpected lookup of ${host}`));
  return Promise.resolve([{ address: known[host], family: 4 }]);
};

async function refusal(policy: OutboundUrlPolicy, url: string): Promise<OutboundUrlRefusal> {
  try {
    await policy.vet(url);
  } catch (error) {
    expect(error).toBeInstanceOf(OutboundUrlRefusal);
    return error as OutboundUrlRefusal;
  }
  throw new Error(`expected ${url} to be refused`);
}

async function refused(policy: OutboundUrlPolicy, url: string): Promise<string> {
  return (await refusal(policy, url)).message;
}

describe('OutboundUrlPolicy', () => {
  it('admits a listed host:port on that port only (the scheme port when the URL names none)', async () => {
    const policy = new OutboundUrlPolicy(['127.0.0.1:8000', 'llm.internal:443'], { publicHosts: false, resolve: dns });
    await expect(policy.vet('http://127.0.0.1:8000/v1')).resolves.toMatchObject({ host: '127.0.0.1' });
    await expect(policy.vet('https://llm.internal/v1')).resolves.toMatchObject({
      addresses: [{ address: '10.1.2.3', family: 4 }],
    });
    expect(await refused(policy, 'http://127.0.0.1:8001/v1')).toMatch(/is not an admitted host \(loopback\)/);
    expect(await refused(policy, 'http://llm.internal/v1')).toMatch(/does not resolve to an admitted address$/);
  });

  it('a refused name is answered without the address it resolves to (the detail, for the log, has it)', async () => {
    const anyPublic = new OutboundUrlPolicy(['*'], { publicHosts: false, resolve: dns });
    const internal = await refusal(anyPublic, 'http://llm.internal/v1');
    expect(internal.message).toBe('url host "llm.internal" does not resolve to an admitted address');
    expect(internal.detail).toBe(
      'url host "llm.internal" resolves to 10.1.2.3, which is not a public address (private)',
    );
    // A name that does not resolve reads the same: no oracle for which internal names exist.
    const unknown = await refusal(
      new OutboundUrlPolicy(['*'], { publicHosts: false, resolve: () => Promise.reject(new Error('NXDOMAIN')) }),
      'http://nowhere.internal/v1',
    );
    expect(unknown.message).toBe('url host "nowhere.internal" does not resolve to an admitted address');
    expect(unknown.detail).toBe('url host "nowhere.internal" could not be resolved');
  });

  it('without public hosts, a public address is refused too; `*` admits public ones only', async () => {
    const listed = new OutboundUrlPolicy(['llm.internal'], { publicHosts: false, resolve: dns });
    expect(await refused(listed, 'https://api.example.com/v1')).toMatch(/is not an admitted host$/);
    const anyPublic = new OutboundUrlPolicy(['*'], { publicHosts: false, resolve: dns });
    await expect(anyPublic.vet('https://api.example.com/v1')).resolves.toBeDefined();
    expect((await refusal(anyPublic, 'http://llm.internal/v1')).detail).toMatch(/not a public address \(private\)/);
    expect(await refused(anyPublic, 'http://[::ffff:169.254.169.254]/')).toMatch(/link-local/);
  });

  it('pin: false does not resolve a host admitted by name; pin: true gives its addresses', async () => {
    const policy = new OutboundUrlPolicy(['vllm:8000'], {
      publicHosts: false,
      resolve: () => Promise.reject(new Error('no DNS here')),
    });
    await expect(policy.vet('http://vllm:8000/v1', { pin: false })).resolves.toMatchObject({ addresses: [] });
    expect(await refused(policy, 'http://vllm:8000/v1')).toMatch(/could not be resolved/);
  });

  it('a bracketed IPv6 entry with a port admits that address and port', async () => {
    const policy = new OutboundUrlPolicy(['[::1]:11434'], { publicHosts: false, resolve: dns });
    await expect(policy.vet('http://[::1]:11434/v1')).resolves.toMatchObject({ host: '::1' });
    expect(await refused(policy, 'http://[::1]:11435/v1')).toMatch(/not an admitted host/);
  });
});
