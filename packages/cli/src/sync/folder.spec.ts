import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  contentHash,
  EntryFileError,
  localChanges,
  newState,
  parseEntryYaml,
  readState,
  storeEntry,
  writeAtomic,
  type FolderState,
} from './folder.js';

describe('an entry file', () => {
  it('reads spec and labels; labels left out are none', () => {
    expect(parseEntryYaml('spec:\n  gate: manual\n', 'profile/p.yaml')).toEqual({
      spec: { gate: 'manual' },
      labels: {},
    });
    expect(parseEntryYaml('{"spec": {"a": 1}, "labels": {"team": "x"}}', 'tool/t.yaml')).toEqual({
      spec: { a: 1 },
      labels: { team: 'x' },
    });
  });

  it.each([
    ['spec: [unclosed\n', undefined, /^not valid YAML/],
    ['- a\n- b\n', undefined, /must be a mapping with spec/],
    ['spec: {}\nrevision: 3\n', 'revision', /is not a field of an entry file/],
    ['labels: {}\n', 'spec', /must be a mapping/],
    ['spec: 42\n', 'spec', /must be a mapping/],
    ['spec: {}\nlabels: [a]\n', 'labels', /must be a mapping of label names/],
  ])('refuses %j naming %s', (text, field, problem) => {
    let caught: unknown;
    try {
      parseEntryYaml(text, 'skill/s.yaml');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(EntryFileError);
    expect((caught as EntryFileError).file).toBe('skill/s.yaml');
    expect((caught as EntryFileError).field).toBe(field);
    expect((caught as EntryFileError).problem).toMatch(problem);
  });

  it('hashes content, not key order', () => {
    const a = contentHash({ spec: { x: 1, y: { b: 2, a: [1, { d: 1, c: 2 }] } }, labels: { k: 'v' } });
    const b = contentHash({ labels: { k: 'v' }, spec: { y: { a: [1, { c: 2, d: 1 }], b: 2 }, x: 1 } });
    expect(a).toBe(b);
    expect(contentHash({ spec: { x: 1 }, labels: {} })).not.toBe(contentHash({ spec: { x: 2 }, labels: {} }));
  });
});

describe('a registry folder on disk', () => {
  let dir: string;
  let state: FolderState;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cleveragents-folder-'));
    state = newState('http://server', 'acme');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('writes a file whole through a temporary file, leaving nothing else behind', async () => {
    const path = join(dir, 'read_file.yaml');
    await writeAtomic(path, 'first\n'.repeat(1000));
    await writeAtomic(path, 'second\n');
    expect(await readFile(path, 'utf8')).toBe('second\n');
    expect(await readdir(dir)).toEqual(['read_file.yaml']);
  });

  it('lists changes by content: reformatted is unchanged, unparseable is modified, new and removed files', async () => {
    await storeEntry(dir, state, { kind: 'tool', name: 'a' }, { spec: { description: 'A' }, labels: {} }, 3);
    await storeEntry(dir, state, { kind: 'tool', name: 'b' }, { spec: { description: 'B' }, labels: {} }, 1);
    await storeEntry(dir, state, { kind: 'skill', name: 'c' }, { spec: { description: 'C' }, labels: {} }, 2);
    await storeEntry(dir, state, { kind: 'skill', name: 'd' }, { spec: { description: 'D' }, labels: {} }, 5);
    expect(await localChanges(dir, state)).toEqual([]);

    await writeFile(join(dir, 'tool/a.yaml'), '# a comment\n{"labels": {}, "spec": {"description": "A"}}\n');
    await writeFile(join(dir, 'tool/b.yaml'), 'spec: [broken\n');
    await rm(join(dir, 'skill/c.yaml'));
    await writeFile(join(dir, 'skill/d.yaml'), 'spec:\n  description: D, edited\n');
    await mkdir(join(dir, 'actor'));
    await writeFile(join(dir, 'actor/new.yaml'), 'spec:\n  localGraph: orchestrator\n');
    // Not entries: another extension, a hidden (temporary) file, a folder of no kind.
    await writeFile(join(dir, 'actor/notes.txt'), 'x');
    await writeFile(join(dir, 'actor/.new.yaml.tmp'), 'x');
    await mkdir(join(dir, 'other'));
    await writeFile(join(dir, 'other/x.yaml'), 'spec: {}\n');

    expect(await localChanges(dir, state)).toEqual([
      { kind: 'actor', name: 'new', state: 'added', file: 'actor/new.yaml', baseRevision: 0 },
      { kind: 'skill', name: 'c', state: 'deleted', file: 'skill/c.yaml', baseRevision: 2 },
      { kind: 'skill', name: 'd', state: 'modified', file: 'skill/d.yaml', baseRevision: 5 },
      { kind: 'tool', name: 'b', state: 'modified', file: 'tool/b.yaml', baseRevision: 1 },
    ]);
  });
});

describe('a folder state as a clone may carry it', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cleveragents-state-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it.each([
    ['tool/../../victim', /entries "tool\/..\/..\/victim": name/],
    ['../x', /entries "..\/x": kind/],
    ['tool/a\u0000', /entries "tool\/a\\u\{0\}": name/],
  ])('refuses the entry key %j by name, before it becomes a path', async (key, message) => {
    const state = { ...newState('http://server', 'acme'), entries: { [key]: { revision: 1, hash: 'h' } } };
    await writeFile(join(dir, '.cleveragents-sync.json'), JSON.stringify(state));
    await expect(readState(dir)).rejects.toThrow(message);
  });

  it('reads a state whose keys are registry names', async () => {
    const state = { ...newState('http://server', 'acme'), entries: { 'tool/read_file': { revision: 1, hash: 'h' } } };
    await writeFile(join(dir, '.cleveragents-sync.json'), JSON.stringify(state));
    expect(await readState(dir)).toEqual(state);
  });
});
