/**
 * The time the server's budgets and waits run by. Services take a Clock instead of reading Date.now()
 * and arming setTimeout themselves, so a test can hold time still and move it on at will (a wall-time
 * budget running out in an instant, with the exact figure it shows) instead of sleeping and asserting
 * bounds that a loaded machine overruns.
 */

/** A timer a Clock armed; cancel() disarms it (no effect once it fired). */
export interface ClockTimer {
  cancel(): void;
}

export abstract class Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  abstract now(): number;

  /**
   * Calls `fire` once `ms` milliseconds have passed. The timer never keeps the process alive: what it
   * guards is either settled on shutdown or recovered from the database after a restart.
   */
  abstract after(ms: number, fire: () => void): ClockTimer;

  /** The current time as a Date. */
  date(): Date {
    return new Date(this.now());
  }

  /** Waits for `done` (resolved or rejected) at most `ms`: true when it settled in time, false when time ran out. */
  async within(ms: number, done: Promise<unknown>): Promise<boolean> {
    let timer: ClockTimer | undefined;
    const outOfTime = new Promise<false>((resolve) => (timer = this.after(ms, () => resolve(false))));
    try {
      return await Promise.race([done.then(inTime, inTime), outOfTime]);
    } finally {
      timer?.cancel();
    }
  }
}

const inTime = (): true => true;

/** The machine's clock. */
export class SystemClock extends Clock {
  now(): number {
    return Date.now();
  }

  after(ms: number, fire: () => void): ClockTimer {
    const due = Date.now() + Math.max(0, ms);
    let timer: NodeJS.Timeout;
    // A timer holds at most MAX_TIMER_MS (a longer one fires at once): a longer wait is armed in legs.
    const arm = (left: number): void => {
      timer =
        left <= MAX_TIMER_MS
          ? setTimeout(fire, Math.max(0, left))
          : setTimeout(() => arm(due - Date.now()), MAX_TIMER_MS);
      timer.unref();
    };
    arm(Math.max(0, ms));
    return { cancel: () => clearTimeout(timer) };
  }
}

/** The longest delay setTimeout holds (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;
