// The bare @a2a-js/sdk server the benchmark compares against: a plain Express app with the SDK's
// DefaultRequestHandler, jsonRpcHandler and agentCardHandler, running the very same conformance
// executor as ours (imported from the build, so both sides execute identical actor code).
//
//   node bench/servers/sdk-server.mjs memory            # InMemoryTaskStore
//   DATABASE_URL=postgres://… node bench/servers/sdk-server.mjs database   # DatabaseTaskStore (Kysely + pg)
//
// PORT (default 18090), HOST (127.0.0.1). Prints one JSON line {"msg":"listening"} on stdout when ready.
import express from 'express';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

// BENCH_DIST: the build under test (default ./packages/server/dist), the same one ours runs from.
const dist = resolve(import.meta.dirname, '../..', process.env.BENCH_DIST || 'packages/server/dist');
const { ConformanceAgentExecutor } = await import(
  pathToFileURL(resolve(dist, 'execution/conformance/conformance.executor.js')).href
);

const storeKind = process.argv[2] ?? 'memory';
const port = Number(process.env.PORT ?? 18090);
const host = process.env.HOST ?? '127.0.0.1';
const url = `http://${host}:${port}`;

/** The SDK ships no migration in 1.3.0: the table follows its TaskRow, indexed as our tasks table is. */
export const SDK_TASKS_DDL = [
  `CREATE TABLE IF NOT EXISTS tasks (
     tenant text NOT NULL, owner text NOT NULL, id text NOT NULL, context_id text NOT NULL,
     status_last_updated bigint NOT NULL, status_state text, status text, artifacts text, history text,
     metadata text, protocol_version text, PRIMARY KEY (tenant, owner, id))`,
  `CREATE INDEX IF NOT EXISTS tasks_scope_recent ON tasks (tenant, owner, status_last_updated, id)`,
  `CREATE INDEX IF NOT EXISTS tasks_scope_context_recent ON tasks (tenant, owner, context_id, status_last_updated, id)`,
];

async function taskStore() {
  if (storeKind === 'memory') return { store: new InMemoryTaskStore(), close: async () => {} };
  if (storeKind !== 'database') throw new Error(`unknown store ${storeKind} (memory | database)`);
  const [{ Kysely, PostgresDialect }, pg, { DatabaseTaskStore }] = await Promise.all([
    import('kysely'),
    import('pg'),
    import('@a2a-js/sdk/server/database'),
  ]);
  const pool = new pg.default.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  for (const ddl of SDK_TASKS_DDL) await pool.query(ddl);
  const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
  return { store: new DatabaseTaskStore(db), close: () => db.destroy() };
}

const card = {
  name: 'bare SDK benchmark agent',
  description: 'the @a2a-js/sdk reference server with the conformance executor',
  supportedInterfaces: [{ url: `${url}/a2a`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
  provider: undefined,
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [],
  signatures: [],
};

const { store, close } = await taskStore();
const requestHandler = new DefaultRequestHandler(card, store, new ConformanceAgentExecutor());
const app = express();
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: requestHandler }));
app.use(
  '/a2a',
  express.json({ limit: '1mb' }),
  jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }),
);
app.get('/readyz', (_req, res) => res.json({ status: 'ok' }));

const server = app.listen(port, host, () => {
  process.stdout.write(`${JSON.stringify({ msg: 'listening', url, store: storeKind })}\n`);
});
const stop = () => {
  server.close();
  server.closeAllConnections?.();
  void close().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
