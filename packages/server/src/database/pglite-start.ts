import { setFlagsFromString } from 'node:v8';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { DurableNodeFS } from './pglite-durable-fs.js';

/**
 * PGlite as the server runs it. PGlite's own start ends with a catalog query (every array type in
 * pg_type) that only its own value parsers use (`PGlite.query`); the server reads and writes through
 * node-postgres, which parses values itself, and uses PGlite directly only to LISTEN and to close. That
 * query is the first look at pg_type in a fresh backend: about 100–150 ms of a warm start on a 2-core
 * machine, skipped here. `refreshArrayTypes()` still loads them should anything need PGlite's parsers.
 */
class ServerPGlite extends PGlite {
  constructor(dataDir: string, options: PGliteOptions) {
    super(dataDir, options);
  }

  override async _initArrayTypes({ force = false }: { force?: boolean } = {}): Promise<void> {
    if (force) await super._initArrayTypes({ force });
  }
}

/**
 * V8's WebAssembly tiering budget, 100× the default, so PostgreSQL's run-once start code is not
 * recompiled on the cores the start needs (docs/design-notes.md#webassembly-tiering-budget).
 */
const WASM_TIERING_BUDGET = 180_000_000;

/**
 * PostgreSQL's shared buffers in the embedded database: 16 MB where PostgreSQL's default (and PGlite's
 * postgresql.conf) has 128 MB. PostgreSQL sets up every buffer as it starts, and inside PGlite that is
 * about 3 ms per megabyte of a warm start on a 2-core machine (PGlite alone: 1.0 s to ready at 128 MB,
 * 0.6 s at 16 MB), and 112 MB less memory. Pages not held there are read from the operating system's
 * cache, which keeps the data directory's files as it keeps any other.
 */
export const EMBEDDED_SHARED_BUFFERS = '16MB';

/**
 * PGlite's start parameters with fsync back on: PGlite starts PostgreSQL with `-F` (fsync off), which
 * loses the last seconds of acknowledged commits when the machine stops writing. The WAL is synced with
 * fsync(), the call DurableNodeFS carries to the disk (Emscripten's fdatasync does nothing).
 */
export const EMBEDDED_DURABILITY = ['-c', 'fsync=on', '-c', 'wal_sync_method=fsync', '-c', 'synchronous_commit=on'];

/**
 * Starts PGlite on `pgdata` as the server does (ServerPGlite above), resolving once it takes queries.
 * The server runs it on a thread of its own (pglite-thread.ts); this module imports PGlite and nothing
 * of the server's, so that thread loads little besides PGlite.
 */
export async function startPGlite(pgdata: string): Promise<PGlite> {
  // Before PGlite compiles its module: V8 reads the budget as it compiles.
  setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`);
  const pglite = new ServerPGlite(pgdata, {
    fs: new DurableNodeFS(pgdata),
    startParams: [
      ...PGlite.defaultStartParams.filter((parameter) => parameter !== '-F'),
      ...EMBEDDED_DURABILITY,
      '-c',
      `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`,
    ],
  });
  await pglite.waitReady;
  return pglite;
}
