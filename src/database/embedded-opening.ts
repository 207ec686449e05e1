import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import type { AppConfig } from '../config/app.config.js';
import { DataDirLock } from './data-dir.lock.js';
import { seedFromTemplate, templateLocation } from './embedded-template.js';

/** Where the embedded database keeps PGlite's files, inside CLEVERAGENTS_DATA_DIR. */
export const EMBEDDED_PGDATA = 'pglite';

/** A locked embedded data directory and its PGlite, starting. */
export interface EmbeddedOpening {
  dataDir: string;
  lock: DataDirLock;
  pglite: Promise<PGlite>;
}

let earlyOpened: EmbeddedOpening | undefined;

/**
 * PGlite as the server runs it. PGlite's own start ends with a catalog query (every array type in
 * pg_type) that only its own value parsers use (`PGlite.query`); the server reads and writes through
 * node-postgres, which parses values itself, and uses PGlite directly only to LISTEN and to close. That
 * query is the first look at pg_type in a fresh backend: about 100–150 ms of a warm start on a 2-core
 * machine, skipped here. `refreshArrayTypes()` still loads them should anything need PGlite's parsers.
 * Built at first use: PGlite itself is loaded only when the embedded database opens (the bundle loads it
 * at its first use, scripts/bundle-server.mjs), and a class extending it would load it with this module.
 */
type ServerPGliteClass = new (dataDir: string, options: PGliteOptions) => PGlite;
let serverPGlite: ServerPGliteClass | undefined;
const serverPGliteClass = (): ServerPGliteClass =>
  (serverPGlite ??= class ServerPGlite extends PGlite {
    override async _initArrayTypes({ force = false }: { force?: boolean } = {}): Promise<void> {
      if (force) await super._initArrayTypes({ force });
    }
  });

/**
 * How much a WebAssembly function runs (V8's rough count of bytes executed) before V8 recompiles it with
 * its optimizing compiler: 100 times V8's default. PostgreSQL's start inside PGlite runs a great deal of
 * code once; at the default, V8 recompiles much of it on background threads while the start itself
 * still needs both cores of a small machine. Code that stays hot is still optimized, a little later.
 * Node's other WebAssembly (undici's HTTP parser, behind fetch) is optimized later too.
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

/** Starts PGlite on `pgdata` as the server does (ServerPGlite above), resolving once it takes queries. */
export async function startPGlite(pgdata: string): Promise<PGlite> {
  // Before PGlite compiles its module: V8 reads the budget as it compiles.
  setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`);
  const pglite = new (serverPGliteClass())(pgdata, {
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`],
  });
  await pglite.waitReady;
  return pglite;
}

/**
 * Locks the data directory and starts PGlite on it (the lock is released if PGlite cannot start). A
 * fresh directory starts as a copy of the build's migrated template when it holds today's schema
 * (embedded-template.ts), skipping initdb and the migrations.
 */
export function openEmbedded(dataDir: string, purpose: string, template = templateLocation()): EmbeddedOpening {
  const lock = DataDirLock.acquire(dataDir, purpose);
  const pgdata = join(dataDir, EMBEDDED_PGDATA);
  try {
    if (!seedFromTemplate(pgdata, template)) mkdirSync(pgdata, { recursive: true });
  } catch (error) {
    lock.release();
    throw error;
  }
  const pglite = startPGlite(pgdata);
  pglite.catch(() => lock.release());
  return { dataDir, lock, pglite };
}

/**
 * Starts the embedded database before the rest of the server is even loaded (this module imports
 * only PGlite), so that PGlite's start — reading and compiling its WebAssembly, starting PostgreSQL —
 * overlaps the loading of the application's modules. The next createDataSource for the same
 * directory takes it over. Does nothing on PostgreSQL.
 */
export function openEmbeddedEarly(config: AppConfig, purpose: string): void {
  if (config.database.kind !== 'embedded' || earlyOpened) return;
  earlyOpened = openEmbedded(config.database.dataDir, purpose);
  earlyOpened.pglite.catch(() => undefined);
}

/** The early opening of `dataDir`, handed over once. */
export function takeEarlyOpening(dataDir: string): EmbeddedOpening | undefined {
  const early = earlyOpened?.dataDir === dataDir ? earlyOpened : undefined;
  if (early) earlyOpened = undefined;
  return early;
}
