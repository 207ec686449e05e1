import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

/*
 * A CommonJS script run with a V8 code cache of its own: the server's bundle on a Node without a compile
 * cache (Node 20; Node >= 22.1 has module.enableCompileCache, which main.ts turns on instead).
 *
 * Compiling the bundle (3.4 MB) and then each function it calls at start is some 150 ms of CPU on every
 * start. V8 can instead deserialize code it compiled before: the first start, once it serves, writes the
 * code it compiled so far (its bytecode, the functions the start ran included) to a file; a later start
 * hands that to V8 with the source. V8 checks its own version, flags and the source's length and rejects
 * a cache that does not fit (`cachedDataRejected`), but not the source's content: the file therefore opens
 * with a digest of the source (and Node's version and the wrapper below), and one that does not match
 * is never handed to V8. A rejected or missing cache is (re)written when the start serves.
 *
 * Where: NODE_COMPILE_CACHE if set, else <tmpdir>/node-compile-cache, Node's own place for the same thing
 * (Node >= 22.1), in a folder of its own; NODE_DISABLE_COMPILE_CACHE=1 turns it off, as it does Node's.
 * One file per script path. A folder that cannot be read or written costs the cache, never the start.
 *
 * The cache is code V8 runs unchecked, and the temporary folder may be shared with other users: a cache
 * file is used only when it is a regular file (no link followed) owned by this process's user and
 * writable by nobody else, and it is written as such (folder 0700, file 0600, created anew, never
 * through a link another user left there).
 */

/** Function wrapper of the script, on the first line so that line numbers hold: Node's CommonJS one. */
const WRAPPER = '(function (exports, require, module, __filename, __dirname) { ';
const DIGEST_BYTES = 32;

/** The cache file's bytes, when it is one only this user could have written; undefined otherwise. */
function readPrivateFile(path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined; // none yet, a link, or not readable
  }
  try {
    const stats = fstatSync(fd);
    const uid = process.getuid?.();
    if (!stats.isFile()) return undefined;
    if (uid !== undefined && (stats.uid !== uid || (stats.mode & 0o022) !== 0)) return undefined;
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

function writeAll(fd: number, data: Uint8Array): void {
  for (let offset = 0; offset < data.length;) offset += writeSync(fd, data, offset);
}

/** The cache file for `file` under the environment's compile-cache folder; undefined when turned off. */
export function codeCachePath(file: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const dir = env.NODE_COMPILE_CACHE || join(tmpdir(), 'node-compile-cache');
  const name = createHash('sha256').update(file).digest('hex').slice(0, 16);
  return join(dir, 'cleveragents-script', `${name}.v8cache`);
}

/** What runCachedScript found of the cache, for a caller that reports it (tests). */
export type CodeCacheState = 'none' | 'accepted' | 'stale' | 'rejected';

export interface CachedScriptRun {
  /** The script's module.exports. */
  exports: unknown;
  cache: CodeCacheState;
  /**
   * Writes the code compiled so far to the cache file, unless the cache was accepted; call it once the
   * work worth caching (the start) is done. Never throws.
   */
  keepCompiledCode(): void;
}

/** Runs the CommonJS script `file` as Node would, compiled from the cache at `cachePath` when it fits. */
export function runCachedScript(file: string, cachePath: string | undefined): CachedScriptRun {
  // latin1: a one-byte string read as is (esbuild writes ASCII), no UTF-8 decoding of 3.4 MB.
  const text = readFileSync(file);
  const source = text.toString(isAscii(text) ? 'latin1' : 'utf8');
  const digest = createHash('sha256').update(process.version).update(WRAPPER).update(text).digest();
  let cachedData: Buffer | undefined;
  let cache: CodeCacheState = 'none';
  const stored = cachePath ? readPrivateFile(cachePath) : undefined;
  if (stored !== undefined) {
    if (stored.length > DIGEST_BYTES && stored.subarray(0, DIGEST_BYTES).equals(digest)) {
      cachedData = stored.subarray(DIGEST_BYTES);
    } else cache = 'stale';
  }
  const script = new Script(`${WRAPPER}${source}\n})`, { filename: file, cachedData });
  if (cachedData) cache = script.cachedDataRejected ? 'rejected' : 'accepted';
  const module = { exports: {} as unknown };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  let kept = cache === 'accepted';
  return {
    exports: module.exports,
    cache,
    keepCompiledCode() {
      if (kept || !cachePath) return;
      kept = true;
      const temporary = `${cachePath}.${process.pid}.tmp`;
      try {
        mkdirSync(dirname(cachePath), { recursive: true, mode: 0o700 });
        // Opened first: where nothing can be written, the code is not serialized for nothing. Created anew
        // (a link left at that name is not followed), readable by this user only.
        const fd = openSync(temporary, 'wx', 0o600);
        try {
          writeAll(fd, digest);
          writeAll(fd, script.createCachedData());
        } finally {
          closeSync(fd);
        }
        // Whole or not at all for a start reading it meanwhile.
        renameSync(temporary, cachePath);
      } catch {
        try {
          rmSync(temporary, { force: true });
        } catch {
          /* the folder is not ours to write */
        }
      }
    },
  };
}
