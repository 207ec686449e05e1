/**
 * Whether `signal` has aborted, read now. After `if (signal.aborted) return`, the type checker keeps
 * `signal.aborted` false across later awaits, while the signal may abort meanwhile: read it through
 * this where an await came between.
 */
export function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}
