import {
  CleverAgentsError,
  ExtensionNotOfferedError,
  LocalServerError,
  StreamProtocolError,
  StreamResumeError,
  UnreachableError,
  connect,
} from '@cleveragents/client/node';
import type { CleverAgentsClient, ConnectOptions } from '@cleveragents/client/node';
import { contextServer, currentServer, loginFor, readCredentials } from './credentials.js';
import { CliError, EXIT, type ExitCode } from './exit-codes.js';
import { safeLine, safeText } from './safe-text.js';
import { styleFor, type Style } from './style.js';
import { withSpinner } from './terminal.js';
import { captureContent, localServerTraceEnv } from './telemetry/settings.js';

/** The options every command takes (set before or after the command name). */
export interface GlobalOptions {
  server?: string;
  local?: boolean;
  agent?: string;
  apiKey?: string;
  /** A named server from the stored logins (`cleveragents contexts list`). */
  context?: string;
  dataDir?: string;
  json?: boolean;
  color?: boolean;
  /** Seconds a broken stream is re-joined without an event before giving up. */
  resumeWindow?: string;
  /** Export this command's trace (OpenTelemetry). */
  trace?: boolean;
}

/** Where a command writes: stdout for results, stderr for progress and errors. */
export interface Io {
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
  outStyle: Style;
  errStyle: Style;
}

export function ioFor(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Io {
  const colorEnv = options.color === false ? { ...env, NO_COLOR: '1' } : env;
  return {
    out: process.stdout,
    err: process.stderr,
    env,
    outStyle: styleFor(process.stdout, colorEnv),
    errStyle: styleFor(process.stderr, colorEnv),
  };
}

/** What to connect to, from the flags, then the environment, then the stored login. */
export async function connectOptionsOf(options: GlobalOptions, env: NodeJS.ProcessEnv): Promise<ConnectOptions> {
  if (options.local && options.server) {
    throw new CliError('--local and --server exclude each other', EXIT.USAGE, 'use one of them');
  }
  if (options.context && (options.server || options.local)) {
    throw new CliError(`--context and --${options.server ? 'server' : 'local'} exclude each other`, EXIT.USAGE);
  }
  const stored = await readCredentials(env);
  if (options.local) {
    const traceEnv = localServerTraceEnv(options.trace === true, env);
    return {
      local: {
        ...(options.dataDir ? { dataDir: options.dataDir } : {}),
        ...(Object.keys(traceEnv).length > 0 ? { env: traceEnv } : {}),
      },
      ...(options.agent ? { agent: options.agent } : {}),
    };
  }
  const server =
    options.server ??
    (options.context ? contextServer(stored, options.context) : undefined) ??
    env.CLEVERAGENTS_SERVER ??
    currentServer(stored);
  if (!server) {
    if (options.agent) return { agent: options.agent };
    throw new CliError(
      'No server to talk to',
      EXIT.USAGE,
      'pass --server URL, set CLEVERAGENTS_SERVER, log in with `cleveragents login --server URL`, or use --local',
    );
  }
  const agent = options.agent ? { agent: options.agent } : {};
  const apiKey = options.apiKey ?? env.CLEVERAGENTS_API_KEY;
  if (apiKey) return { server, apiKey, ...agent };
  const found = loginFor(stored, server, options.context);
  const login = found?.login;
  if (found && login?.oidc) {
    // Loaded only for a stored sign-in: an API key's commands start without it.
    const { freshTokens } = await import('./sso.js');
    // Refreshed now, so that a sign-in to renew fails before connecting; then before each request,
    // so that a long chat outlives its first access token.
    let tokens = await freshTokens(found.place, login.oidc, env);
    const bearerToken = async (): Promise<string> => (tokens = await freshTokens(found.place, tokens, env)).accessToken;
    return { server, bearerToken, ...agent };
  }
  return { server, ...(login?.apiKey ? { apiKey: login.apiKey } : {}), ...agent };
}

/** The re-join window of a broken stream, from `--resume-window <seconds>`; undefined: the library's. */
export function resumeWindowMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds < 0) {
    throw new CliError(
      `--resume-window must be a number of seconds, not "${safeLine(value)}"`,
      EXIT.USAGE,
      'e.g. --resume-window 300 (the default is 180)',
    );
  }
  return seconds * 1000;
}

/** How a stream's re-joins are told on stderr: the first of each break, and a resume from a snapshot. */
function streamRetryFor(options: GlobalOptions, io: Io): ConnectOptions['streamRetry'] {
  const style = io.errStyle;
  const windowMs = resumeWindowMs(options.resumeWindow);
  return {
    ...(windowMs !== undefined ? { windowMs } : {}),
    onRejoin: ({ taskId, attempt, error }) => {
      if (attempt !== 1) return;
      const why = error instanceof CleverAgentsError && error.reason ? error.reason : 'the connection broke';
      io.err.write(`${style.dim(`(${safeLine(why)}: re-joining task ${safeLine(taskId)}…)`)}\n`);
    },
    onSnapshotResume: ({ taskId, lastSequence, reason }) => {
      io.err.write(
        `${style.yellow('note:')} the server no longer has the events of task ${safeLine(taskId)} after ${lastSequence} (${safeLine(reason)}): resumed from the task as it stands; progress lines between may be missing\n`,
      );
    },
  };
}

/** Connects as the options say, with a spinner while it takes; the caller closes the client. */
export async function connectFor(options: GlobalOptions, io: Io): Promise<CleverAgentsClient> {
  const connectOptions = {
    ...(await connectOptionsOf(options, io.env)),
    streamRetry: streamRetryFor(options, io),
    tracing: { captureErrorMessages: captureContent(io.env) },
  };
  const what = connectOptions.local
    ? 'Starting the local server'
    : `Connecting to ${connectOptions.server ?? connectOptions.agent}`;
  return withSpinner(io.err, io.errStyle, what, () => connect(connectOptions));
}

/** Runs `work` with a connected client, closing it however `work` ends. */
export async function withClient<T>(
  options: GlobalOptions,
  io: Io,
  work: (client: CleverAgentsClient) => Promise<T>,
): Promise<T> {
  const client = await connectFor(options, io);
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}

/** The exit code an error ends the CLI with. */
export function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof CliError) return err.exitCode;
  if (err instanceof ExtensionNotOfferedError) return EXIT.NOT_OFFERED;
  if (err instanceof UnreachableError || err instanceof LocalServerError || err instanceof StreamResumeError) {
    return EXIT.UNREACHABLE;
  }
  if (err instanceof CleverAgentsError) {
    if (err.code === -32002 || err.code === -32003 || err.httpStatus === 401 || err.httpStatus === 403) {
      return EXIT.AUTH;
    }
    if (err.code === -32602) return EXIT.USAGE;
    return EXIT.FAILED;
  }
  return EXIT.FAILED;
}

/** A word as a POSIX shell reads it back unchanged: bare when harmless, else single-quoted. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A word of a hint that came from elsewhere (an id a server gave): never read back as an option. */
export interface Operand {
  readonly operand: string;
}

/** Marks `value` as an operand of a hint (see cliCommand). */
export function operand(value: string): Operand {
  return { operand: value };
}

/**
 * A command for a person to run next, as this run reached its server: `cleveragents`, the connection
 * flags this run was given (`--server`, `--context`, `--local`, `--data-dir`, `--agent`; never a
 * credential), then `words`, each quoted for a POSIX shell. A hint that names a command says it this
 * way, so that copying it reaches the same server. An operand (an id from the server) that starts with
 * `-` is never read as an option when the command is run: after an option it is joined to it
 * (`--session=-x`), elsewhere it follows `--`.
 */
export function cliCommand(words: readonly (string | Operand)[], options: GlobalOptions = {}): string {
  const line = ['cleveragents'];
  if (options.server) line.push('--server', options.server);
  if (options.context) line.push('--context', options.context);
  if (options.local) line.push('--local');
  if (options.local && options.dataDir) line.push('--data-dir', options.dataDir);
  if (options.agent) line.push('--agent', options.agent);
  let optionLast = false;
  let operandsOnly = false;
  for (const word of words) {
    if (typeof word === 'string') {
      line.push(word);
      optionLast = !operandsOnly && word.startsWith('-');
      continue;
    }
    const value = word.operand;
    if (value.startsWith('-') && optionLast) line[line.length - 1] += `=${value}`;
    else {
      if (value.startsWith('-') && !operandsOnly) {
        line.push('--');
        operandsOnly = true;
      }
      line.push(value);
    }
    optionLast = false;
  }
  return line.map(shellWord).join(' ');
}

/** The command that follows a task to its rest, as this run reached the server: `tasks watch ID`. */
export function pickUpCommand(taskId: string, options: GlobalOptions = {}): string {
  return cliCommand(['tasks', 'watch', operand(taskId)], options);
}

/**
 * The hint of a server's error, as this run acts on it: where the server signs people in (its card
 * declares a single sign-on) and the request carried no credential, or a sign-in it refused, the hint is
 * to sign in, with the command that reaches this server.
 */
function hintOf(err: CleverAgentsError, options?: GlobalOptions): string | undefined {
  const unauthenticated = err.code === -32002 || err.httpStatus === 401;
  if (!unauthenticated || !err.signIn) return err.hint;
  const login = cliCommand(['login'], options);
  if (err.credentials === 'none') {
    return `this server signs you in with single sign-on: run \`${login}\` (or pass --api-key)`;
  }
  if (err.credentials === 'bearer') {
    return `the server did not accept the sign-in (expired, revoked, or made for another server): run \`${login}\` again`;
  }
  return err.hint;
}

/** The task a stream error left running at the server, if it names one. */
function taskLeftRunning(err: unknown): string | undefined {
  return err instanceof StreamResumeError || err instanceof StreamProtocolError ? err.taskId : undefined;
}

/**
 * What an error says to a person: the message, the server's reason, the fields at fault, a hint. Each
 * is the server's (or carries its words): made safe, one line each, before it is styled. A stream that
 * could not be followed names its task and the command that picks it up (`options`: how this run connected).
 */
export function describeError(err: unknown, style: Style, options?: GlobalOptions): string {
  const lines: string[] = [];
  const taskId = taskLeftRunning(err);
  if (taskId !== undefined) {
    const message = err instanceof Error ? err.message : String(err);
    lines.push(`${style.red('error:')} ${safeLine(message)}`);
    lines.push(`${style.yellow('task:')} ${safeLine(taskId)} goes on at the server; follow it to its end with:`);
    lines.push(`  ${safeLine(pickUpCommand(taskId, options))}`);
    return lines.join('\n');
  }
  if (err instanceof CleverAgentsError) {
    const reason = err.reason
      ? ` ${style.dim(`(${safeLine(err.reason)}, code ${err.code})`)}`
      : ` ${style.dim(`(code ${err.code})`)}`;
    lines.push(`${style.red('error:')} ${safeLine(err.message)}${reason}`);
    for (const v of err.fieldViolations) lines.push(`  ${style.bold(safeLine(v.field))}: ${safeLine(v.description)}`);
    const hint = hintOf(err, options);
    if (hint) lines.push(`${style.yellow('hint:')} ${safeLine(hint)}`);
    return lines.join('\n');
  }
  if (err instanceof CliError) {
    lines.push(`${style.red('error:')} ${safeLine(err.message)}`);
    if (err.hint) lines.push(`${style.yellow('hint:')} ${safeLine(err.hint)}`);
    return lines.join('\n');
  }
  const message = err instanceof Error ? err.message : String(err);
  lines.push(`${style.red('error:')} ${safeLine(message)}`);
  if (err instanceof LocalServerError && err.stderr.trim()) {
    const tail = safeText(err.stderr).trim().split('\n').slice(-15).join('\n');
    lines.push(style.dim('The local server said:'), style.dim(tail));
  }
  const hint = (err as { hint?: unknown } | null)?.hint;
  if (typeof hint === 'string') lines.push(`${style.yellow('hint:')} ${safeLine(hint)}`);
  return lines.join('\n');
}

/** An error as a JSON line (`--json`): code, reason, message, hint and the exit code; a task left running and its pick-up command. */
export function errorJson(err: unknown, options?: GlobalOptions): Record<string, unknown> {
  const exitCode = exitCodeOf(err);
  const taskId = taskLeftRunning(err);
  if (taskId !== undefined) {
    return {
      error: {
        message: err instanceof Error ? err.message : String(err),
        taskId,
        pickUp: pickUpCommand(taskId, options),
        exitCode,
      },
    };
  }
  if (err instanceof CleverAgentsError) {
    return {
      error: {
        code: err.code,
        reason: err.reason,
        message: err.message,
        fieldViolations: err.fieldViolations,
        hint: hintOf(err, options),
        exitCode,
      },
    };
  }
  const hint = (err as { hint?: unknown } | null)?.hint;
  return {
    error: {
      message: err instanceof Error ? err.message : String(err),
      ...(typeof hint === 'string' ? { hint } : {}),
      exitCode,
    },
  };
}
