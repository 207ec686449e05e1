import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENTRY_LIMIT, createCompleter, type Completer, type Completion } from './complete.js';

/* Completion over a real temporary workspace, a folder beside it standing for the rest of the disk. */

let base: string;
let root: string;
let outside: string;
let complete: Completer;

const commands = [
  { name: 'help', help: 'what the commands do' },
  { name: '/history', help: 'earlier messages' },
  { name: 'quit', help: 'leave the chat' },
];

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'complete-'));
  root = join(base, 'workspace');
  outside = join(base, 'outside');
  mkdirSync(join(root, 'src', 'ui'), { recursive: true });
  mkdirSync(join(outside, 'secrets'), { recursive: true });
  writeFileSync(join(outside, 'secrets', 'key.pem'), '');
  writeFileSync(join(root, 'src', 'main.ts'), '');
  writeFileSync(join(root, 'src', 'mail.ts'), '');
  writeFileSync(join(root, 'README.md'), '');
  writeFileSync(join(root, '.env'), '');
  mkdirSync(join(root, '.git'));
  complete = createCompleter({ commands, root });
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

/** The text after applying a completion (what the input would show). */
function applied(text: string, completion: Completion | undefined): string | undefined {
  return completion && text.slice(0, completion.from) + completion.insert + text.slice(completion.to);
}

async function at(text: string, cursor = text.length): Promise<Completion | undefined> {
  return complete(text, cursor);
}

describe('slash commands', () => {
  it('completes one command whole, with a space after it', async () => {
    expect(applied('/q', await at('/q'))).toBe('/quit ');
    expect((await at('/q'))?.candidates).toEqual([]);
  });

  it('completes the common prefix of several and lists them with their help', async () => {
    const completion = await at('/h');
    expect(applied('/h', completion)).toBe('/h');
    expect(completion?.candidates).toEqual([
      { label: '/help', help: 'what the commands do' },
      { label: '/history', help: 'earlier messages' },
    ]);
    expect((await at('/'))?.candidates.map((c) => c.label)).toEqual(['/help', '/history', '/quit']);
  });

  it('offers nothing for an unknown command, and paths once the command has its argument', async () => {
    expect(await at('/nope')).toBeUndefined();
    expect(applied('/help REA', await at('/help REA'))).toBe('/help README.md');
  });
});

describe('paths in the workspace', () => {
  it('completes a file, a folder with a slash, and the common prefix of several', async () => {
    expect(applied('see READ', await at('see READ'))).toBe('see README.md');
    expect(applied('see sr', await at('see sr'))).toBe('see src/');
    const several = await at('see src/ma');
    expect(applied('see src/ma', several)).toBe('see src/mai');
    expect(several?.candidates.map((c) => c.label)).toEqual(['mail.ts', 'main.ts']);
    expect((await at('src/'))?.candidates.map((c) => c.label)).toEqual(['mail.ts', 'main.ts', 'ui/']);
  });

  it('completes the word before the cursor and keeps the text after it', async () => {
    const text = 'open sr and more';
    expect(applied(text, await at(text, 'open sr'.length))).toBe('open src/ and more');
  });

  it('writes a space in a name as `\\ ` and reads it back so', async () => {
    mkdirSync(join(root, 'two words'));
    writeFileSync(join(root, 'two words', 'my notes.txt'), '');
    expect(applied('read tw', await at('read tw'))).toBe('read two\\ words/');
    expect(applied('read two\\ words/my', await at('read two\\ words/my'))).toBe('read two\\ words/my\\ notes.txt');
    expect((await at('two\\ words/'))?.insert).toBe('two\\ words/my\\ notes.txt');
  });

  it('offers hidden names only for a prefix starting with a dot', async () => {
    expect((await at(''))?.candidates.map((c) => c.label)).toEqual(['README.md', 'src/']);
    expect((await at('.'))?.candidates.map((c) => c.label)).toEqual(['.env', '.git/']);
  });

  it('never lists above the workspace: no climbing with .., no absolute path outside, no home', async () => {
    expect(await at('../')).toBeUndefined();
    expect(await at('src/../../outside/')).toBeUndefined();
    expect(await at(`${outside}/`)).toBeUndefined();
    expect(await at('/etc/pas')).toBeUndefined();
    expect(await at('~/')).toBeUndefined();
    // Climbing that stays inside, and an absolute path inside, are fine.
    expect(applied('src/../READ', await at('src/../READ'))).toBe('src/../README.md');
    expect(applied(`${root}/READ`, await at(`${root}/READ`))).toBe(`${root}/README.md`);
  });

  it('does not follow a link out of the workspace', async () => {
    symlinkSync(join(outside, 'secrets'), join(root, 'linked'));
    symlinkSync(join(root, 'src'), join(root, 'inner'));
    // The link's name may be completed, but not as a folder, and nothing is listed through it.
    expect(applied('linke', await at('linke'))).toBe('linked');
    expect(await at('linked/')).toBeUndefined();
    expect(await at('linked/k')).toBeUndefined();
    // A link to a folder inside the workspace is one.
    expect(applied('inne', await at('inne'))).toBe('inner/');
    expect((await at('inner/'))?.candidates.map((c) => c.label)).toEqual(['mail.ts', 'main.ts', 'ui/']);
  });

  it('does not follow a link to the workspace root’s parent either', async () => {
    symlinkSync(base, join(root, 'up'));
    expect(await at('up/')).toBeUndefined();
  });

  it('skips names holding controls or direction overrides', async () => {
    const hostile = ['evil\u001b]52;c;aGk=\u0007', 'evil\nname', 'evil\u202etxt.exe', 'evil\u009b31m', 'evil\u0008'];
    for (const name of hostile) writeFileSync(join(root, name), '');
    // A name that is not UTF-8 (read back with U+FFFD in it) could not be written back as it is.
    writeFileSync(Buffer.concat([Buffer.from(join(root, 'evil')), Buffer.from([0xff, 0xfe])]), '');
    writeFileSync(join(root, 'evil-but-fine.txt'), '');
    const completion = await at('evil');
    expect(applied('evil', completion)).toBe('evil-but-fine.txt');
    expect(completion?.candidates).toEqual([]);
  });

  it(`reads at most ${ENTRY_LIMIT} entries of a huge folder`, async () => {
    const huge = join(root, 'huge');
    mkdirSync(huge);
    for (let i = 0; i < ENTRY_LIMIT + 1000; i++) writeFileSync(join(huge, `f${i}`), '');
    const started = performance.now();
    const completion = await at('huge/f');
    expect(performance.now() - started).toBeLessThan(5000);
    expect(completion?.candidates.length).toBeLessThanOrEqual(ENTRY_LIMIT);
    expect(completion?.candidates.length).toBeGreaterThan(100);
  });

  it('offers nothing for a missing folder or a missing workspace', async () => {
    expect(await at('nowhere/')).toBeUndefined();
    expect(await at('zzz')).toBeUndefined();
    const gone = createCompleter({ commands, root: join(base, 'gone') });
    expect(await gone('src', 3)).toBeUndefined();
  });
});
