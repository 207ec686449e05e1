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

/**
 * A CommonJS script run with a V8 code cache of its own, for Nodes without a compile cache; verified by
 * digest, stored owner-only (docs/design-notes.md#v8-code-cache).
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
