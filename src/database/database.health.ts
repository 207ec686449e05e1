import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { DatabaseDescription } from '../contract/methods/diagnostics.js';
import { EmbeddedDataSource } from './data-source.factory.js';

/** What `_cleveragents/diagnostics/info` says of the database: the contract's. */
export type { DatabaseDescription };

/** Database facts for /readyz and `_cleveragents/diagnostics/*`. */
@Injectable()
export class DatabaseHealth {
  private serverVersion: string | null = null;
  private readonly pingTimeoutMs = 2000;

  constructor(private readonly dataSource: DataSource) {}

  /** Resolves when the database answers a trivial query within the timeout; rejects otherwise. */
  async ping(): Promise<void> {
    if (!this.dataSource.isInitialized) throw new Error('The database connection is closed');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`The database did not answer within ${this.pingTimeoutMs} ms`)),
        this.pingTimeoutMs,
      );
    });
    try {
      await Promise.race([this.dataSource.query('SELECT 1'), timeout]);
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
