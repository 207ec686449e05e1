import { describe, expect, it } from '@jest/globals';
import { RateLimiter } from './rate-limiter.js';

function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 0;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('RateLimiter', () => {
  it('allows a burst, then refuses with the seconds until one call refills', () => {
    const c = clock();
    const limiter = new RateLimiter({ perMinute: 60, burst: 3 }, 10, c.now);
    expect([1, 2, 3].map(() => limiter.take('alice').allowed)).toEqual([true, true, true]);
    expect(limiter.take('alice')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    c.advance(1000);
    expect(limiter.take('alice').allowed).toBe(true);
    expect(limiter.take('alice').allowed).toBe(false);
  });

  it('keeps one bucket per key', () => {
    const c = clock();
    const limiter = new RateLimiter({ perMinute: 1, burst: 1 }, 10, c.now);
    expect(limiter.take('alice').allowed).toBe(true);
    expect(limiter.take('bob').allowed).toBe(true);
    const refused = limiter.take('alice');
    expect(refused.allowed).toBe(false);
    expect(refused).toEqual({ allowed: false, retryAfterSeconds: 60 });
  });

  it('is off at 0 per minute', () => {
    const limiter = new RateLimiter({ perMinute: 0, burst: 1 });
    expect(limiter.enabled).toBe(false);
    for (let i = 0; i < 100; i++) expect(limiter.take('x').allowed).toBe(true);
  });

  it('stays bounded: buckets that refilled go first, then the least recently used', () => {
    const c = clock();
    const limiter = new RateLimiter({ perMinute: 60, burst: 1 }, 3, c.now);
    expect(limiter.take('limited').allowed).toBe(true);
    expect(limiter.take('limited').allowed).toBe(false);
    limiter.take('a');
    limiter.take('b');
    // Full (3 keys, none refilled): 'limited' is the least recently used and goes.
    limiter.take('c');
    const keys = (): string[] => [...(limiter as unknown as { buckets: Map<string, unknown> }).buckets.keys()];
    expect(keys()).toEqual(['a', 'b', 'c']);
    c.advance(2000);
    // Now every bucket has refilled: all of them carry no state and are dropped for the newcomer.
    limiter.take('d');
    expect(keys()).toEqual(['d']);
  });
});
