// `npm run test:node-compat`: the test files whose subject behaves differently on the oldest Node the project
// supports (20, end-of-life) than on Node 24 LTS, where CI runs the whole suite (.ci/run). CI runs these on
// its machine's Node 20; the reason each is here is beside it. A file that ran on Node 24 alone would not
// show what the project does on 20: two of them (pg-node-stream, compile-cache) skip their Node 20 case on 24.
// Code that asks which Node it runs on, or leans on one of the subjects below, brings its test file here.
import { existsSync } from 'node:fs';
import base from './jest.config.js';

export const NODE_COMPAT_SUITES = [
  // Code that takes another path on Node 20.
  // pg's socket module, loaded with a stand-in `navigator` where Node has none (packages/server/src/database/pg-node-stream.ts).
  'test/database/pg-node-stream.e2e-spec.ts',
  // dist/main.js runs its bundle through the project's own V8 code cache on Node 20 (no module.enableCompileCache).
  'test/config/compile-cache.e2e-spec.ts',
  'packages/server/src/common/code-cache.spec.ts',
  // The running Node inside engines.node; four packages that declare Node 22 let through on 20 alone.
  'test/architecture/runtime.spec.ts',

  // Packages that declare Node >= 22, used on 20.
  // @langchain/openai and openai: a streamed model call through the server's pinned fetch, a cancel mid-call,
  // a turn recovered after a restart, on both databases.
  'test/execution/local-session.e2e-spec.ts',
  // The same two from the built server (dist/main.js, run through its own code cache on Node 20), whose bundle
  // loads them with require(): a model call, a kill, a restart.
  'test/execution/crash-unstored-task.e2e-spec.ts',
  // nestjs-pino / pino: the asynchronous log destination flushed at exit; the request context kept in an
  // AsyncLocalStorage, which Node 24 implements anew.
  'packages/server/src/common/logging/app.logger.spec.ts',

  // Node's HTTP server, streams and sockets.
  // Subclasses of IncomingMessage and ServerResponse as Express's prototypes.
  'packages/server/src/a2a/express-adapter.spec.ts',
  // Corked SSE writes: Node 24 dropped a corked tick's last event at end(), Node 20 did not.
  'test/a2a/sse-streams.e2e-spec.ts',
  // SIGTERM: open streams end with a last event, idle keep-alive sockets are closed, the process exits.
  'test/a2a/graceful-shutdown.e2e-spec.ts',
  // Outbound HTTP through node:http into a web Response (pinned fetch); header values Node refuses.
  'packages/server/src/push/guarded-push-notification.sender.spec.ts',
  'packages/server/src/common/outbound/bounded-fetch.spec.ts',

  // The client, which people run on whatever Node they have.
  // Node's fetch (undici 6 in Node 20, 7 in Node 24): SSE streams, re-joins, the error for an unreachable URL.
  'test/client/lib-http.e2e-spec.ts',
  // Child-process pipes into web streams; the local server (dist/main.js --stdio) started by this Node.
  'test/client/lib-stdio.e2e-spec.ts',
  // node-pty's prebuilt N-API addon, as the one `npm ci` installed it, on a real pseudo-terminal.
  'test/client/hostile-agent-pty.e2e-spec.ts',
  // Commands in bubblewrap, some running this Node from where it is installed (in CI: /usr/bin, /var/tmp for 24).
  'test/client/tools-sandbox.spec.ts',

  // The embedded database: PGlite on a worker thread, its WebAssembly memory, a thread that stops.
  'test/database/embedded-database.e2e-spec.ts',
];

const missing = NODE_COMPAT_SUITES.filter((path) => !existsSync(new URL(path, import.meta.url)));
if (missing.length > 0) {
  throw new Error(`jest.node-compat.config.js names files that do not exist: ${missing.join(', ')}`);
}

export default {
  ...base,
  testMatch: NODE_COMPAT_SUITES.map((path) => `<rootDir>/${path}`),
  // Its own timings, beside those of the whole suite.
  reporters: [
    'default',
    ['<rootDir>/test/support/timing-reporter.mjs', { outputDirectory: 'test-results/node-compat' }],
  ],
};
