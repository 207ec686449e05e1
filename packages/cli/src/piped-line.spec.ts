import { describe, expect, it } from '@jest/globals';
import { PassThrough } from 'node:stream';
import { readPipedLine } from './piped-line.js';

/** Every line `readPipedLine` reads from `input`, until it says the input ended. */
async function linesOf(input: PassThrough): Promise<string[]> {
  const lines: string[] = [];
  for (let line = await readPipedLine(input); line !== undefined; line = await readPipedLine(input)) lines.push(line);
  return lines;
}

describe('readPipedLine', () => {
  it('takes one line, without its LF or CRLF, and leaves the rest of the chunk in the stream', async () => {
    const input = new PassThrough();
    input.write('one\r\ntwo\n\nthree');
    await expect(readPipedLine(input)).resolves.toBe('one');
    expect((input.read() as Buffer).toString()).toBe('two\n\nthree');
  });

  it('reads a chunk of several lines a line at a time, the last one unended, then says the input ended', async () => {
    const input = new PassThrough();
    input.end('one\r\ntwo\n\nthree');
    await expect(linesOf(input)).resolves.toEqual(['one', 'two', '', 'three']);
    await expect(readPipedLine(input)).resolves.toBeUndefined();
  });

  it('waits for a line that comes in pieces, a character split between them included', async () => {
    const input = new PassThrough();
    const read = readPipedLine(input);
    const bytes = Buffer.from('café ✓\nnext', 'utf8');
    for (const byte of bytes.subarray(0, 8)) input.write(Buffer.from([byte]));
    input.write(bytes.subarray(8));
    await expect(read).resolves.toBe('café ✓');
    input.end();
    await expect(linesOf(input)).resolves.toEqual(['next']);
  });

  it('an empty input has no line', async () => {
    const input = new PassThrough();
    input.end();
    await expect(readPipedLine(input)).resolves.toBeUndefined();
  });
});
