// Opens an embedded database as the server does (the build's openEmbedded: the directory's lock, PGlite on
// its own thread) and commits COUNT rows one at a time; after each commit is answered it writes
// "acknowledged N" to /dev/null, a mark in a system-call trace of this process. Then it closes the database,
// or with --no-close exits without closing it (as a killed server would).
//   node test/support/embedded-commits.mjs DATA_DIR COUNT [--no-close]
import { openSync, writeSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';

const [dataDir, count, mode] = process.argv.slice(2);
const dist = fileURLToPath(new URL('../../packages/server/dist/', import.meta.url));
const { openEmbedded } = await import(pathToFileURL(`${dist}database/embedded-opening.js`).href);

const opening = openEmbedded(dataDir, 'embedded-commits test helper');
const thread = await opening.pglite;
const client = new pg.Client({ connection: thread.connection() });
await client.connect();
await client.query('CREATE TABLE IF NOT EXISTS acknowledged (n integer PRIMARY KEY)');
const marks = openSync('/dev/null', 'w');
const [{ start }] = (await client.query('SELECT coalesce(max(n), 0) AS start FROM acknowledged')).rows;
for (let n = start + 1; n <= start + Number(count); n++) {
  await client.query('INSERT INTO acknowledged (n) VALUES ($1)', [n]);
  writeSync(marks, `acknowledged ${n}`);
}
if (mode === '--no-close') process.exit(0);
await client.end();
await thread.close();
opening.lock.release();
