import type { Readable } from 'node:stream';

const LF = 0x0a;

/**
 * One line of piped input, without its line break (LF or CRLF); undefined once the input has ended.
 * Only that line is taken: what came with it stays at the front of the stream for whoever reads next
 * (the next prompt, a question), so that a chunk of several lines, or a line in pieces, loses nothing.
 */
export function readPipedLine(input: Readable): Promise<string | undefined> {
  if (input.readableEnded) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let taken = Buffer.alloc(0);
    const text = (bytes: Buffer): string => bytes.toString('utf8').replace(/\r$/, '');
    const finish = (line: string | undefined): void => {
      input.off('data', onData);
      input.off('end', onEnd);
      resolve(line);
    };
    const onData = (chunk: Buffer | string): void => {
      taken = Buffer.concat([taken, Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)]);
      const end = taken.indexOf(LF);
      if (end < 0) return;
      input.pause();
      if (end + 1 < taken.length) input.unshift(taken.subarray(end + 1));
      finish(text(taken.subarray(0, end)));
    };
    // The input ended: its last line, if it has no line break of its own.
    const onEnd = (): void => finish(taken.length > 0 ? text(taken) : undefined);
    input.on('data', onData);
    input.once('end', onEnd);
    input.resume();
  });
}
