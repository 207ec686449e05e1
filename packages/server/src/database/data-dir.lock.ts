import { closeSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { DataDirLockedError } from './database.errors.js';

/** What the lock file records about its holder. */
export interface LockHolder {
  pid: number;
  hostname: string;
  purpose: string;
  startedAt: string;
}

export const LOCK_FILE_NAME = 'database.lock';

/**
 * Exclusive lock on an embedded data directory. PGlite opens its files without any locking, and two
 * processes on one directory corrupt it, so this lock file is the only guard. A lock left by a process
 * that no longer runs (same host, dead pid) is taken over.
 */
export class DataDirLock {
  private released = false;
  private readonly onExit = (): void => this.release();

  private constructor(
    readonly dataDir: string,
    readonly path: string,
    private readonly content: string,
  ) {
    // A process that exits without closing the database still frees the directory.
    process.once('exit', this.onExit);
  }

  static acquire(dataDir: string, purpose: string): DataDirLock {
    mkdirSync(dataDir, { recursive: true });
    const path = join(dataDir, LOCK_FILE_NAME);
    const holder: LockHolder = {
      pid: process.pid,
      hostname: hostname(),
      purpose,
      startedAt: new Date().toISOString(),
    };
    const content = `${JSON.stringify(holder)}\n`;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (tryCreate(path, content)) return new DataDirLock(dataDir, path, content);
      const existing = readIfExists(path);
      if (existing === undefined) continue; // released between our two calls: try again
      const current = parseHolder(existing);
      if (current && isAlive(current)) throw new DataDirLockedError(dataDir, describeHolder(current));
      if (!current && existing.trim() !== '') {
        throw new DataDirLockedError(
          dataDir,
          `an unreadable lock file (${path}); delete it if no process uses the directory`,
        );
      }
      takeOverStale(path, existing);
    }
    throw new DataDirLockedError(dataDir, `another process racing for the lock file ${path}`);
  }

  /** Removes the lock file if it is still ours. Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    process.removeListener('exit', this.onExit);
    if (readIfExists(this.path) === this.content) {
      try {
        unlinkSync(this.path);
      } catch {
        // Already gone: nothing to release.
      }
    }
  }
}

function tryCreate(path: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function parseHolder(content: string): LockHolder | undefined {
  try {
    const value = JSON.parse(content) as Partial<LockHolder>;
    if (typeof value.pid === 'number' && typeof value.hostname === 'string') return value as LockHolder;
  } catch {
    // fall through
  }
  return undefined;
}

function isAlive(holder: LockHolder): boolean {
  // A pid on another host cannot be checked: assume it runs (a shared volume mounted twice).
  if (holder.hostname !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function describeHolder(holder: LockHolder): string {
  const where = holder.hostname === hostname() ? '' : ` on host ${holder.hostname}`;
  const what = holder.purpose ? `${holder.purpose}, ` : '';
  return `process ${holder.pid}${where} (${what}since ${holder.startedAt})`;
}

/**
 * Moves a stale lock out of the way. The rename is atomic, so of two processes taking over the same
 * stale lock only one moves it; the other either finds nothing or moves the winner's fresh lock, which
 * it sees by the content and puts back.
 */
function takeOverStale(path: string, staleContent: string): void {
  const aside = `${path}.stale-${process.pid}-${Date.now()}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = readIfExists(aside);
  if (moved !== staleContent) {
    try {
      linkSync(aside, path);
    } catch {
      // Someone else created a lock meanwhile; theirs stands.
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // best effort
  }
}
