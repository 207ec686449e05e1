import { jest } from '@jest/globals';
import { Clock, type ClockTimer } from '../../packages/server/src/common/clock.js';

interface Pending {
  due: number;
  seq: number;
  fire: () => void;
}

/**
 * A clock that stands still until the test moves it: advance(ms) moves time on and fires, in order of
 * their due time, the timers that came due. A timer armed by a fired one fires in the same advance
 * when it is due by then.
 */
export class ManualClock extends Clock {
  private current: number;
  private seq = 0;
  private readonly pending = new Set<Pending>();

  constructor(start: number = Date.now()) {
    super();
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  after(ms: number, fire: () => void): ClockTimer {
    const entry: Pending = { due: this.current + Math.max(0, ms), seq: this.seq++, fire };
    this.pending.add(entry);
    return { cancel: () => this.pending.delete(entry) };
  }

  /** The due times of the armed timers, soonest first. */
  dueTimes(): number[] {
    return [...this.pending].map((p) => p.due).sort((a, b) => a - b);
  }

  /** Moves time on by `ms`, firing each timer due by then at its due time. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const next = [...this.pending]
        .filter((p) => p.due <= target)
        .sort((a, b) => a.due - b.due || a.seq - b.seq)
        .at(0);
      if (!next) break;
      this.pending.delete(next);
      this.current = Math.max(this.current, next.due);
      next.fire();
    }
    this.current = target;
  }
}

/** Everything jest's fake timers could replace but Date: timers, ticks and performance keep real time. */
const NOT_DATE = [
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'requestAnimationFrame',
  'cancelAnimationFrame',
  'requestIdleCallback',
  'cancelIdleCallback',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
] as const;

/**
 * Holds the wall time still for the code of this test file (Date.now(), new Date()) until moved, for
 * code that reads the wall time itself instead of taking a Clock, such as jose's remote key set (its
 * refresh cooldown and cache age). Timers keep running in real time. `release` gives the real time back.
 */
export function holdWallTime(): { advance(ms: number): void; release(): void } {
  jest.useFakeTimers({ doNotFake: [...NOT_DATE], now: Date.now() });
  return {
    advance: (ms) => jest.setSystemTime(Date.now() + ms),
    release: () => jest.useRealTimers(),
  };
}
