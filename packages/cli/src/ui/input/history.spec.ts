import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENTRY_LIMIT, FILE_LIMIT, HISTORY_LIMIT, InputHistory, historyPath } from './history.js';

let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'history-'));
  file = join(dir, 'state', 'cleveragents', 'history.jsonl');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function lines(): string[] {
  return readFileSync(file, 'utf8').split('\n').slice(0, -1);
}

describe('historyPath', () => {
  it('is under XDG_STATE_HOME, else ~/.local/state, and nowhere when off', () => {
    expect(historyPath({ env: { XDG_STATE_HOME: '/s' }, home: '/h' })).toBe('/s/cleveragents/history.jsonl');
    expect(historyPath({ env: {}, home: '/h' })).toBe('/h/.local/state/cleveragents/history.jsonl');
    // A relative XDG_STATE_HOME is ignored, as the XDG spec says.
    expect(historyPath({ env: { XDG_STATE_HOME: 'rel' }, home: '/h' })).toBe(
      '/h/.local/state/cleveragents/history.jsonl',
    );
    expect(historyPath({ env: { CLEVERAGENTS_HISTORY: 'off', XDG_STATE_HOME: '/s' }, home: '/h' })).toBeUndefined();
  });
});

describe('InputHistory on disk', () => {
  it('keeps one JSON string a line, newest last, multi-line entries whole, in a 0600 file in a 0700 folder', () => {
    const history = new InputHistory(file);
    history.add('first');
    history.add('two\nlines\ttabbed');
    expect(lines()).toEqual(['"first"', '"two\\nlines\\ttabbed"']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'state', 'cleveragents')).mode & 0o777).toBe(0o700);
    expect(new InputHistory(file).list()).toEqual(['first', 'two\nlines\ttabbed']);
  });

  it('does not add a blank text or the same text twice in a row', () => {
    const history = new InputHistory(file);
    history.add('a');
    history.add('a');
    history.add('   ');
    history.add('b');
    history.add('a');
    expect(history.list()).toEqual(['a', 'b', 'a']);
    expect(lines()).toEqual(['"a"', '"b"', '"a"']);
  });

  it(`keeps the newest ${HISTORY_LIMIT}, trimming the file as it writes`, () => {
    mkdirSync(join(dir, 'state', 'cleveragents'), { recursive: true });
    writeFileSync(file, Array.from({ length: HISTORY_LIMIT }, (_, i) => JSON.stringify(`old ${i}`) + '\n').join(''));
    const history = new InputHistory(file);
    expect(history.list()).toHaveLength(HISTORY_LIMIT);
    history.add('new 1');
    history.add('new 2');
    expect(lines()).toHaveLength(HISTORY_LIMIT);
    expect(lines()[0]).toBe('"old 2"');
    expect(lines().at(-1)).toBe('"new 2"');
    expect(history.list()).toHaveLength(HISTORY_LIMIT);
    expect(history.list()[0]).toBe('old 2');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // No temporary file is left beside it.
    expect(readdirSync(join(dir, 'state', 'cleveragents'))).toEqual(['history.jsonl']);
  });

  it('keeps the file under its size limit, and a huge entry in memory only', () => {
    const history = new InputHistory(file);
    const big = (i: number) => `${i}`.padEnd(600_000, 'x');
    for (let i = 0; i < 8; i++) {
      history.add(big(i));
      expect(statSync(file).size).toBeLessThanOrEqual(FILE_LIMIT);
    }
    // Past the limit the oldest went, down to half of it.
    expect(lines().map((line) => (JSON.parse(line) as string).slice(0, 1))).toEqual(['4', '5', '6', '7']);
    expect(history.list()).toHaveLength(8);
    const huge = 'h'.repeat(ENTRY_LIMIT + 1);
    history.add(huge);
    expect(history.list().at(-1)).toBe(huge);
    expect(history.persistent).toBe(true);
    expect(lines()).toHaveLength(4);
    expect(new InputHistory(file).list()).toEqual([big(4), big(5), big(6), big(7)]);
  });

  it('skips corrupt lines and entries that are not strings', () => {
    mkdirSync(join(dir, 'state', 'cleveragents'), { recursive: true });
    writeFileSync(file, '"good"\n{not json\n42\n{"a":1}\n"trunc\n""\n"also good"\n');
    expect(new InputHistory(file).list()).toEqual(['good', 'also good']);
  });

  it('makes an existing file readable by its owner only', () => {
    mkdirSync(join(dir, 'state', 'cleveragents'), { recursive: true });
    writeFileSync(file, '"x"\n', { mode: 0o644 });
    chmodSync(file, 0o644);
    expect(new InputHistory(file).list()).toEqual(['x']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses a symbolic link at the path (not followed) and keeps the history in memory', () => {
    mkdirSync(join(dir, 'state', 'cleveragents'), { recursive: true });
    const target = join(dir, 'target');
    writeFileSync(target, '"secret"\n');
    symlinkSync(target, file);
    const history = new InputHistory(file);
    expect(history.list()).toEqual([]);
    expect(history.persistent).toBe(false);
    history.add('typed');
    expect(history.list()).toEqual(['typed']);
    expect(readFileSync(target, 'utf8')).toBe('"secret"\n');
    expect(lstatSync(file).isSymbolicLink()).toBe(true);
  });

  it('refuses a link created after start too: the write does not follow it', () => {
    const history = new InputHistory(file);
    mkdirSync(join(dir, 'state', 'cleveragents'), { recursive: true });
    const target = join(dir, 'target');
    writeFileSync(target, 'untouched');
    symlinkSync(target, file);
    history.add('typed');
    expect(readFileSync(target, 'utf8')).toBe('untouched');
    expect(history.persistent).toBe(false);
    expect(history.list()).toEqual(['typed']);
  });

  it('refuses a link in place of its folder, and makes its own folder 0700', () => {
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'history.jsonl'), '"planted"\n');
    mkdirSync(join(dir, 'state'));
    symlinkSync(elsewhere, join(dir, 'state', 'cleveragents'));
    const history = new InputHistory(file);
    expect(history.list()).toEqual([]);
    expect(history.persistent).toBe(false);
    history.add('typed');
    expect(readFileSync(join(elsewhere, 'history.jsonl'), 'utf8')).toBe('"planted"\n');

    const open = join(dir, 'open', 'cleveragents');
    mkdirSync(open, { recursive: true, mode: 0o755 });
    chmodSync(open, 0o755);
    new InputHistory(join(open, 'history.jsonl')).add('x');
    expect(statSync(open).mode & 0o777).toBe(0o700);
  });

  it('refuses a folder or a FIFO at the path without hanging', () => {
    mkdirSync(file, { recursive: true });
    const history = new InputHistory(file);
    expect(history.persistent).toBe(false);
    history.add('a');
    expect(history.list()).toEqual(['a']);

    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const overFifo = new InputHistory(fifo);
    expect(overFifo.persistent).toBe(false);
    overFifo.add('b');
    expect(overFifo.list()).toEqual(['b']);
  });

  it('goes on in memory when the file cannot be written', () => {
    // A file where the folder should be: mkdir fails whoever runs the test (root included).
    const history = new InputHistory(file);
    expect(history.persistent).toBe(true);
    writeFileSync(join(dir, 'state'), 'not a folder');
    expect(() => history.add('still works')).not.toThrow();
    expect(history.list()).toEqual(['still works']);
    expect(history.persistent).toBe(false);
    expect(() => history.add('and again')).not.toThrow();
    expect(history.list()).toEqual(['still works', 'and again']);
  });

  it('lets two runs over one file see each other’s earlier entries when they start', () => {
    const first = new InputHistory(file);
    first.add('from the first run');
    const second = new InputHistory(file);
    expect(second.list()).toEqual(['from the first run']);
    second.add('from the second run');
    first.add('first again');
    expect(new InputHistory(file).list()).toEqual(['from the first run', 'from the second run', 'first again']);
  });

  it('with CLEVERAGENTS_HISTORY=off writes nothing', () => {
    const history = InputHistory.open({
      env: { CLEVERAGENTS_HISTORY: 'off', XDG_STATE_HOME: join(dir, 'state') },
      home: dir,
    });
    history.add('kept in memory');
    expect(history.list()).toEqual(['kept in memory']);
    expect(history.persistent).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('InputHistory navigation', () => {
  it('walks back and forth, keeping the unsent draft, and starts over after a submit', () => {
    const history = new InputHistory(undefined);
    history.add('one');
    history.add('two');
    expect(history.next()).toBeUndefined();
    expect(history.previous('my draft')).toBe('two');
    expect(history.previous('two')).toBe('one');
    expect(history.previous('one')).toBeUndefined();
    expect(history.next()).toBe('two');
    expect(history.next()).toBe('my draft');
    expect(history.next()).toBeUndefined();
    expect(history.previous('my draft edited')).toBe('two');
    history.add('three');
    expect(history.previous('')).toBe('three');
    history.reset();
    expect(history.previous('x')).toBe('three');
  });
});
