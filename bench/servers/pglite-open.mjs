// The floor of an embedded start: PGlite alone opening a data directory, nothing of the server's.
//
//   CLEVERAGENTS_DATA_DIR=DIR node bench/servers/pglite-open.mjs [--seed]
//
// Opens DIR/pglite as the server does (the build's own startPGlite on it; with --seed, an empty DIR first gets a copy of
// the build's migrated template, as a fresh embedded data directory does: the build's own seedFromTemplate),
// runs `SELECT 1`, then answers 200 on GET /readyz at HOST:PORT, so that the cold-start benchmark times it
// exactly as it times a server. SIGTERM closes PGlite (a warm directory stays clean for the next open).
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = resolve(import.meta.dirname, '../..', process.env.BENCH_DIST || 'packages/server/dist');
const pgdata = join(process.env.CLEVERAGENTS_DATA_DIR ?? '', 'pglite');
if (process.argv.includes('--seed')) {
  const { seedFromTemplate } = await import(pathToFileURL(join(dist, 'database/embedded-template.js')).href);
  if (!seedFromTemplate(pgdata, join(dist, 'embedded-template'))) throw new Error(`no template copied to ${pgdata}`);
}
const { startPGlite } = await import(pathToFileURL(join(dist, 'database/pglite-start.js')).href);
const db = await startPGlite(pgdata);
await db.query('SELECT 1');
const server = createServer((req, res) => {
  res.writeHead(req.url === '/readyz' ? 200 : 404).end();
});
server.listen(Number(process.env.PORT ?? 18091), process.env.HOST ?? '127.0.0.1');
process.once('SIGTERM', async () => {
  server.close();
  await db.close();
  process.exit(0);
});
