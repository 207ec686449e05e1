import { existsSync, statSync } from 'node:fs';
import nodeModule, { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { codeCachePath, runCachedScript } from './common/code-cache.js';
import { DEFAULT_DATA_DIR } from './config/data-dir.js';
import { loadPgStreamForNode } from './database/pg-node-stream.js';

// Node >= 22.1 keeps compiled code on disk (NODE_COMPILE_CACHE, else <tmpdir>/node-compile-cache;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off). It covers only modules compiled after this call, hence
// this entry of its own that loads the server (server.ts) afterwards. Node 20 has none: there the
// bundle runs with a code cache of its own (below).
const enableCompileCache = (nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache;
enableCompileCache?.();

// `npm run build` bundles server.ts and what it imports into one CommonJS script, dist/bundle/server.js
// (scripts/bundle-server.mjs): one file for Node to read and compile at start instead of some two
// thousand modules. A build without that step (tsc alone) runs the compiled modules as they are, and so
// does a build whose last tsc run came after its bundle (tsc run again after `npm run build`; tsc writes
// its build info when it emits): a stale bundle is never run.
const bundle = fileURLToPath(new URL('./bundle/server.js', import.meta.url));
const lastTsc = new URL('./.tsbuildinfo/build.tsbuildinfo', import.meta.url);
const bundleCurrent =
  existsSync(bundle) && (!existsSync(lastTsc) || statSync(bundle).mtimeMs >= statSync(lastTsc).mtimeMs);

// Before anything imports pg: on Node 20 its socket module would otherwise load Node's fetch (see there).
loadPgStreamForNode();

// Without DATABASE_URL, the embedded database starts on its own thread now, while the server loads and
// starts; the server takes it over once its configuration names the same directory, else closes it
// (src/database/embedded-opening.ts).
if (!process.env.DATABASE_URL?.trim()) {
  const dataDir = resolve(process.env.CLEVERAGENTS_DATA_DIR ?? DEFAULT_DATA_DIR);
  const { openEmbeddedEarly, serverPurpose } = await import('./database/embedded-opening.js');
  openEmbeddedEarly({ kind: 'embedded', dataDir }, serverPurpose(process.argv.includes('--stdio')));
}
const cachePath = codeCachePath(bundle);
if (!bundleCurrent) await import('./server.js');
else if (enableCompileCache || !cachePath || process.sourceMapsEnabled) {
  // Node's own compile cache, or none asked for; --enable-source-maps maps only what Node's loader loads.
  createRequire(import.meta.url)(bundle);
} else {
  const run = runCachedScript(bundle, cachePath);
  // Once serving: the code the start compiled, kept for the next start (when not read from the cache).
  void (run.exports as { serving?: Promise<void> }).serving?.then(() => setImmediate(() => run.keepCompiledCode()));
}
