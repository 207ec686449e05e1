import { existsSync } from 'node:fs';
import nodeModule from 'node:module';

// Node >= 22.1 keeps compiled code on disk (NODE_COMPILE_CACHE, else <tmpdir>/node-compile-cache;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off). It covers only modules compiled after this call, hence
// this entry of its own that loads the server (server.ts) afterwards.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

// `npm run build` bundles server.ts and what it imports into dist/bundle (scripts/bundle-server.mjs):
// a few files for Node to read and link at start instead of some two thousand. A build without that
// step (tsc alone) runs the compiled modules as they are.
const bundle = new URL('./bundle/server.js', import.meta.url);
await import(existsSync(bundle) ? bundle.href : './server.js');
