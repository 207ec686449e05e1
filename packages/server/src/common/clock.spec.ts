import { describe, expect, it } from '@jest/globals';
import { ManualClock } from '../../../../test/support/manual-clock.js';

describe('Clock.within', () => {
  it('true once the promise settles in time (resolved or rejected), and its timer is disarmed', async () => {
    const clock = new ManualClock(0);
    expect(await clock.within(1000, Promise.resolve('done'))).toBe(true);
    expect(await clock.within(1000, Promise.reject(new Error('failed')))).toBe(true);
    expect(clock.dueTimes()).toEqual([]);
  });

  it('false once the time runs out first', async () => {
    const clock = new ManualClock(0);
    const waiting = clock.within(1000, new Promise(() => undefined));
    expect(clock.dueTimes()).toEqual([1000]);
    clock.advance(999);
    clock.advance(1);
    expect(await waiting).toBe(false);
    expect(clock.dueTimes()).toEqual([]);
  });
});
