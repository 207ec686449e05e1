/**
 * Startup errors of the database layer. They are operator-facing, not domain errors: each one says
 * which setting or command fixes it.
 */
export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: string,
  ) {
    super(
      `The embedded database in ${dataDir} is in use by ${holder}. Only one process may open it at a time: ` +
        `stop that process (a server, or a migration command), point CLEVERAGENTS_DATA_DIR at another directory, ` +
        `or set DATABASE_URL to use PostgreSQL.`,
    );
    this.name = 'DataDirLockedError';
  }
}

export class PendingMigrationsError extends Error {
  constructor(readonly pending: readonly string[]) {
    super(
      `The database has ${pending.length} pending migration(s): ${pending.join(', ')}. ` +
        `Run "npm run migration:run" against this DATABASE_URL before starting the server, ` +
        `or set CLEVERAGENTS_MIGRATE_ON_START=true to let the server migrate at start.`,
    );
    this.name = 'PendingMigrationsError';
  }
}

export class DatabaseUnreachableError extends Error {
  /** What the last attempt said, short: the error code (`ECONNREFUSED`) when there is one. */
  readonly detail: string;

  /** `url` is DATABASE_URL with its password already masked. */
  constructor(
    readonly url: string,
    waitedMs: number,
    cause: unknown,
  ) {
    super(
      `Cannot connect to PostgreSQL at DATABASE_URL=${url} (waited ${Math.round(waitedMs / 1000)} s, ` +
        `CLEVERAGENTS_DATABASE_CONNECT_SECONDS): ${cause instanceof Error ? cause.message : String(cause)}. ` +
        `Check that the server runs and DATABASE_URL points at it.`,
      { cause },
    );
    this.name = 'DatabaseUnreachableError';
    const code = (cause as { code?: unknown } | null)?.code;
    this.detail =
      typeof code === 'string' && code !== '' ? code : cause instanceof Error ? cause.message : String(cause);
  }
}
