import { afterAll, describe, expect, it } from '@jest/globals';
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codeCachePath, runCachedScript } from './code-cache.js';

const dir = mkdtempSync(join(tmpdir(), 'code-cache-spec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let scripts = 0;
/** A CommonJS script of its own (the same length for any one-character `mark`), and a cache path for it. */
function script(mark: string): { file: string; cache: string } {
  const file = join(dir, `script-${++scripts}.js`);
  const body = `'use strict';\nfunction add(a, b) { return a + b; }\nmodule.exports = { mark: '${mark}', sum: add(2, 3), file: __filename, required: typeof require('node:path').join };\n`;
  writeFileSync(file, body);
  return { file, cache: join(dir, 'cache', `script-${scripts}.v8cache`) };
}

/**
 * The same script and its cache under another name: V8 keeps what it compiled per isolate, by source and
 * name, and would answer a second compilation of the same file from there without reading the cache.
 */
function copied(original: { file: string; cache: string }, cacheBytes?: Buffer): { file: string; cache: string } {
  const copy = script('a');
  writeFileSync(copy.file, readFileSync(original.file));
  writeFileSync(copy.cache, cacheBytes ?? readFileSync(original.cache));
  return copy;
}

describe('runCachedScript', () => {
  it('runs the script as Node would, then reads back the cache it wrote', () => {
    const { file, cache } = script('a');
    const first = runCachedScript(file, cache);
    expect(first.cache).toBe('none');
    expect(first.exports).toEqual({ mark: 'a', sum: 5, file, required: 'function' });
    first.keepCompiledCode();
    expect(statSync(cache).size).toBeGreaterThan(32);

    const copy = copied({ file, cache });
    const second = runCachedScript(copy.file, copy.cache);
    expect(second.cache).toBe('accepted');
    expect(second.exports).toEqual({ mark: 'a', sum: 5, file: copy.file, required: 'function' });
    const written = statSync(copy.cache).mtimeMs;
    second.keepCompiledCode();
    expect(statSync(copy.cache).mtimeMs).toBe(written);
  });

  it('never hands V8 the cache of another source of the same length, and replaces it', () => {
    const { file, cache } = script('a');
    runCachedScript(file, cache).keepCompiledCode();
    // V8 would take this cache for the new source (it checks the length only): the digest does not.
    writeFileSync(file, readFileSync(file, 'utf8').replace("mark: 'a'", "mark: 'b'"));
    const changed = runCachedScript(file, cache);
    expect(changed.cache).toBe('stale');
    expect(changed.exports).toMatchObject({ mark: 'b' });
    changed.keepCompiledCode();
    const again = copied({ file, cache });
    expect(runCachedScript(again.file, again.cache)).toMatchObject({ cache: 'accepted', exports: { mark: 'b' } });
  });

  it('runs from source when V8 rejects the cache, and replaces it', () => {
    const original = script('a');
    runCachedScript(original.file, original.cache).keepCompiledCode();
    const stored = readFileSync(original.cache);
    // The digest still fits; V8's own header (its version hash, after the magic number) does not.
    for (let i = 32 + 4; i < 32 + 8; i++) stored[i] ^= 0xff;
    const { file, cache } = copied(original, stored);
    const rejected = runCachedScript(file, cache);
    expect(rejected.cache).toBe('rejected');
    expect(rejected.exports).toMatchObject({ mark: 'a', sum: 5 });
    rejected.keepCompiledCode();
    const again = copied({ file, cache });
    expect(runCachedScript(again.file, again.cache).cache).toBe('accepted');
  });

  it("reads only its own user's cache file that nobody else can write, and never through a link", () => {
    const original = script('a');
    runCachedScript(original.file, original.cache).keepCompiledCode();
    expect(statSync(original.cache).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'cache')).mode & 0o777).toBe(0o700);
    const fine = copied(original);
    expect(runCachedScript(fine.file, fine.cache).cache).toBe('accepted');

    const writable = copied(original);
    chmodSync(writable.cache, 0o666);
    expect(runCachedScript(writable.file, writable.cache)).toMatchObject({ cache: 'none', exports: { mark: 'a' } });

    const linked = copied(original);
    rmSync(linked.cache);
    symlinkSync(original.cache, linked.cache);
    const before = readFileSync(original.cache);
    const run = runCachedScript(linked.file, linked.cache);
    expect(run.cache).toBe('none');
    // Written in the link's place, not through it.
    run.keepCompiledCode();
    expect(lstatSync(linked.cache).isSymbolicLink()).toBe(false);
    expect(readFileSync(original.cache).equals(before)).toBe(true);

    if (process.getuid?.() === 0) {
      // Another user's file (root can make one): not read, whatever it holds.
      const foreign = copied(original);
      chownSync(foreign.cache, 12345, 12345);
      expect(runCachedScript(foreign.file, foreign.cache).cache).toBe('none');
    }
  });

  it('starts all the same where the cache cannot be written or read', () => {
    const { file } = script('a');
    const notAFolder = join(dir, 'plain-file');
    writeFileSync(notAFolder, 'not a folder');
    const cache = join(notAFolder, 'cache', 'x.v8cache');
    const run = runCachedScript(file, cache);
    expect(run).toMatchObject({ cache: 'none', exports: { mark: 'a', sum: 5 } });
    expect(() => run.keepCompiledCode()).not.toThrow();
    expect(runCachedScript(file, undefined)).toMatchObject({ cache: 'none', exports: { mark: 'a' } });
  });
});

describe('codeCachePath', () => {
  it("follows Node's compile-cache settings", () => {
    expect(codeCachePath('/x/server.js', { NODE_DISABLE_COMPILE_CACHE: '1' })).toBeUndefined();
    expect(codeCachePath('/x/server.js', { NODE_COMPILE_CACHE: '/var/cache/node' })).toMatch(
      /^\/var\/cache\/node\/cleveragents-script\/[0-9a-f]{16}\.v8cache$/,
    );
    expect(codeCachePath('/x/server.js', {})).toMatch(new RegExp(`^${tmpdir()}/node-compile-cache/`));
    expect(codeCachePath('/x/server.js', {})).not.toBe(codeCachePath('/y/server.js', {}));
  });
});
