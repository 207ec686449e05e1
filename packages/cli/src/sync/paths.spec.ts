import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  EntryFileError,
  entryPath,
  keyProblem,
  quoted,
  readBounded,
  removeEntryFile,
  writeEntryText,
} from './paths.js';

/* The folder's paths on a real disk: the grammar of names, links refused, reads bounded. */

describe('the names a folder takes', () => {
  it.each([
    ['tool', 'read_file'],
    ['actor', 'default'],
    ['profile', 'a-1'],
    ['skill', 'x'.repeat(64)],
  ])('%s/%s is a file of the folder', (kind, name) => {
    expect(keyProblem(kind, name)).toBeUndefined();
    expect(entryPath('/f', kind, name)).toBe(`/f/${kind}/${name}.yaml`);
  });

  it.each([
    ['tool', '../x', 'name'],
    ['tool', '/abs', 'name'],
    ['tool', 'a/../../b', 'name'],
    ['tool', 'a\u0000b', 'name'],
    ['tool', 'a\\b', 'name'],
    ['tool', '..', 'name'],
    ['tool', '', 'name'],
    ['tool', 'Upper', 'name'],
    ['tool', 'x'.repeat(65), 'name'],
    ['tool', 42, 'name'],
    ['secrets', 'x', 'kind'],
    ['../tool', 'x', 'kind'],
    [undefined, 'x', 'kind'],
  ])('%j/%j is refused naming its %s', (kind, name, field) => {
    expect(keyProblem(kind, name)?.field).toBe(field);
    expect(() => entryPath('/f', kind as string, name as string)).toThrow(EntryFileError);
  });

  it('quotes an untrusted value with every control and direction character escaped, cut short', () => {
    expect(quoted('a\u001b[2Jb\u202e"\\')).toBe('"a\\u{1b}[2Jb\\u{202e}\\"\\\\"');
    expect(quoted('x'.repeat(100))).toBe(`"${'x'.repeat(80)}"...`);
    expect(quoted(7)).toBe('"7"');
  });
});

describe('files of a folder on disk', () => {
  let root: string;
  let dir: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'cleveragents-paths-'));
    dir = join(root, 'folder');
    await mkdir(join(root, 'outside'), { recursive: true });
    await writeFile(join(root, 'outside', 'secret.yaml'), 'spec: {}\n');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('writes and removes an entry inside its kind directory, made on first use', async () => {
    await writeEntryText(dir, 'tool', 'a', 'spec: {}\n');
    expect(await readFile(join(dir, 'tool', 'a.yaml'), 'utf8')).toBe('spec: {}\n');
    await removeEntryFile(dir, 'tool', 'a');
    expect(existsSync(join(dir, 'tool', 'a.yaml'))).toBe(false);
  });

  it('a kind directory that is a link is refused for writes and removals; what it leads to stays', async () => {
    await mkdir(dir);
    await symlink(join(root, 'outside'), join(dir, 'tool'));
    await expect(writeEntryText(dir, 'tool', 'new', 'spec: {}\n')).rejects.toThrow('tool/: is a symbolic link');
    await expect(removeEntryFile(dir, 'tool', 'secret')).rejects.toThrow('tool/: is a symbolic link');
    expect(existsSync(join(root, 'outside', 'new.yaml'))).toBe(false);
    expect(existsSync(join(root, 'outside', 'secret.yaml'))).toBe(true);
  });

  it('an entry file that is a link is not read; removing it removes the link, not its target', async () => {
    await mkdir(join(dir, 'tool'), { recursive: true });
    await symlink(join(root, 'outside', 'secret.yaml'), join(dir, 'tool', 'leak.yaml'));
    await expect(readBounded(join(dir, 'tool', 'leak.yaml'), 'tool/leak.yaml', 1024)).rejects.toThrow(
      'tool/leak.yaml: is a symbolic link',
    );
    await removeEntryFile(dir, 'tool', 'leak');
    expect(existsSync(join(dir, 'tool', 'leak.yaml'))).toBe(false);
    expect(existsSync(join(root, 'outside', 'secret.yaml'))).toBe(true);
  });

  it('a write over an entry file that is a link replaces the link, leaving its target', async () => {
    await mkdir(join(dir, 'tool'), { recursive: true });
    await symlink(join(root, 'outside', 'secret.yaml'), join(dir, 'tool', 'leak.yaml'));
    await writeEntryText(dir, 'tool', 'leak', 'spec: {mine: 1}\n');
    expect(await readFile(join(root, 'outside', 'secret.yaml'), 'utf8')).toBe('spec: {}\n');
    expect(await readFile(join(dir, 'tool', 'leak.yaml'), 'utf8')).toBe('spec: {mine: 1}\n');
  });

  it('a read is bounded by the open file’s size, before anything is read', async () => {
    const big = join(root, 'big.yaml');
    await writeFile(big, '');
    await truncate(big, 200 * 1024 * 1024);
    const started = performance.now();
    await expect(readBounded(big, 'tool/big.yaml', 1024 * 1024)).rejects.toThrow(
      'tool/big.yaml: is 209715200 bytes, more than the 1048576 bytes a registry file may hold',
    );
    expect(performance.now() - started).toBeLessThan(1000);
    await writeFile(big, 'x'.repeat(1024));
    expect(await readBounded(big, 'tool/big.yaml', 1024)).toBe('x'.repeat(1024));
    expect(await readBounded(join(root, 'none'), 'none', 1024)).toBeUndefined();
  });
});
