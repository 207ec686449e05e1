import { describe, expect, it } from '@jest/globals';
import { decodeTime, isValid } from 'ulid';
import { monotonicFactory, pooledRandom, ulid } from './ulid.js';

describe('pooled ULIDs', () => {
  it('are valid ULIDs of the current time, all distinct across several refills of the pool', () => {
    const before = Date.now();
    const ids = Array.from({ length: 2000 }, () => ulid());
    expect(ids.every((id) => isValid(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(decodeTime(ids[0])).toBeGreaterThanOrEqual(before);
    expect(decodeTime(ids.at(-1)!)).toBeLessThanOrEqual(Date.now());
  });

  it('use every character of the alphabet in their random part', () => {
    const seen = new Set(Array.from({ length: 500 }, () => ulid().slice(10)).join(''));
    expect(seen.size).toBe(32);
  });

  it('from a monotonic factory keep increasing', () => {
    const next = monotonicFactory();
    const ids = Array.from({ length: 1000 }, () => next());
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('draw fractions in [0, 1)', () => {
    const values = Array.from({ length: 10_000 }, () => pooledRandom());
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(1);
    expect(new Set(values).size).toBe(256);
  });
});
