/** How deep a cause chain is followed: fetch, pg and Nest wrap an error two or three times at most. */
export const CAUSE_DEPTH = 5;

/** `error` and the errors in its `cause` chain, outermost first, at most `depth` of them. */
export function* causes(error: unknown, depth = CAUSE_DEPTH): Generator<unknown, void, undefined> {
  let current = error;
  for (let seen = 0; current !== undefined && current !== null && seen < depth; seen += 1) {
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

/** The first error of the chain that is a `type`, if any. */
export function causeOfType<T>(error: unknown, type: abstract new (...args: never[]) => T): T | undefined {
  for (const cause of causes(error)) if (cause instanceof type) return cause;
  return undefined;
}
