import { createRequire } from 'node:module';

/**
 * Loads node-postgres's socket module (pg/lib/stream) so that it picks Node's sockets without loading
 * Node's fetch implementation; called once at start, before anything imports pg.
 *
 * At its load that module asks whether it runs in a Cloudflare Worker: by `navigator.userAgent` where
 * there is a `navigator`, else by constructing a `Response` and looking for Cloudflare's `cf` property on
 * it. Node 21 and later have a global `navigator` (userAgent `Node.js/<major>`); Node 20 has none, and its
 * first use of `Response` loads undici, Node's fetch, some 40–60 ms of a cold start (measured by CPU
 * profile) that nothing else at start needs. Here, on a Node without `navigator`, the module is loaded
 * with the `navigator` a later Node would have, for that synchronous load only: the global is removed
 * again before this returns, so no other module ever sees it. pg's connection module then takes the
 * cached module (the same file, by the same resolved path).
 *
 * A build of pg whose module says otherwise is unaffected: its answer is whatever it computes from a
 * Node-like `navigator`.
 */
export function loadPgStreamForNode(): void {
  const require = createRequire(import.meta.url);
  const path = require.resolve('pg/lib/stream');
  if (require.cache[path] || 'navigator' in globalThis) return;
  const userAgent = `Node.js/${process.versions.node.split('.')[0]}`;
  Object.defineProperty(globalThis, 'navigator', { value: { userAgent }, configurable: true, writable: true });
  try {
    require(path);
  } finally {
    delete (globalThis as { navigator?: unknown }).navigator;
  }
}
