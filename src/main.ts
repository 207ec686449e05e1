import { existsSync, statSync } from 'node:fs';
import nodeModule from 'node:module';
import { loadPgStreamForNode } from './database/pg-node-stream.js';

// Node >= 22.1 keeps compiled code on disk (NODE_COMPILE_CACHE, else <tmpdir>/node-compile-cache;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off). It covers only modules compiled after this call, hence
// this entry of its own that loads the server (server.ts) afterwards.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

// `npm run build` bundles server.ts and what it imports into dist/bundle (scripts/bundle-server.mjs):
// a few files for Node to read and link at start instead of some two thousand. A build without that
// step (tsc alone) runs the compiled modules as they are, and so does a build whose last tsc run came
// after its bundle (tsc run again after `npm run build`; tsc writes its build info when it emits): a
// stale bundle is never run.
const bundle = new URL('./bundle/server.js', import.meta.url);
const lastTsc = new URL('./.tsbuildinfo/build.tsbuildinfo', import.meta.url);
const bundleCurrent =
  existsSync(bundle) && (!existsSync(lastTsc) || statSync(bundle).mtimeMs >= statSync(lastTsc).mtimeMs);
// Before anything imports pg: on Node 20 its socket module would otherwise load Node's fetch (see there).
loadPgStreamForNode();
await import(bundleCurrent ? bundle.href : './server.js');
