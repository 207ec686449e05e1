import { describe, expect, it } from '@jest/globals';
import { causeOfType, causes } from './causes.js';

class Refusal extends Error {}

describe('causes', () => {
  it('walks the cause chain outermost first, values that are not Errors included', () => {
    const socket = { code: 'ECONNREFUSED' };
    const inner = new Error('connect failed', { cause: socket });
    const outer = new TypeError('fetch failed', { cause: inner });
    expect([...causes(outer)]).toEqual([outer, inner, socket]);
  });

  it('stops at the depth and on a cycle through it', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect([...causes(a, 3)]).toEqual([a, b, a]);
    expect([...causes(a)]).toHaveLength(5);
  });

  it('nothing for undefined or null', () => {
    expect([...causes(undefined)]).toEqual([]);
    expect([...causes(null)]).toEqual([]);
  });

  it('causeOfType finds the first cause of the class', () => {
    const refusal = new Refusal('refused');
    expect(causeOfType(new Error('outer', { cause: new Error('mid', { cause: refusal }) }), Refusal)).toBe(refusal);
    expect(causeOfType(new Error('outer'), Refusal)).toBeUndefined();
  });
});
