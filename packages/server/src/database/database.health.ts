import { constants } from 'node:fs';
import { access, statfs } from 'node:fs/promises';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { DatabaseDescription } from '@cleveragents/contract';
import { EmbeddedDataSource } from './data-source.factory.js';
import { lastStorageFailure } from './database-retry.js';

/** What `_cleveragents/diagnostics/info` says of the database: the contract's. */
export type { DatabaseDescription };

/** How long one write check answers /readyz: a load balancer polling it costs a transaction a second or two at most. */
const WRITE_CHECK_TTL_MS = 2000;

/** How long a statement that failed for storage keeps the server unready (PostgreSQL's disk is not ours to see). */
const STORAGE_FAILURE_HOLD_MS = 10_000;

/**
 * Free space the embedded database's file system must keep: two WAL segments (16 MB each). With less,
 * the next segment may not fit, and a write that cannot extend the WAL stops the database.
 */
const MIN_FREE_BYTES = 32 * 1024 * 1024;

/** Database facts for /readyz and `_cleveragents/diagnostics/*`. */
@Injectable()
export class DatabaseHealth {
  private serverVersion: string | null = null;
  private readonly pingTimeoutMs = 2000;
  private writeCheck: { at: number; problem: Promise<string | undefined> } | undefined;

  constructor(private readonly dataSource: DataSource) {}

  /** Resolves when the database answers a trivial query within the timeout; rejects otherwise. */
  async ping(): Promise<void> {
    if (!this.dataSource.isInitialized) throw new Error('The database connection is closed');
    await this.withinTimeout(this.dataSource.query('SELECT 1'));
  }

  /**
   * Why the database cannot store data now, or undefined when it can: a statement failed for storage in
   * the last STORAGE_FAILURE_HOLD_MS, the embedded database's directory is read-only or nearly full, or a
   * write (of no row, rolled back) is refused. Remembered for WRITE_CHECK_TTL_MS.
   */
  writeProblem(): Promise<string | undefined> {
    const now = Date.now();
    if (this.writeCheck === undefined || now - this.writeCheck.at >= WRITE_CHECK_TTL_MS) {
      this.writeCheck = { at: now, problem: this.checkWrites() };
    }
    return this.writeCheck.problem;
  }

  private async checkWrites(): Promise<string | undefined> {
    const failure = lastStorageFailure();
    if (failure && Date.now() - failure.at < STORAGE_FAILURE_HOLD_MS) {
      return `a statement failed for storage ${Math.round((Date.now() - failure.at) / 1000)} s ago: ${failure.detail}`;
    }
    if (this.dataSource instanceof EmbeddedDataSource) {
      const problem = await directoryProblem(this.dataSource.dataDir);
      if (problem) return problem;
    }
    try {
      await this.withinTimeout(this.rolledBackWrite());
      return undefined;
    } catch (error) {
      return `a write was refused: ${(error as Error).message}`;
    }
  }

  /**
   * An UPDATE of no row, rolled back: refused by a read-only or standby database (PostgreSQL checks the
   * statement, not its rows), and writing nothing, so it leaves no dead row for a vacuum.
   */
  private async rolledBackWrite(): Promise<void> {
    const runner = this.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      await runner.query('UPDATE namespaces SET slug = slug WHERE false');
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      await runner.release();
    }
  }

  private async withinTimeout<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`The database did not answer within ${this.pingTimeoutMs} ms`)),
        this.pingTimeoutMs,
      );
    });
    try {
      return await Promise.race([work, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Kind and server version; the version is asked once and remembered. */
  async describe(): Promise<DatabaseDescription> {
    const kind = this.dataSource instanceof EmbeddedDataSource ? 'embedded' : 'postgres';
    if (this.serverVersion === null && this.dataSource.isInitialized) {
      try {
        const rows: { server_version: string }[] = await this.dataSource.query('SHOW server_version');
        this.serverVersion = rows[0]?.server_version ?? null;
      } catch {
        // Unreachable right now: say so by null rather than fail the whole diagnostics answer.
      }
    }
    return { kind, serverVersion: this.serverVersion };
  }
}

/** Why the embedded database's directory cannot take writes (read-only, nearly full), or undefined. */
async function directoryProblem(dataDir: string): Promise<string | undefined> {
  try {
    await access(dataDir, constants.W_OK);
  } catch (error) {
    return `the data directory ${dataDir} cannot be written: ${(error as Error).message}`;
  }
  const fs = await statfs(dataDir);
  const free = fs.bavail * fs.bsize;
  if (free < MIN_FREE_BYTES) {
    return `the file system of ${dataDir} has ${Math.floor(free / 1024 / 1024)} MB free (it needs ${MIN_FREE_BYTES / 1024 / 1024} MB)`;
  }
  return undefined;
}
