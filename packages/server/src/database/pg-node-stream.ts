import { createRequire } from 'node:module';

/**
 * Loads node-postgres's socket module without it loading Node's fetch (undici), once at start
 * (docs/design-notes.md#node-postgres-without-undici).
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
