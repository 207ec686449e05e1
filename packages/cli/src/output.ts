/**
 * A reader that stops reading (`cleveragents tasks list | head`) closes stdout: the next write fails
 * with EPIPE, which Node reports as an 'error' event that would end the process with a stack trace.
 * Here it ends the command quietly instead: `outputClosed` aborts (streams being followed stop),
 * nothing more is printed, and the exit code is EXIT.OUTPUT_CLOSED. A closed stderr is ignored the
 * same way (there is nowhere left to say anything).
 */
const closed = new AbortController();

/** Aborted once stdout's reader has gone. */
export const outputClosed: AbortSignal = closed.signal;

function isClosedPipe(error: NodeJS.ErrnoException): boolean {
  return error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED';
}

/** Watches the process's stdout and stderr for a reader that has gone (once, from the executable). */
export function watchOutput(
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): void {
  out.on('error', (error: NodeJS.ErrnoException) => {
    // Any other failure is what it was before: the process's to report.
    if (!isClosedPipe(error)) throw error;
    closed.abort(error);
  });
  err.on('error', (error: NodeJS.ErrnoException) => {
    if (!isClosedPipe(error)) throw error;
  });
}

/** `signal`, also aborted when stdout's reader goes: a stream followed for the screen stops with it. */
export function untilOutputCloses(signal?: AbortSignal): AbortSignal {
  return signal ? AbortSignal.any([signal, outputClosed]) : outputClosed;
}
