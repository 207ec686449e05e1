import { afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { clearLine, cursorTo, moveCursor } from 'node:readline';
import { Writable } from 'node:stream';
import { terminalRows } from '../../../test/support/cli-unit.js';
import { styleFor, type Style } from './style.js';
import {
  ANSWER_RESTART_MARKER,
  AnswerPrinter,
  SPINNER_DELAY_MS,
  Wait,
  looksLikeMarkdown,
  renderMarkdown,
  rowsOf,
  withSpinner,
} from './terminal.js';

/*
 * The answer printer and the spinner against a stream that stands for stdout or stderr: a pipe, or a
 * terminal whose bytes a headless xterm turns into the rows a person reads.
 */

const ESC = '\u001b';
const BEL = '\u0007';
// What only the client may send: its colours (SGR) and, on a terminal, the redraw (CR, cursor up, erase below).
const FOREIGN = /\u001b(?!\[[0-9;]*m)|[\u0000-\u0008\u000b-\u001a\u001c-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

// marked-terminal's colours (chalk) are read when it loads: on, as on a colour terminal.
process.env.FORCE_COLOR = '1';

const colours: Style = styleFor({ isTTY: true } as NodeJS.WriteStream, { FORCE_COLOR: '1' });
const plain: Style = styleFor({ isTTY: false } as NodeJS.WriteStream, {});

/** A stream that keeps its bytes and each write; a terminal `columns` × `rows` when `tty`. */
class Screen extends Writable {
  readonly writes: string[] = [];
  private readonly chunks: Buffer[] = [];

  constructor(
    readonly isTTY: boolean,
    readonly columns = 80,
    readonly rows = 24,
  ) {
    super();
  }

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.chunks.push(chunk);
    this.writes.push(chunk.toString('utf8'));
    done();
  }

  /** The bytes written, read as UTF-8 (a character split across writes is whole again here). */
  get text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }

  // What a tty.WriteStream offers the spinner.
  cursorTo(x: number): boolean {
    return cursorTo(this, x);
  }

  moveCursor(dx: number, dy: number): boolean {
    return moveCursor(this, dx, dy);
  }

  clearLine(dir: -1 | 0 | 1): boolean {
    return clearLine(this, dir);
  }

  /** The rows a person reads on this terminal (scrollback, then the screen), trailing blanks dropped. */
  seen(): Promise<string[]> {
    return terminalRows(Buffer.concat(this.chunks), this.columns, this.rows);
  }
}

const stream = (screen: Screen): NodeJS.WriteStream => screen as unknown as NodeJS.WriteStream;

function printer(tty: boolean, style = tty ? colours : plain, size?: { columns: number; rows: number }) {
  const out = new Screen(tty, size?.columns, size?.rows);
  return { out, answer: new AnswerPrinter(stream(out), style) };
}

describe('AnswerPrinter on a pipe', () => {
  it('prints each chunk as it comes, in order, and ends the answer with one line break', async () => {
    const { out, answer } = printer(false);
    answer.write('one ');
    expect(out.text).toBe('one ');
    answer.write('');
    answer.write('two');
    expect(out.writes).toEqual(['one ', 'two']);
    await answer.finish();
    expect(out.text).toBe('one two\n');
  });

  it('adds no line break after one the answer ended with, and prints nothing for an empty answer', async () => {
    const empty = printer(false);
    await empty.answer.finish();
    expect(empty.out.text).toBe('');
    const { out, answer } = printer(false);
    answer.write('done\n');
    await answer.finish();
    await answer.finish();
    expect(out.text).toBe('done\n');
  });

  it('leaves Markdown as the agent wrote it: no redraw, no colour', async () => {
    const { out, answer } = printer(false);
    answer.write('## Summary\n\n- **bold** point');
    await answer.finish();
    expect(out.text).toBe('## Summary\n\n- **bold** point\n');
  });

  it('an answer started over on another course: a marker line, then the new answer, each piece once', async () => {
    const { out, answer } = printer(false);
    answer.write('Hello ');
    answer.write('wor');
    answer.replace('Goodbye');
    answer.write(' all');
    await answer.finish();
    expect(out.text).toBe(`Hello wor\n${ANSWER_RESTART_MARKER}\nGoodbye all\n`);
  });

  it('a restart after a line break adds no empty line; one before anything was shown adds no marker', async () => {
    const { out, answer } = printer(false);
    answer.write('first\n');
    answer.replace('second');
    await answer.finish();
    expect(out.text).toBe(`first\n${ANSWER_RESTART_MARKER}\nsecond\n`);
    const fresh = printer(false);
    fresh.answer.replace('only');
    await fresh.answer.finish();
    expect(fresh.out.text).toBe('only\n');
  });

  it('a progress line interrupting it ends its line once; the answer goes on after it', async () => {
    const { out, answer } = printer(false);
    answer.write('Look');
    answer.interrupt();
    answer.interrupt();
    answer.write('ing');
    answer.interrupt();
    answer.write(' done\n');
    await answer.finish();
    expect(out.text).toBe('Look\ning\n done\n');
  });

  it('nothing is printed before the answer starts: an interrupt with nothing shown writes nothing', async () => {
    const { out, answer } = printer(false);
    answer.interrupt();
    await answer.finish();
    expect(out.text).toBe('');
  });

  it.each([
    ['a cursor move and a line erase', [`a${ESC}[2`, `A${ESC}[2K`, 'b']],
    ['a bell', [`a${BEL}`, 'b']],
    ['a window title', [`a${ESC}]0;`, `pwned${BEL}b`]],
    ['a hyperlink', [`a${ESC}]8;;https://evil.example${ESC}`, `\\b${ESC}]8;;${ESC}\\`]],
    ['a clipboard write', [`a${ESC}]52;c;`, `cm0gLXJmIH4=${ESC}\\b`]],
    ['a carriage return rewriting the line', ['a\r', `${ESC}[2Kb`]],
    ['8-bit CSI and OSC', ['a\u009b', '2K\u009d0;t\u009cb']],
    ['a bidi override', ['a\u202e', 'b\u202c']],
  ])('%s split across chunks: no write carries any part of it', async (_, chunks) => {
    const { out, answer } = printer(false);
    for (const chunk of chunks) answer.write(chunk);
    await answer.finish();
    expect(out.text).toBe('ab\n');
    for (const write of out.writes) expect(write).not.toMatch(FOREIGN);
  });

  it('a character split between two chunks (a surrogate pair) reaches the stream whole', async () => {
    const { out, answer } = printer(false);
    answer.write('smile \ud83d');
    answer.write('\ude00 and \ud83d\udc4d');
    await answer.finish();
    expect(out.text).toBe('smile 😀 and 👍\n');
    expect(out.text).not.toContain('\ufffd');
  });

  it('multi-byte characters and a very long line pass as they are', async () => {
    const { out, answer } = printer(false);
    const long = `${'ü漢字✓ '.repeat(5000)}end`;
    for (let i = 0; i < long.length; i += 777) answer.write(long.slice(i, i + 777));
    await answer.finish();
    expect(out.text).toBe(`${long}\n`);
  });
});

describe('AnswerPrinter on a terminal', () => {
  /** A terminal where the person asked `question`, then the answer streamed in `chunks`. */
  async function asked(question: string, chunks: string[], options: { columns?: number; rows?: number } = {}) {
    const out = new Screen(true, options.columns ?? 80, options.rows ?? 24);
    out.write(`› ${question}\n`);
    const answer = new AnswerPrinter(stream(out), colours);
    for (const chunk of chunks) answer.write(chunk);
    await answer.finish();
    return { out, seen: await out.seen() };
  }

  it('a Markdown answer is redrawn rendered where it streamed: shown once, the question above it intact', async () => {
    const { seen } = await asked('summarise', ['## Sum', 'mary\n\n', '- first **bold** point\n', '- second `code`\n']);
    expect(seen[0]).toBe('› summarise');
    const answer = seen.slice(1).join('\n');
    expect(answer).toContain('Summary');
    expect(answer).toMatch(/first bold point/);
    expect(answer).toMatch(/second code/);
    expect(answer).not.toMatch(/##|\*\*|`/);
    expect(seen.filter((line) => line.includes('first bold point'))).toHaveLength(1);
  });

  it('lines wrapped by the terminal are counted: the redraw starts on the first row of the answer', async () => {
    const long = `**${'word '.repeat(30).trim()}**`;
    const { seen } = await asked('wrap', [`# Title\n${long}\n`, 'last'], { columns: 40 });
    expect(seen[0]).toBe('› wrap');
    expect(seen[1]).toContain('Title');
    expect(seen.join('\n')).not.toMatch(/#|\*\*/);
  });

  it('plain text is left as written, with its line ended: no redraw', async () => {
    const { out, seen } = await asked('hi', ['Hello', ' there']);
    expect(out.text).not.toContain(`${ESC}[J`);
    expect(seen).toEqual(['› hi', 'Hello there']);
  });

  it('an answer a progress line interrupted is left as written, never redrawn over that line', async () => {
    const out = new Screen(true);
    const answer = new AnswerPrinter(stream(out), colours);
    answer.write('## Heading\n- **a**');
    answer.interrupt();
    out.write('→ a tool line\n');
    answer.write('more');
    await answer.finish();
    expect(out.text).not.toContain(`${ESC}[J`);
    expect(await out.seen()).toEqual(['## Heading', '- **a**', '→ a tool line', 'more']);
  });

  it('a restarted answer is redrawn alone: the first course and the marker stay above it', async () => {
    const out = new Screen(true);
    const answer = new AnswerPrinter(stream(out), colours);
    answer.write('first course');
    answer.replace('## New\n- **x**\n');
    await answer.finish();
    const seen = await out.seen();
    expect(seen.slice(0, 3)).toEqual(['first course', ANSWER_RESTART_MARKER, 'New']);
    expect(seen.join('\n')).not.toMatch(/##|\*\*/);
  });

  it('an answer taller than the screen is left as written, not drawn again below its scrolled-off start', async () => {
    const points = Array.from({ length: 15 }, (_, i) => `- point **${i}**\n`);
    const { out, seen } = await asked('list', points, { rows: 10 });
    expect(seen).toEqual(['› list', ...points.map((point) => point.trimEnd())]);
    expect(out.text).not.toContain(`${ESC}[J`);
  });

  it('an answer as tall as the screen is still redrawn in place', async () => {
    // Nine lines and the row the cursor ends on: the ten rows of the screen, the question scrolled off.
    const points = Array.from({ length: 9 }, (_, i) => `- point **${i}**\n`);
    const { seen } = await asked('list', points, { rows: 10 });
    expect(seen[0]).toBe('› list');
    expect(seen.filter((line) => line.includes('point 0'))).toHaveLength(1);
    expect(seen.join('\n')).not.toContain('**');
  });

  it('without colours the rendered answer carries no SGR, only the redraw', async () => {
    const out = new Screen(true);
    const answer = new AnswerPrinter(stream(out), styleFor({ isTTY: true } as NodeJS.WriteStream, { NO_COLOR: '1' }));
    answer.write('## Title\n- **a**\n');
    await answer.finish();
    const redrawn = out.text.slice(out.text.indexOf(`${ESC}[J`) + 3);
    expect(redrawn).not.toContain(ESC);
    expect(redrawn).toContain('Title');
  });

  it('nothing of an attack reaches the terminal through the rendered answer', async () => {
    const { out, seen } = await asked('attack', [
      `## Sum${ESC}]0;t`,
      `${BEL}mary\n- [link](https://evil.example) ${ESC}]8;;https://evil.example${BEL}x${ESC}]8;;${BEL}\n`,
      `- &#27;]52;c;AA&#7; \r${ESC}[2Kspoof\n`,
    ]);
    expect(out.text.replace(/\r\u001b\[\d+A\u001b\[J/, '')).not.toMatch(FOREIGN);
    expect(seen.join('\n')).toContain('link (https://evil.example)');
    expect(seen.join('\n')).toContain('spoof');
  });
});

describe('rowsOf', () => {
  it('counts the rows a text takes on a terminal, wrapped lines and the row after a final line break included', () => {
    expect(rowsOf('one', 80)).toBe(1);
    expect(rowsOf('x'.repeat(80), 80)).toBe(1);
    expect(rowsOf('x'.repeat(81), 80)).toBe(2);
    expect(rowsOf('a\nb\n', 80)).toBe(3);
    expect(rowsOf(`${colours.bold('x'.repeat(80))}`, 80)).toBe(1);
  });
});

describe('looksLikeMarkdown', () => {
  it.each([
    '# Title',
    'text\n- item',
    '1. first',
    '```\ncode\n```',
    '> quote',
    '| a | b |',
    '**bold**',
    '`x`',
    '[a](b)',
  ])('takes %j for Markdown', (text) => expect(looksLikeMarkdown(text)).toBe(true));

  it.each(['plain words', 'a - b', '2 * 3 * 4', 'C# and F#', 'price: $5'])('takes %j for plain text', (text) =>
    expect(looksLikeMarkdown(text)).toBe(false),
  );
});

describe('renderMarkdown', () => {
  it('renders headings, emphasis and code, reflowed to the width it is given', async () => {
    const rendered = await renderMarkdown(`# Title\n\n**bold** and \`code\` ${'word '.repeat(30)}`, plain, 40);
    expect(rendered).not.toContain(ESC);
    expect(rendered).not.toMatch(/#|\*\*|`/);
    for (const line of rendered.split('\n')) expect(line.length).toBeLessThanOrEqual(40);
  });
});

describe('Wait: the spinner on stderr', () => {
  beforeAll(async () => {
    // Loaded once here, so that the spinner's own import resolves at once under fake timers.
    await import('ora');
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  /** Lets the spinner's import and first frame run. */
  async function elapse(ms: number): Promise<void> {
    await jest.advanceTimersByTimeAsync(ms);
  }

  it(`shows on a terminal only once a wait passed ${SPINNER_DELAY_MS} ms`, async () => {
    jest.useFakeTimers();
    const err = new Screen(true);
    const wait = new Wait(stream(err), colours);
    wait.start('Thinking');
    await elapse(SPINNER_DELAY_MS - 1);
    expect(err.text).toBe('');
    await elapse(1);
    expect(err.text).toContain('Thinking');
    wait.stop();
    jest.useRealTimers();
    expect(await err.seen()).toEqual([]);
  });

  it('never shows on a pipe', async () => {
    jest.useFakeTimers();
    const err = new Screen(false);
    const wait = new Wait(stream(err), plain);
    wait.start('Thinking');
    await elapse(SPINNER_DELAY_MS * 10);
    wait.stop();
    expect(err.text).toBe('');
  });

  it('a wait ended before the delay shows nothing, and a new wait replaces the old one', async () => {
    jest.useFakeTimers();
    const err = new Screen(true);
    const wait = new Wait(stream(err), colours);
    wait.start('Thinking');
    await elapse(SPINNER_DELAY_MS / 2);
    wait.stop();
    wait.stop();
    await elapse(SPINNER_DELAY_MS * 10);
    expect(err.text).toBe('');
    wait.start('Working');
    await elapse(SPINNER_DELAY_MS / 2);
    wait.start('Running lookup');
    await elapse(SPINNER_DELAY_MS);
    wait.stop();
    expect(err.text).toContain('Running lookup');
    expect(err.text).not.toContain('Working');
  });

  it('a wait that ends while the spinner is still loading never shows it', async () => {
    jest.useFakeTimers();
    const err = new Screen(true);
    const wait = new Wait(stream(err), colours);
    wait.start('Thinking');
    // The delay passes and the spinner's module is asked for; the wait ends before it has loaded.
    jest.advanceTimersByTime(SPINNER_DELAY_MS);
    wait.stop();
    await elapse(SPINNER_DELAY_MS * 10);
    expect(err.text).toBe('');
  });

  it("its text, which may name the agent's tool, is made safe", async () => {
    jest.useFakeTimers();
    const err = new Screen(true);
    const wait = new Wait(stream(err), colours);
    wait.start(`Running look${ESC}]0;pwned${BEL}up\r${ESC}[2K\nx`);
    await elapse(SPINNER_DELAY_MS);
    wait.stop();
    expect(err.text).toContain('Running lookup x');
    expect(err.text).not.toMatch(/pwned|\]0;|\u0007/);
  });

  it('withSpinner stops it when the work ends, and when it fails', async () => {
    jest.useFakeTimers();
    const err = new Screen(true);
    let finish: (value: string) => void = () => undefined;
    const result = withSpinner(stream(err), colours, 'Connecting', () => new Promise<string>((r) => (finish = r)));
    await elapse(SPINNER_DELAY_MS);
    expect(err.text).toContain('Connecting');
    finish('connected');
    await expect(result).resolves.toBe('connected');
    const shown = err.text;
    jest.useRealTimers();
    expect(await err.seen()).toEqual([]);
    jest.useFakeTimers();
    const failed = withSpinner(stream(err), colours, 'Again', () => Promise.reject(new Error('no')));
    await expect(failed).rejects.toThrow('no');
    await elapse(SPINNER_DELAY_MS * 10);
    expect(err.text).toBe(shown);
  });
});
