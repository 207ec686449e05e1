/**
 * Polls `condition` every 10 ms until it holds; fails naming `what` after `timeoutMs`. For effects
 * that arrive asynchronously by design (a notification from the database), never to time anything.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 5000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
