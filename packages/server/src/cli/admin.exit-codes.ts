import { ConfigurationError } from '../config/app.config.js';
import { DomainError, ValidationError, type DomainErrorKind } from '../common/domain.errors.js';
import { DataDirLockedError, PendingMigrationsError } from '../database/database.errors.js';

/** The exit codes of `cleveragents-admin`, a contract scripts rely on (docs/operations.md lists them). */
export const ExitCode = {
  Ok: 0,
  Failure: 1,
  Usage: 2,
  DatabaseUnavailable: 3,
  NotFound: 4,
  Conflict: 5,
  PendingMigrations: 6,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The table `--help` prints; kept next to the codes so that the two cannot drift apart. */
export const EXIT_CODES_HELP = `Exit codes:
  0  success
  1  unexpected failure
  2  usage or configuration error (the message names the option or variable)
  3  database unavailable, or the embedded data directory is locked by a running server
  4  not found (namespace, API key, member)
  5  conflict (already exists, already revoked, nothing to revert, invalid state)
  6  pending migrations: run \`cleveragents-admin migrate run\` first`;

/** A bad command line: the message says what, the usage of `command` follows it on stderr. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command: readonly string[] = [],
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The database could not be opened or reached; `database` names it without credentials. */
export class DatabaseUnavailableError extends Error {
  constructor(
    readonly database: string,
    cause: unknown,
  ) {
    super(`Cannot open the ${database}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'DatabaseUnavailableError';
  }
}

/** A command that cannot run in the database's present state (e.g. nothing to revert). */
export class InvalidStateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidStateError';
  }
}

/** The exit code for an error a command ended with: the one place that maps errors to codes. */
export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof UsageError || error instanceof ConfigurationError) return ExitCode.Usage;
  if (error instanceof DataDirLockedError || error instanceof DatabaseUnavailableError) {
    return ExitCode.DatabaseUnavailable;
  }
  if (error instanceof PendingMigrationsError) return ExitCode.PendingMigrations;
  if (error instanceof InvalidStateError) return ExitCode.Conflict;
  if (error instanceof DomainError) return exitCodeOfKind(error.kind);
  if (isConnectionFailure(error)) return ExitCode.DatabaseUnavailable;
  return ExitCode.Failure;
}

function exitCodeOfKind(kind: DomainErrorKind): ExitCode {
  switch (kind) {
    case 'validation':
      return ExitCode.Usage;
    case 'not-found':
      return ExitCode.NotFound;
    case 'duplicate':
    case 'business-rule':
    case 'budget-exceeded':
    case 'plan':
      return ExitCode.Conflict;
    // The CLI acts as owner everywhere and calls no protocol method: these mean a bug, not a bad input.
    case 'operation-not-found':
    case 'authentication':
    case 'authorization':
    case 'version-mismatch':
    case 'rate-limited':
      return ExitCode.Failure;
    case 'unavailable':
      return ExitCode.DatabaseUnavailable;
  }
}

/** Option names for the service fields a ValidationError names, so that messages speak the CLI's words. */
const OPTION_OF_FIELD: Record<string, string> = {
  namespace: 'namespace',
  name: '--name',
  role: '--role',
  subject: '--subject',
  expiresAt: '--expires',
  displayName: '--display-name',
  description: '--description',
};

/** What to print on stderr for an error (never a secret: no error carries one). */
export function messageOf(error: unknown): string {
  if (error instanceof ValidationError) {
    return error.violations.map((v) => `invalid ${OPTION_OF_FIELD[v.field] ?? v.field}: ${v.description}`).join('\n');
  }
  if (error instanceof DataDirLockedError) {
    return (
      `The embedded database in ${error.dataDir} is locked by ${error.holder}.\n` +
      `The embedded database admits one process at a time: stop the server (or the other command) first, ` +
      `or use DATABASE_URL to administer a PostgreSQL database while the server runs.`
    );
  }
  if (error instanceof PendingMigrationsError) {
    return (
      `The database has ${error.pending.length} pending migration(s): ${error.pending.join(', ')}.\n` +
      `Run \`cleveragents-admin migrate run\` first.`
    );
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

/** PostgreSQL connection failures: refused, unreachable, timed out, shut down, unknown database, bad login. */
function isConnectionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return false;
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', '3D000'].includes(code) ||
    code.startsWith('08') ||
    code.startsWith('28') ||
    code.startsWith('57P')
  );
}
