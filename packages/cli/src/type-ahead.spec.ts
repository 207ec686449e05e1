import { describe, expect, it } from '@jest/globals';
import { PassThrough } from 'node:stream';
import { TypeAhead } from './type-ahead.js';

/*
 * Keys typed while the chat is away from its prompt, on a stand-in for stdin: a stream that reports
 * itself a terminal (or a pipe) and records the modes it is put in.
 */

const CTRL_C = '\u0003';
const CTRL_D = '\u0004';

class Keyboard extends PassThrough {
  readonly modes: boolean[] = [];

  constructor(readonly isTTY: boolean) {
    super();
  }

  setRawMode(raw: boolean): this {
    this.modes.push(raw);
    return this;
  }

  get isRaw(): boolean {
    return this.modes.at(-1) ?? false;
  }

  /** Keys (or raw bytes) as the terminal sends them, once the stream has handed them on. */
  async type(keys: string | Buffer): Promise<void> {
    this.write(keys);
    await new Promise((resolve) => setImmediate(resolve));
  }

  /** What the next reader of the stream (the prompt) gets first. */
  next(): string {
    const chunk = this.read() as Buffer | null;
    return chunk ? chunk.toString('utf8') : '';
  }
}

function typeAhead(tty = true) {
  const keys = new Keyboard(tty);
  return { keys, ahead: new TypeAhead(keys as unknown as NodeJS.ReadStream) };
}

/** The lines `feedLine` hands the prompts that follow, one a prompt, until nothing is left. */
function linesFed(keys: Keyboard, ahead: TypeAhead): string[] {
  const lines: string[] = [];
  for (let line = (ahead.feedLine(), keys.next()); line !== ''; line = (ahead.feedLine(), keys.next())) {
    lines.push(line);
  }
  return lines;
}

describe('TypeAhead', () => {
  it('on a pipe there are no keys to keep: no raw mode, nothing held or put back', async () => {
    const { keys, ahead } = typeAhead(false);
    expect(ahead.active).toBe(false);
    ahead.listen();
    expect(keys.listenerCount('data')).toBe(0);
    ahead.feedLine();
    expect(keys.next()).toBe('');
    ahead.restore();
    expect(keys.modes).toEqual([]);
    await keys.type('line\n');
    expect(keys.next()).toBe('line\n');
  });

  it('while a turn runs the terminal is raw and the keys are kept, for the prompt only', async () => {
    const { keys, ahead } = typeAhead();
    ahead.listen();
    expect(keys.isRaw).toBe(true);
    await keys.type('Echo a');
    ahead.stop();
    // Stopped, the terminal stays raw: the next prompt takes over without a gap in line mode.
    expect(keys.isRaw).toBe(true);
    expect(keys.listenerCount('data')).toBe(0);
    expect(keys.next()).toBe('');
    ahead.feedLine();
    expect(keys.next()).toBe('Echo a');
  });

  it('hands the prompts one line each, up to and including its Enter (CR or LF): a paste of several lines', async () => {
    const { keys, ahead } = typeAhead();
    ahead.listen();
    await keys.type('first\rsecond\n');
    await keys.type('thi');
    await keys.type('rd\rfour');
    ahead.stop();
    expect(linesFed(keys, ahead)).toEqual(['first\r', 'second\n', 'third\r', 'four']);
  });

  it('keys typed ahead come before those typed once the prompt is there', async () => {
    const { keys, ahead } = typeAhead();
    ahead.listen();
    await keys.type('early ');
    ahead.stop();
    await keys.type('late\r');
    ahead.feedLine();
    expect(keys.next()).toBe('early late\r');
  });

  it('Ctrl-C among the keys is a press each time, and drops what was typed before it', async () => {
    const { keys, ahead } = typeAhead();
    let presses = 0;
    ahead.listen(() => (presses += 1));
    await keys.type(`dropped${CTRL_C}also dropped`);
    await keys.type(`${CTRL_C}${CTRL_C}kept\r`);
    ahead.stop();
    expect(presses).toBe(3);
    expect(linesFed(keys, ahead)).toEqual(['kept\r']);
  });

  it('Ctrl-D is a key like any other, kept for the prompt to read', async () => {
    const { keys, ahead } = typeAhead();
    ahead.listen();
    await keys.type(`Echo three\r${CTRL_D}`);
    ahead.stop();
    expect(linesFed(keys, ahead)).toEqual(['Echo three\r', CTRL_D]);
  });

  it('a character that arrives in two pieces (its UTF-8 bytes split) is put back whole', async () => {
    const { keys, ahead } = typeAhead();
    ahead.listen();
    const bytes = Buffer.from('café ✓\r', 'utf8');
    for (const byte of bytes) await keys.type(Buffer.from([byte]));
    ahead.stop();
    expect(linesFed(keys, ahead)).toEqual(['café ✓\r']);
  });

  it('keep adds keys a prompt read past its line (the rest of a paste) after those typed ahead', async () => {
    const { keys, ahead } = typeAhead();
    ahead.listen();
    await keys.type('first\r');
    ahead.stop();
    ahead.keep('second\rthi');
    ahead.keep('rd\r');
    expect(linesFed(keys, ahead)).toEqual(['first\r', 'second\r', 'third\r']);
  });

  it('drop forgets what was typed: keys typed before a question never answer it, nor reach the prompt', async () => {
    const { keys, ahead } = typeAhead();
    ahead.listen();
    await keys.type('a\r');
    ahead.pause();
    ahead.drop();
    // The question has the keyboard in line mode.
    expect(keys.isRaw).toBe(false);
    expect(keys.next()).toBe('');
    ahead.listen();
    expect(keys.isRaw).toBe(true);
    await keys.type('after\r');
    ahead.stop();
    expect(linesFed(keys, ahead)).toEqual(['after\r']);
  });

  it('listening twice keeps each key once; the Ctrl-C handler given last stays', async () => {
    const { keys, ahead } = typeAhead();
    let presses = 0;
    ahead.listen(() => (presses += 1));
    ahead.listen();
    await keys.type(`x${CTRL_C}y`);
    ahead.stop();
    ahead.listen();
    await keys.type(CTRL_C);
    ahead.stop();
    expect(presses).toBe(2);
    expect(keys.listenerCount('data')).toBe(0);
  });

  it('restore gives the terminal back in line mode, as the chat found it', async () => {
    const { keys, ahead } = typeAhead();
    ahead.listen();
    await keys.type('x');
    ahead.restore();
    expect(keys.isRaw).toBe(false);
    expect(keys.listenerCount('data')).toBe(0);
    // Stopping again changes nothing.
    ahead.stop();
    ahead.pause();
    expect(keys.modes).toEqual([true, false]);
  });
});
