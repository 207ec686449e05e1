import nodeModule from 'node:module';

// Node >= 22.1 keeps compiled code on disk (NODE_COMPILE_CACHE, else <tmpdir>/node-compile-cache;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off). It covers only modules compiled after this call, hence
// this entry of its own that loads the server (server.ts) afterwards.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import('./server.js');
