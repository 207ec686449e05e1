import { afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReactElement } from 'react';
import type { Completer } from './complete.js';
import { InputHistory } from './history.js';
import type { PromptInputProps } from './prompt-input.js';

/*
 * The input rendered by ink in process (ink-testing-library): keys are written to its stdin as a
 * terminal sends them, and the frames it draws are read back. Colours are on, so the cursor (an
 * inverse cell) can be seen; they are forced only while ink's colour library is loaded.
 */

type Library = typeof import('ink-testing-library');
let render: Library['render'];
let PromptInput: (typeof import('./prompt-input.js'))['PromptInput'];
let createCompleter: (typeof import('./complete.js'))['createCompleter'];
let Box: (typeof import('ink'))['Box'];

beforeAll(async () => {
  const before = process.env.FORCE_COLOR;
  process.env.FORCE_COLOR = '1';
  try {
    ({ render } = await import('ink-testing-library'));
    ({ Box } = await import('ink'));
    ({ PromptInput } = await import('./prompt-input.js'));
    ({ createCompleter } = await import('./complete.js'));
  } finally {
    if (before === undefined) delete process.env.FORCE_COLOR;
    else process.env.FORCE_COLOR = before;
  }
});

const ESC = '\u001b';
const ENTER = '\r';
const ALT_ENTER = `${ESC}\r`;
const CTRL_J = '\n';
const SHIFT_ENTER_KITTY = `${ESC}[13;2u`;
const MODIFY_OTHER_KEYS_SHIFT_ENTER = `${ESC}[27;2;13~`;
const LEFT = `${ESC}[D`;
const RIGHT = `${ESC}[C`;
const UP = `${ESC}[A`;
const DOWN = `${ESC}[B`;
const HOME = `${ESC}[H`;
const END = `${ESC}[F`;
const CTRL_LEFT = `${ESC}[1;5D`;
const CTRL_RIGHT = `${ESC}[1;5C`;
const ALT_B = `${ESC}b`;
const ALT_F = `${ESC}f`;
const BACKSPACE = '\u007f';
const ALT_BACKSPACE = `${ESC}\u007f`;
const DELETE = `${ESC}[3~`;
const CTRL_A = '\u0001';
const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const CTRL_E = '\u0005';
const CTRL_K = '\u000b';
const CTRL_U = '\u0015';
const CTRL_W = '\u0017';
const TAB = '\t';
const paste = (text: string) => `${ESC}[200~${text}${ESC}[201~`;

const SGR = /\u001b\[[0-9;]*m/g;
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Waits (a little) for what React draws outside a key's handling: a completion's result, a resize. */
async function until(check: () => void): Promise<void> {
  const deadline = Date.now() + 3000;
  for (;;) {
    try {
      check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}
// ink hands a lone ESC on only after 20 ms, in case more of a sequence is on its way.
const escapeDelay = () => new Promise((resolve) => setTimeout(resolve, 60));

interface Harness {
  submitted: string[];
  interrupts: number;
  exits: number;
  history: InputHistory;
  type(...keys: string[]): Promise<void>;
  /** The last frame without colours, each line with its right end trimmed. */
  lines(): string[];
  /** The text inside the box, without the prompt column. */
  box(): string[];
  /** The raw last frame (with colours). */
  frame(): string;
  /** The row (inside the box) and column (after the prompt) of the inverse cell, and what it holds. */
  cursor(): { row: number; column: number; cell: string } | undefined;
  rerender(props: Partial<PromptInputProps>): void;
  resize(columns: number): Promise<void>;
  unmount(): void;
}

let mounted: Harness[] = [];
afterEach(() => {
  for (const harness of mounted) harness.unmount();
  mounted = [];
});

async function mount(
  overrides: Partial<PromptInputProps> = {},
  place: (input: ReactElement) => ReactElement = (input) => input,
): Promise<Harness> {
  const harness = {
    submitted: [] as string[],
    interrupts: 0,
    exits: 0,
    history: overrides.history ?? new InputHistory(undefined),
  } as Harness;
  const element = (props: Partial<PromptInputProps>): ReactElement => (
    <PromptInput
      active
      onSubmit={(text) => harness.submitted.push(text)}
      onInterrupt={() => (harness.interrupts += 1)}
      onExit={() => (harness.exits += 1)}
      history={harness.history}
      placeholder="Ask anything"
      {...overrides}
      {...props}
    />
  );
  const app = render(place(element({})));
  let columns = 100;
  Object.defineProperty(app.stdout, 'columns', { get: () => columns, configurable: true });
  // With no rows ink would ask the real terminal for its size.
  Object.defineProperty(app.stdout, 'rows', { value: 24, configurable: true });
  harness.type = async (...keys) => {
    for (const key of keys) {
      app.stdin.write(key);
      await settle();
    }
  };
  harness.frame = () => app.lastFrame() ?? '';
  harness.lines = () =>
    harness
      .frame()
      .replace(SGR, '')
      .split('\n')
      .map((line) => line.trimEnd());
  const inside = (line: string) => line.replace(/^\s*│/, '').replace(/│\s*$/, '');
  harness.box = () =>
    harness
      .lines()
      .filter((line) => line.trimStart().startsWith('│'))
      .map((line) => inside(line).slice(2).trimEnd());
  harness.cursor = () => {
    const rows = harness
      .frame()
      .split('\n')
      .filter((line) => line.replace(SGR, '').trimStart().startsWith('│'));
    for (const [row, line] of rows.entries()) {
      const at = line.indexOf(`${ESC}[7m`);
      if (at === -1) continue;
      const before = line.slice(0, at).replace(SGR, '').trimStart();
      const cell = line.slice(at + 4, line.indexOf(`${ESC}[27m`, at));
      return { row, column: [...before].length - 3, cell };
    }
    return undefined;
  };
  harness.rerender = (props) => app.rerender(place(element(props)));
  harness.resize = async (width) => {
    columns = width;
    app.stdout.emit('resize');
    await settle();
  };
  let unmounted = false;
  harness.unmount = () => {
    if (!unmounted) app.unmount();
    unmounted = true;
  };
  mounted.push(harness);
  await settle();
  return harness;
}

describe('PromptInput: writing and sending', () => {
  it('shows the prompt and placeholder in a box, the cursor on its first cell', async () => {
    const input = await mount();
    expect(input.lines()[0]).toMatch(/^╭─+╮$/);
    expect(input.lines()[1]).toMatch(/^│› Ask anything\s+│$/);
    expect(input.cursor()).toEqual({ row: 0, column: 0, cell: 'A' });
  });

  it('sends the text on Enter and empties the box; an empty or blank buffer sends nothing', async () => {
    const input = await mount();
    await input.type(ENTER, ' ', ' ', ENTER);
    expect(input.submitted).toEqual([]);
    await input.type(CTRL_U, 'h', 'e', 'l', 'l', 'o');
    expect(input.box()).toEqual(['hello']);
    await input.type(ENTER);
    expect(input.submitted).toEqual(['hello']);
    expect(input.box()).toEqual(['Ask anything']);
    expect(input.history.list()).toEqual(['hello']);
  });

  it('starts a new line on Alt-Enter, Ctrl-J, Shift-Enter (kitty) and after a trailing backslash', async () => {
    const input = await mount();
    await input.type('one', ALT_ENTER, 'two', CTRL_J, 'three', SHIFT_ENTER_KITTY, 'four\\', ENTER, 'five');
    expect(input.submitted).toEqual([]);
    expect(input.box()).toEqual(['one', 'two', 'three', 'four', 'five']);
    await input.type(ENTER);
    expect(input.submitted).toEqual(['one\ntwo\nthree\nfour\nfive']);
  });

  it('sends text and Enter typed faster than they are read, but inserts a pasted chunk with line breaks', async () => {
    const input = await mount();
    await input.type('hello\r');
    expect(input.submitted).toEqual(['hello']);
    // A terminal without bracketed paste: the lines arrive as one chunk, and are inserted, not sent.
    await input.type('one\rtwo\r');
    expect(input.submitted).toEqual(['hello']);
    expect(input.box()).toEqual(['one', 'two', '']);
  });

  it('inserts nothing for a key sequence it does not understand', async () => {
    const input = await mount();
    await input.type('a', MODIFY_OTHER_KEYS_SHIFT_ENTER, `${ESC}[15~`, `${ESC}[I`, `${ESC}[<0;10;5M`, 'b', ENTER);
    expect(input.submitted).toEqual(['ab']);
  });
});

describe('PromptInput: moving the cursor', () => {
  it('moves by character, to the line ends, and by word', async () => {
    const input = await mount();
    await input.type('hello big world');
    await input.type(LEFT, LEFT, 'X', RIGHT, 'Y');
    await input.type(HOME, '1', END, '2', CTRL_A, '3', CTRL_E, '4');
    expect(input.box()).toEqual(['31hello big worXlYd24']);
    await input.type(CTRL_U, 'alpha beta gamma', ALT_B, '^', ALT_B, '<', ALT_F, '>', CTRL_LEFT, '[', CTRL_RIGHT, ']');
    expect(input.box()).toEqual(['alpha <[beta]> ^gamma']);
  });

  it('shows the cursor as an inverse cell where it is, and a blank cell at the end', async () => {
    const input = await mount();
    await input.type('abc');
    expect(input.cursor()).toEqual({ row: 0, column: 3, cell: ' ' });
    await input.type(LEFT, LEFT);
    expect(input.cursor()).toEqual({ row: 0, column: 1, cell: 'b' });
    await input.type(ALT_ENTER, 'x', UP);
    expect(input.cursor()).toEqual({ row: 0, column: 1, cell: ' ' });
  });

  it('goes up and down the lines of the buffer, keeping the column where the line is long enough', async () => {
    const input = await mount();
    await input.type('first line', CTRL_J, 'ab', CTRL_J, 'third line');
    await input.type(UP, 'X');
    expect(input.box()).toEqual(['first line', 'abX', 'third line']);
    await input.type(UP, 'Y', DOWN, DOWN, 'Z');
    expect(input.box()).toEqual(['firYst line', 'abX', 'thiZrd line']);
  });

  it('goes up and down the rows of a wrapped line before leaving it', async () => {
    const history = new InputHistory(undefined);
    history.add('earlier');
    const input = await mount({ history });
    await input.resize(14);
    // 14 columns: 10 cells of text a row.
    await until(() => expect(input.lines()[0]).toBe('╭────────────╮'));
    await input.type('abcdefghij0123456789ABCDE');
    expect(input.box()).toEqual(['abcdefghij', '0123456789', 'ABCDE']);
    await input.type(UP, '^');
    expect(input.box()).toEqual(['abcdefghij', '01234^5678', '9ABCDE']);
    await input.type(UP, UP, DOWN, DOWN, DOWN, '$');
    expect(input.box()).toEqual(['abcdefghij', '01234^5678', '9ABCDE$']);
    await input.type(UP, UP, UP);
    expect(input.box()).toEqual(['earlier']);
  });

  it('reaches the history from the first line and back to the kept draft from the last', async () => {
    const history = new InputHistory(undefined);
    history.add('older');
    history.add('newer\nsecond line');
    const input = await mount({ history });
    await input.type('my', CTRL_J, 'draft');
    // From the draft's last line, Up climbs to its first line, then into the history.
    await input.type(UP);
    expect(input.box()).toEqual(['my', 'draft']);
    await input.type(UP);
    expect(input.box()).toEqual(['newer', 'second line']);
    await input.type(UP, UP);
    expect(input.box()).toEqual(['older']);
    await input.type(UP);
    expect(input.box()).toEqual(['older']);
    await input.type(DOWN);
    expect(input.box()).toEqual(['newer', 'second line']);
    await input.type(DOWN);
    expect(input.box()).toEqual(['my', 'draft']);
    await input.type(ENTER);
    expect(input.submitted).toEqual(['my\ndraft']);
    await input.type(UP);
    expect(input.box()).toEqual(['my', 'draft']);
  });
});

describe('PromptInput: deleting', () => {
  it('deletes back and forward, to the line start, to the line end and a word back', async () => {
    const input = await mount();
    await input.type('abcdef', LEFT, LEFT, BACKSPACE, DELETE);
    expect(input.box()).toEqual(['abcf']);
    await input.type(CTRL_E, CTRL_U, 'one two three', ALT_ENTER, 'four five');
    await input.type(CTRL_W);
    expect(input.box()).toEqual(['one two three', 'four']);
    await input.type(HOME, RIGHT, RIGHT, CTRL_K);
    expect(input.box()).toEqual(['one two three', 'fo']);
    await input.type(UP, CTRL_E, ALT_BACKSPACE);
    expect(input.box()).toEqual(['one two', 'fo']);
    await input.type(CTRL_U);
    expect(input.box()).toEqual(['', 'fo']);
    await input.type(ENTER);
    expect(input.submitted).toEqual(['\nfo']);
  });
});

describe('PromptInput: characters beyond ASCII', () => {
  it('moves over and deletes a character as a person sees it: emoji with modifiers, combining marks, pairs', async () => {
    const input = await mount();
    await input.type('a👍🏽b', LEFT, LEFT, 'X');
    expect(input.box()).toEqual(['aX👍🏽b']);
    await input.type(RIGHT, BACKSPACE);
    expect(input.box()).toEqual(['aXb']);
    await input.type(CTRL_E, CTRL_U, 'e\u0301t👨‍👩‍👧', BACKSPACE, HOME, DELETE);
    await input.type(ENTER);
    expect(input.submitted).toEqual(['t']);
  });
});

describe('PromptInput: Ctrl-C and Ctrl-D', () => {
  it('Ctrl-C empties a buffer first, and only on an empty one is the app told', async () => {
    const input = await mount();
    await input.type('half written', CTRL_C);
    expect(input.box()).toEqual(['Ask anything']);
    expect(input.interrupts).toBe(0);
    await input.type(CTRL_C);
    expect(input.interrupts).toBe(1);
    expect(input.submitted).toEqual([]);
  });

  it('Ctrl-D leaves on an empty buffer and deletes forward otherwise', async () => {
    const input = await mount();
    await input.type('ab', LEFT, CTRL_D);
    expect(input.box()).toEqual(['a']);
    expect(input.exits).toBe(0);
    await input.type(BACKSPACE, CTRL_D);
    expect(input.exits).toBe(1);
  });
});

describe('PromptInput: focus', () => {
  it('ignores keys and pastes while not active, and takes them again when it is', async () => {
    const input = await mount({ active: false });
    await input.type('ignored', paste('also ignored'), ENTER);
    expect(input.box()).toEqual(['Ask anything']);
    expect(input.cursor()).toBeUndefined();
    input.rerender({ active: true });
    await settle();
    await input.type('now', ENTER);
    expect(input.submitted).toEqual(['now']);
  });
});

describe('PromptInput: wrapping', () => {
  it('wraps a long line at the width and wraps it again when the terminal is resized', async () => {
    const input = await mount();
    const text = 'x'.repeat(150);
    await input.type(text);
    // 100 columns: 2 for the border, 2 for the prompt, 96 for the text.
    expect(input.box()).toEqual(['x'.repeat(96), 'x'.repeat(54)]);
    await input.resize(40);
    await until(() =>
      expect(input.box()).toEqual(['x'.repeat(36), 'x'.repeat(36), 'x'.repeat(36), 'x'.repeat(36), 'x'.repeat(6)]),
    );
    for (const line of input.lines()) expect([...line].length).toBeLessThanOrEqual(40);
    await input.type(ENTER);
    expect(input.submitted).toEqual([text]);
  });

  it('wraps at the width of the column the app gives it, not the terminal’s', async () => {
    const input = await mount({}, (element) => (
      <Box paddingLeft={10} paddingRight={20}>
        {element}
      </Box>
    ));
    // 100 columns less 30 of padding, 2 of border and 2 of prompt: 66 cells a row.
    await input.type('z'.repeat(100));
    await until(() => expect(input.box()).toEqual(['z'.repeat(66), 'z'.repeat(34)]));
    await input.type(UP, 'A');
    expect(input.box()).toEqual([`${'z'.repeat(34)}A${'z'.repeat(31)}`, 'z'.repeat(35)]);
  });

  it('puts the cursor on a new row after a full one, and counts wide characters as two cells', async () => {
    const input = await mount();
    await input.resize(12);
    await until(() => expect(input.lines()[0]).toBe('╭──────────╮'));
    await input.type('abcdefgh');
    expect(input.box()).toEqual(['abcdefgh', '']);
    expect(input.cursor()).toEqual({ row: 1, column: 0, cell: ' ' });
    await input.type(CTRL_U, '漢字かな漢字');
    expect(input.box()).toEqual(['漢字かな', '漢字']);
  });

  it('shows at most a window of rows around the cursor in a long buffer', async () => {
    const input = await mount();
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i}`);
    await input.type(paste(lines.join('\n')));
    const box = input.box();
    expect(box.length).toBeLessThanOrEqual(14);
    expect(box.at(-1)).toBe('line 39');
    expect(box[0]).toBe('↑ more above');
    await input.type(UP.repeat(1), HOME);
    for (let i = 0; i < 30; i++) await input.type(UP);
    expect(input.box()).toContain('line 8');
    expect(input.box()).toContain('↓ more below');
  });
});

describe('PromptInput: paste and hostile input', () => {
  it('inserts a bracketed paste whole, line endings made \\n, tabs kept, controls dropped, and never sends it', async () => {
    const input = await mount();
    await input.type('> ', paste(`one\r\ntwo\rthree\tcol${ESC}[31m\u0007\u0000 end\n`));
    expect(input.submitted).toEqual([]);
    expect(input.box()).toEqual(['> one', 'two', 'three    col end', '']);
    await input.type(BACKSPACE, ENTER);
    expect(input.submitted).toEqual(['> one\ntwo\nthree\tcol end']);
  });

  it('sends all three lines of a pasted text with the next Enter', async () => {
    const input = await mount();
    await input.type(paste('a\nb\nc'), ENTER);
    expect(input.submitted).toEqual(['a\nb\nc']);
  });

  it('keeps the indentation and spacing of pasted code as it is shown', async () => {
    const input = await mount();
    await input.resize(20);
    await until(() => expect(input.lines()[0]).toHaveLength(20));
    await input.type(paste('def f():\n    return  1\n\n  x = "a     b     c"'));
    // 16 cells of text a row: the long line breaks inside its spaces, none of them lost.
    expect(input.box()).toEqual(['def f():', '    return  1', '', '  x = "a     b', '   c"']);
    await input.type(ENTER);
    expect(input.submitted).toEqual(['def f():\n    return  1\n\n  x = "a     b     c"']);
  });

  it('keeps typed escape sequences, controls and direction overrides out of the buffer and off the screen', async () => {
    const input = await mount();
    const hostile = [
      `${ESC}]52;c;aGVsbG8=\u0007`,
      `${ESC}]8;;http://x${ESC}\\`,
      '\u009b31m',
      'a\u202eb',
      `${ESC}[2J`,
      'c\u0007',
    ];
    await input.type(...hostile);
    const frame = input.frame();
    // Only colour sequences of the input's own are drawn; nothing else that a terminal obeys.
    expect(frame.replace(SGR, '')).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    await input.type(ENTER);
    expect(input.submitted).toHaveLength(1);
    expect(input.submitted[0]).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(input.submitted[0]).toContain('ab');
  });

  it('shows a hostile paste safely', async () => {
    const input = await mount();
    await input.type(paste(`${ESC}[2J${ESC}]0;title\u0007\u009b1mx\u202ey`));
    expect(input.frame().replace(SGR, '')).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    await input.type(ENTER);
    expect(input.submitted).toEqual(['xy']);
  });

  it('takes a 100 KB paste whole and stays quick to type in', async () => {
    const input = await mount();
    const big = Array.from({ length: 2000 }, (_, i) => `${i} ${'y'.repeat(45)}`).join('\n');
    expect(big.length).toBeGreaterThan(100_000);
    // As a terminal delivers it: in reads of 4 KiB, the end marker in the last one.
    const whole = paste(big);
    const chunks = Array.from({ length: Math.ceil(whole.length / 4096) }, (_, i) =>
      whole.slice(i * 4096, (i + 1) * 4096),
    );
    const started = performance.now();
    await input.type(...chunks);
    const pasted = performance.now() - started;
    expect(input.submitted).toEqual([]);
    expect(input.box().length).toBeLessThanOrEqual(14);
    expect(input.box()).toContain(`1999 ${'y'.repeat(45)}`);
    const typing = performance.now();
    await input.type('!', LEFT, 'z', UP, HOME);
    const typed = performance.now() - typing;
    // Generous bounds for a loaded machine; drawing every row would take seconds.
    expect(pasted).toBeLessThan(1500);
    expect(typed).toBeLessThan(1500);
    await input.type(ENTER);
    expect(input.submitted).toEqual([`${big}z!`]);
  });

  it('takes a long paste on one line without a break', async () => {
    const input = await mount();
    const line = 'w'.repeat(100_000);
    await input.type(paste(line), 'e', ENTER);
    expect(input.submitted).toEqual([`${line}e`]);
  });
});

describe('PromptInput: completion', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'prompt-complete-'));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  const commands = [
    { name: 'help', help: 'what the commands do' },
    { name: 'history', help: 'earlier messages' },
    { name: 'quit', help: 'leave the chat' },
  ];

  it('completes a slash command, lists the several that match, and hides the list on Esc or typing', async () => {
    const input = await mount({ complete: createCompleter({ commands, root }) });
    await input.type('/q', TAB);
    await until(() => expect(input.box()).toEqual(['/quit']));
    await input.type(CTRL_U, '/h', TAB);
    const listed = () => input.lines().filter((line) => !/^[│╭╰]/.test(line));
    await until(() => expect(listed()).toEqual(['  /help  what the commands do', '  /history  earlier messages']));
    expect(input.box()).toEqual(['/h']);
    await input.type(ESC);
    await escapeDelay();
    expect(listed()).toEqual([]);
    await input.type(TAB);
    await until(() => expect(listed()).toHaveLength(2));
    await input.type('e');
    expect(listed()).toEqual([]);
    await input.type(TAB);
    await until(() => expect(input.box()).toEqual(['/help']));
  });

  it('completes paths in the workspace, with at most ten listed and the rest counted', async () => {
    mkdirSync(join(root, 'src'));
    for (let i = 0; i < 13; i++) writeFileSync(join(root, 'src', `file-${String(i).padStart(2, '0')}.ts`), '');
    const input = await mount({ complete: createCompleter({ commands, root }) });
    await input.type('look at sr', TAB);
    await until(() => expect(input.box()).toEqual(['look at src/']));
    await input.type(TAB);
    await until(() => expect(input.box()).toEqual(['look at src/file-']));
    const listed = input.lines().filter((line) => !/^[│╭╰]/.test(line));
    expect(listed).toHaveLength(11);
    expect(listed[0]).toBe('  file-00.ts');
    expect(listed[10]).toBe('  +3 more');
    // Tab typed in the same chunk as the text before it still completes.
    await input.type(CTRL_U, 'look at sr\t');
    await until(() => expect(input.box()).toEqual(['look at src/']));
  });

  it('drops a completion that arrives after the text changed', async () => {
    let finish: () => void = () => undefined;
    const slow: Completer = (text, cursor) =>
      new Promise((resolve) => {
        finish = () => resolve({ from: 0, to: cursor, insert: `${text}-completed`, candidates: [] });
      });
    const input = await mount({ complete: slow });
    await input.type('ab', TAB, 'c');
    finish();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(input.box()).toEqual(['abc']);
    await input.type(TAB);
    finish();
    await until(() => expect(input.box()).toEqual(['abc-completed']));
  });
});

describe('PromptInput: history on disk', () => {
  it('adds what is sent to the history file, and a second run recalls it with Up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prompt-history-'));
    try {
      const file = join(dir, 'history.jsonl');
      const first = await mount({ history: new InputHistory(file) });
      await first.type(paste('two\nlines'), ENTER);
      expect(readFileSync(file, 'utf8')).toBe('"two\\nlines"\n');
      first.unmount();
      const second = await mount({ history: new InputHistory(file) });
      await second.type(UP);
      expect(second.box()).toEqual(['two', 'lines']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('recalls an entry of a hostile history file cleaned, as typed text would be', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prompt-history-'));
    try {
      const file = join(dir, 'history.jsonl');
      writeFileSync(file, JSON.stringify(`${ESC}]52;c;aGk=\u0007echo${ESC}[2J hi\u202e\r\nthere\u009b1m`) + '\n');
      const input = await mount({ history: new InputHistory(file) });
      await input.type(UP);
      expect(input.frame().replace(SGR, '')).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
      expect(input.box()).toEqual(['echo hi', 'there']);
      await input.type(ENTER);
      expect(input.submitted).toEqual(['echo hi\nthere']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
