import { join } from 'node:path';
import type { AppConfig } from '../config/app.config.js';
import { DataDirLock } from './data-dir.lock.js';
import { templateLocation, templateToSeed } from './embedded-template.js';
import { PGliteThread } from './pglite-thread.js';

/** Where the embedded database keeps PGlite's files, inside CLEVERAGENTS_DATA_DIR. */
export const EMBEDDED_PGDATA = 'pglite';

/** The server's entry in the lock file of its data directory (DataDirLock). */
export const serverPurpose = (stdio: boolean): string =>
  stdio ? 'CleverAgents server (stdio)' : 'CleverAgents server';

/** A locked embedded data directory and its PGlite, starting. */
export interface EmbeddedOpening {
  dataDir: string;
  lock: DataDirLock;
  pglite: Promise<PGliteThread>;
}

/**
 * The early opening (openEmbeddedEarly), kept on the global object: dist/main.js opens it before it
 * loads the server's bundle, which holds a copy of this module of its own.
 */
const EARLY = Symbol.for('cleveragents.embedded-database.early-opening');
const early = globalThis as { [EARLY]?: EmbeddedOpening };

/** Starts the embedded database's thread on `pgdata`, resolving once it takes queries. */
async function startThread(pgdata: string, seedFrom: string | undefined): Promise<PGliteThread> {
  const thread = new PGliteThread(pgdata, seedFrom);
  await thread.waitReady;
  return thread;
}

/**
 * Locks the data directory and starts PGlite on it, on its own thread (the lock is released if PGlite
 * cannot start). A fresh directory starts as a copy of the build's migrated template when it holds
 * today's schema (embedded-template.ts), skipping initdb and the migrations; that thread copies it.
 */
export function openEmbedded(dataDir: string, purpose: string, template = templateLocation()): EmbeddedOpening {
  const lock = DataDirLock.acquire(dataDir, purpose);
  const pgdata = join(dataDir, EMBEDDED_PGDATA);
  let seedFrom: string | undefined;
  try {
    seedFrom = templateToSeed(pgdata, template);
  } catch (error) {
    lock.release();
    throw error;
  }
  const pglite = startThread(pgdata, seedFrom);
  pglite.catch(() => lock.release());
  return { dataDir, lock, pglite };
}

/**
 * Starts PGlite before the server is loaded, so its start overlaps the application's; the server takes
 * it over or closes it (docs/design-notes.md#early-embedded-opening).
 */
export function openEmbeddedEarly(database: AppConfig['database'], purpose: string): void {
  const opened = early[EARLY];
  if (opened && (database.kind !== 'embedded' || opened.dataDir !== database.dataDir)) {
    early[EARLY] = undefined;
    void closeOpening(opened);
  } else if (opened) return;
  if (database.kind !== 'embedded') return;
  try {
    const opening = openEmbedded(database.dataDir, purpose);
    early[EARLY] = opening;
    opening.pglite.catch(() => {
      if (early[EARLY] === opening) early[EARLY] = undefined;
    });
  } catch {
    // The directory locked by another process, or not writable: the server's own opening says so.
  }
}

async function closeOpening(opening: EmbeddedOpening): Promise<void> {
  try {
    await (await opening.pglite).close();
  } catch {
    // It never started: nothing to close.
  } finally {
    opening.lock.release();
  }
}

/** The early opening of `dataDir`, handed over once. */
export function takeEarlyOpening(dataDir: string): EmbeddedOpening | undefined {
  const opened = early[EARLY]?.dataDir === dataDir ? early[EARLY] : undefined;
  if (opened) early[EARLY] = undefined;
  return opened;
}
