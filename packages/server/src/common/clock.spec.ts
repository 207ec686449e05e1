import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { ManualClock } from '../../../../test/support/manual-clock.js';
import { SystemClock } from './clock.js';

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

describe('SystemClock.after', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('a wait longer than a timer can hold (about 24.8 days) fires when due, not at once', () => {
    jest.useFakeTimers({ now: 0 });
    const clock = new SystemClock();
    const fired: number[] = [];
    const thirtyDays = 30 * 24 * 3600 * 1000;
    clock.after(thirtyDays, () => fired.push(Date.now()));
    jest.advanceTimersByTime(1000);
    expect(fired).toEqual([]);
    jest.advanceTimersByTime(thirtyDays - 1001);
    expect(fired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(fired).toEqual([thirtyDays]);
  });

  it('a long wait canceled part way never fires', () => {
    jest.useFakeTimers({ now: 0 });
    const clock = new SystemClock();
    let fired = false;
    const timer = clock.after(30 * 24 * 3600 * 1000, () => (fired = true));
    jest.advanceTimersByTime(25 * 24 * 3600 * 1000);
    timer.cancel();
    jest.advanceTimersByTime(10 * 24 * 3600 * 1000);
    expect(fired).toBe(false);
  });
});
