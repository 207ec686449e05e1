/**
 * The events of `source`, each given out only once `flush()` has resolved after it was read: the commit of
 * every save made for it (TypeOrmTaskStore.writeBehind). `source` is read ahead meanwhile, so that the
 * saves of events that come while one commits share the next commit, and events committed together are
 * given out together. An error of `source` comes after the events read before it; an error of `flush()`
 * ends the stream without the events it did not commit. Returning early stops `source` at its next event.
 */
export async function* afterCommit<T>(
  source: AsyncIterable<T>,
  flush: () => Promise<void>,
): AsyncGenerator<T, void, undefined> {
  const iterator = source[Symbol.asyncIterator]();
  const read: T[] = [];
  // Written by the reading loop below, read by the loop that gives events out.
  const state: { ended: boolean; failure?: { error: unknown } } = { ended: false };
  let wake: (() => void) | undefined;
  const reading = (async () => {
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        read.push(next.value);
        wake?.();
      }
    } catch (error) {
      state.failure = { error };
    } finally {
      state.ended = true;
      wake?.();
    }
  })();
  try {
    for (;;) {
      if (read.length === 0) {
        if (state.ended) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      const batch = read.splice(0);
      await flush();
      for (const event of batch) yield event;
    }
    await reading;
    if (state.failure) throw state.failure.error;
  } finally {
    // Queued behind the read under way: the source stops at its next event, as it would at a yield.
    if (!state.ended) void iterator.return?.(undefined);
  }
}
