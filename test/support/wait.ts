/**
 * The default bound of a wait for a condition. Bounds and windows run on the monotonic clock: a wall time
 * held still (holdWallTime) does not stop them.
 */
const WAIT_MS = 20_000;

/**
 * Polls `condition` every `everyMs` (10) until it holds; fails naming `what` after `timeoutMs`. For effects
 * that arrive asynchronously by design (a notification from the database), never to time anything. The
 * bound is generous by default (a loaded machine), since the wait ends as soon as the condition holds.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = WAIT_MS,
  everyMs = 10,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(everyMs);
  }
}

/**
 * Tries `attempt` every 10 ms (after each try has settled) until it gives a value other than undefined,
 * and resolves with that value; fails naming `what` after `timeoutMs`. For a call that succeeds once
 * the server has caught up (a slot freed, a task stored), as a client retrying it would.
 */
export async function eventually<T>(
  attempt: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = WAIT_MS,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(10);
  }
}

/**
 * For a test that shows something does NOT happen: checks every 10 ms, for `windowMs`, that `condition`
 * still holds, and fails naming `what` as soon as it does not. The window stands for "it would have
 * happened by now": the caller says why its length suffices, and shows beforehand that the same
 * thing does happen where it should, so that the check cannot pass for want of a channel.
 */
export async function holdsThroughout(
  condition: () => boolean | Promise<boolean>,
  what: string,
  windowMs: number,
): Promise<void> {
  const end = performance.now() + windowMs;
  for (;;) {
    if (!(await condition())) throw new Error(`${what} did not hold throughout ${windowMs} ms`);
    if (performance.now() >= end) return;
    await pause(Math.min(10, end - performance.now()));
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
