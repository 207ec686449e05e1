/**
 * The `cleveragents` exit codes: stable, documented in docs/client.md, the same for every command, so
 * scripts can branch on them.
 */
export const EXIT = {
  /** The task completed, or the command did what it was asked. */
  OK: 0,
  /** The task failed, or the server refused the operation (not found, invalid state, …). */
  FAILED: 1,
  /** Bad flags or arguments, or params the server found invalid (-32602). */
  USAGE: 2,
  /** No credential, a wrong one, or not allowed (-32002, -32003; HTTP 401/403). */
  AUTH: 3,
  /** The task waits on input (an approval, a question) that this run did not answer. */
  INPUT_REQUIRED: 4,
  /** The task was canceled or rejected (by the user at a gate, Ctrl-C, or the agent). */
  CANCELED: 5,
  /** The server or agent could not be reached, or the local server did not start. */
  UNREACHABLE: 6,
  /** The agent does not offer this command (a CleverAgents-only command against another A2A agent). */
  NOT_OFFERED: 7,
  /** `registry push` (or `pull`) met conflicts with the server's changes that this run did not resolve. */
  CONFLICT: 8,
  /** `login`: the person refused the sign-in at the issuer (access_denied). */
  LOGIN_DENIED: 9,
  /** `login`: the code or the sign-in window expired before the person signed in (expired_token). */
  LOGIN_EXPIRED: 10,
  /** `login`: the server or its issuer offers no way to sign in from a terminal (no client id, no device grant, no PKCE). */
  LOGIN_UNSUPPORTED: 11,
  /** The stored sign-in expired or was revoked and could not be refreshed: run `cleveragents login` again. */
  LOGIN_AGAIN: 12,
  /** Interrupted by the user (a second Ctrl-C) before the task reached a state. */
  INTERRUPTED: 130,
  /** stdout's reader went away (`| head`): the command stopped there, quietly (128 + SIGPIPE, as a shell reports it). */
  OUTPUT_CLOSED: 141,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code a task's final state maps to. */
export function exitCodeForState(state: string, unanswered?: string): ExitCode {
  if (unanswered) return EXIT.INPUT_REQUIRED;
  switch (state) {
    case 'completed':
      return EXIT.OK;
    case 'canceled':
    case 'rejected':
      return EXIT.CANCELED;
    case 'input-required':
    case 'auth-required':
      return EXIT.INPUT_REQUIRED;
    default:
      return EXIT.FAILED;
  }
}

/** An error that ends the CLI with a given code and message (usage errors, refused options). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
