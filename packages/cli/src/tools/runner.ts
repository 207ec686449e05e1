import { createTwoFilesPatch } from 'diff';
import { constants, realpathSync } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import {
  CLIENT_METHODS,
  type ClientCall,
  type ClientCallResult,
  type ClientCapabilities,
  type ClientMethod,
} from '@cleveragents/contract';
import { CLIENT_TOOL_CODES, ClientToolError, invalidParams, notFound, refused } from './errors.js';
import { checkAgentEnv, commandEnvironment, trustedPathEntries, type EnvVariable } from './environment.js';
import { INSTALL_BUBBLEWRAP_HINT, Sandbox, type SandboxMode, type SandboxStatus } from './sandbox.js';
import {
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_OUTPUT_BYTE_LIMIT,
  MAX_OUTPUT_BYTE_LIMIT,
  TerminalManager,
} from './terminal.js';
import { homeProtectedPaths, runsCodeOf, secretKindOf } from './sensitive.js';
import { inToolSpan, type ToolCallNote } from './spans.js';
import { Workspace, type PreparedWrite } from './workspace.js';

/**
 * Runs the client-side calls of an orchestrated task (`cleveragents/client-request`) on this machine:
 * files in the workspace, commands in terminals, each write and command shown to the user first
 * unless the user's options approve them ahead. One runner per CLI run; `dispose()` at the end.
 */

/** What the user sees before a write: the unified diff from the file's content to the new one. */
export interface WritePreview {
  /** The file's real absolute path. */
  path: string;
  /** The same, relative to the workspace root. */
  relativePath: string;
  /** Whether the write creates the file. */
  isNew: boolean;
  /** Unified diff, old → new (`/dev/null` as the old name for a new file). */
  diff: string;
  oldContent: string;
  newContent: string;
  /** Set when the file configures code that runs later (a Git hook, an editor task): why, in words. */
  runsCode?: string;
}

/** What the user sees before a read of a secret (a key, a token file): the file and what it holds. */
export interface ReadPreview {
  /** The file's real absolute path. */
  path: string;
  /** The same, relative to the workspace root. */
  relativePath: string;
  /** What secret it holds, in words ("an SSH private key"). */
  secret: string;
}

/** What the user sees before a command runs: exactly what will run, and nothing else runs under it. */
export interface CommandPreview {
  command: string;
  args: string[];
  /** The program that runs: `command` found on PATH (absolute). */
  program: string;
  /** The real directory it runs in. */
  cwd: string;
  /** The variables the agent sets (on top of the client's few), as checked against the allow-list. */
  env: EnvVariable[];
  /** Whether it runs inside the bubblewrap sandbox. */
  sandboxed: boolean;
  /** Whether it may use the network (always true unsandboxed). */
  network: boolean;
  /** Why it is not sandboxed, when it is not. */
  sandboxReason?: string;
  /** It is killed after this long (ms). */
  timeoutMs: number;
}

export type Confirm<P> = (preview: P) => boolean | Promise<boolean>;

export interface ClientToolRunnerOptions {
  /** The workspace root (default: the current directory). */
  workspace?: string;
  /** Offer reads (default true). */
  fsRead?: boolean;
  /** Offer writes (default true; declared only when they can be approved: a callback or auto-approval). */
  fsWrite?: boolean;
  /** Offer terminals (default true; declared only when commands can be approved). */
  terminal?: boolean;
  /** Write without asking (`--allow-writes`, or the profile allows it). */
  autoApproveWrites?: boolean;
  /** Run commands without asking (`--allow-commands`). */
  autoApproveCommands?: boolean;
  /** Asks the user about a write; false (or a throw) declines it. */
  confirmWrite?: Confirm<WritePreview>;
  /** Asks the user about a read of a secret; false, a throw or none declines it (auto-approval never covers it). */
  confirmRead?: Confirm<ReadPreview>;
  /** Asks the user about a command; false (or a throw) declines it. */
  confirmCommand?: Confirm<CommandPreview>;
  /** `require` (default), `auto` or `off` (`--sandbox`). */
  sandbox?: SandboxMode;
  /** The bubblewrap binary: an absolute path, or a name found in the system folders (default `bwrap`). */
  bwrapPath?: string;
  /** Let sandboxed commands use the network (default false). */
  network?: boolean;
  /** More folders sandboxed commands may read (`--sandbox-read`). */
  sandboxReadOnly?: readonly string[];
  /** Variable names the agent may set besides the allow-list (`--allow-env`); never the loader's and the like. */
  allowEnv?: readonly string[];
  /** Kill a command after this long (ms, default 120 000; `--command-timeout SECONDS`). */
  commandTimeoutMs?: number;
  /** Output kept per terminal when the call names none (bytes, default 1 MiB). */
  defaultOutputByteLimit?: number;
  /** Largest file a read returns (bytes, default 10 MiB). */
  maxReadBytes?: number;
  /** Largest content a write accepts (bytes, default 10 MiB). */
  maxWriteBytes?: number;
  /** Told once, the first time a command runs without the sandbox, so the UI can warn. */
  onUnsandboxed?: (status: SandboxStatus) => void;
  /** The environment the minimal command environment is taken from (default process.env). */
  baseEnv?: NodeJS.ProcessEnv;
  /** Record each call's arguments and result in its span (content capture; secrets never). */
  traceContent?: boolean;
}

/** Per-call context: `signal` cancels what can be (waiting for a command's exit). */
export interface ClientCallContext {
  signal?: AbortSignal;
}

type Params = Record<string, unknown>;

function isRecord(value: unknown): value is Params {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function requiredString(params: Params, field: string): string {
  const value = params[field];
  if (value === undefined) throw invalidParams(field, 'is required');
  if (typeof value !== 'string') throw invalidParams(field, 'must be a string');
  if (value.includes('\0')) throw invalidParams(field, 'must not contain NUL characters');
  return value;
}

function nonEmptyString(params: Params, field: string): string {
  const value = requiredString(params, field);
  if (value === '') throw invalidParams(field, 'must not be empty');
  return value;
}

function optionalString(params: Params, field: string): string | undefined {
  return params[field] === undefined || params[field] === null ? undefined : nonEmptyString(params, field);
}

function optionalPositiveInteger(params: Params, field: string): number | undefined {
  const value = params[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw invalidParams(field, 'must be a positive integer');
  }
  return value;
}

function stringArray(params: Params, field: string): string[] {
  const value = params[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidParams(field, 'must be an array of strings');
  return value.map((item, i) => {
    if (typeof item !== 'string') throw invalidParams(`${field}[${i}]`, 'must be a string');
    if (item.includes('\0')) throw invalidParams(`${field}[${i}]`, 'must not contain NUL characters');
    return item;
  });
}

function envVariables(params: Params): EnvVariable[] {
  const value = params.env;
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidParams('env', 'must be an array of {name, value}');
  return value.map((item, i) => {
    if (!isRecord(item)) throw invalidParams(`env[${i}]`, 'must be an object {name, value}');
    const field = (name: string) => (problem: string) => invalidParams(`env[${i}].${name}`, problem);
    if (typeof item.name !== 'string' || item.name === '') throw field('name')('must be a non-empty string');
    if (typeof item.value !== 'string') throw field('value')('must be a string');
    if (item.value.includes('\0')) throw field('value')('must not contain NUL characters');
    return { name: item.name, value: item.value };
  });
}

function terminalId(params: Params): string {
  return nonEmptyString(params, 'terminalId');
}

/**
 * Where `command` is: a path (relative ones against `cwd`) or a name looked up on `path`'s absolute
 * entries (an empty or relative entry would make the lookup depend on the agent's cwd); undefined when not found.
 */
export async function findExecutable(command: string, path: string, cwd: string): Promise<string | undefined> {
  const candidates = command.includes('/')
    ? [isAbsolute(command) ? command : resolve(cwd, command)]
    : path
        .split(delimiter)
        .filter((dir) => isAbsolute(dir))
        .map((dir) => join(dir, command));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** The home folder with links resolved (the workspace's root is), as given when it cannot be. */
function realHome(home: string | undefined): string | undefined {
  try {
    return home === undefined ? undefined : realpathSync(home);
  } catch {
    return home;
  }
}

export class ClientToolRunner {
  readonly workspace: Workspace;
  readonly sandbox: Sandbox;
  private readonly terminals = new TerminalManager();
  /** Every terminal this runner made: each ran a command the person allowed (asked, or by their flags). */
  private readonly madeTerminals = new Set<string>();
  private readonly options: ClientToolRunnerOptions;
  private warnedUnsandboxed = false;
  private knownStatus?: SandboxStatus;
  private disposed = false;

  /** @throws Error when the workspace does not exist or is not a directory. */
  constructor(options: ClientToolRunnerOptions = {}) {
    this.options = options;
    this.workspace = new Workspace(options.workspace ?? process.cwd(), {
      maxReadBytes: options.maxReadBytes,
      maxWriteBytes: options.maxWriteBytes,
    });
    this.sandbox = new Sandbox({
      mode: options.sandbox,
      bwrapPath: options.bwrapPath,
      network: options.network,
      readOnlyPaths: options.sandboxReadOnly,
    });
  }

  /** The environment commands and the secret checks start from (the person's own). */
  private get baseEnv(): NodeJS.ProcessEnv {
    return this.options.baseEnv ?? process.env;
  }

  /** The workspace's real root. */
  get workspaceRoot(): string {
    return this.workspace.root;
  }

  /**
   * What to declare in message metadata `cleveragents/clientCapabilities`: what the options turn on,
   * writes and terminals only when they can be approved (a confirm callback or auto-approval).
   */
  capabilities(): ClientCapabilities {
    const allowed = this.allowed();
    const status = this.knownStatus;
    // Without the sandbox it requires, commands are not offered (a call that comes anyway says why).
    const noSandbox = status !== undefined && !status.sandboxed && status.mode === 'require';
    return { ...allowed, terminal: allowed.terminal && !noSandbox };
  }

  /** What the person's options allow, whatever the sandbox. */
  private allowed(): ClientCapabilities {
    const o = this.options;
    return {
      fs: {
        read: o.fsRead !== false,
        write: o.fsWrite !== false && (o.autoApproveWrites === true || o.confirmWrite !== undefined),
      },
      terminal: o.terminal !== false && (o.autoApproveCommands === true || o.confirmCommand !== undefined),
    };
  }

  /** Whether commands run sandboxed (probes bubblewrap once); once known, `capabilities()` reflects it. */
  async sandboxStatus(): Promise<SandboxStatus> {
    this.knownStatus = await this.sandbox.status();
    return this.knownStatus;
  }

  /**
   * Runs one call as the server sent it (a ClientCall, unless the server erred: it is checked here);
   * never throws: every failure is the result's `error`, which names the call's id when it has one.
   */
  run(call: unknown, ctx: ClientCallContext = {}): Promise<ClientCallResult> {
    return inToolSpan(call, this.options.traceContent === true, (note) => this.runCall(call, ctx, note));
  }

  private async runCall(call: unknown, ctx: ClientCallContext, note: ToolCallNote): Promise<ClientCallResult> {
    const id = isRecord(call) && typeof call.id === 'string' ? call.id : '';
    try {
      const result = await this.dispatch(call, ctx, note);
      return { id, result };
    } catch (error) {
      if (error instanceof ClientToolError) {
        // Refused by the workspace's confinement, the sandbox or the person: denied, whatever was allowed ahead.
        if (error.code === CLIENT_TOOL_CODES.REFUSED) note.decision = 'denied';
        return { id, error: error.toCallError() };
      }
      const message = error instanceof Error ? error.message : String(error);
      return {
        id,
        error: {
          code: CLIENT_TOOL_CODES.INTERNAL,
          message: `The client failed: ${message}`,
          data: { reason: 'IO_ERROR' },
        },
      };
    }
  }

  /** Runs every call of a client-request, in order. */
  async runAll(calls: readonly ClientCall[], ctx: ClientCallContext = {}): Promise<ClientCallResult[]> {
    const results: ClientCallResult[] = [];
    for (const call of calls) results.push(await this.run(call, ctx));
    return results;
  }

  /** Whether `terminalId` names a terminal this runner made (released since or not). */
  madeTerminal(terminalId: string): boolean {
    return this.madeTerminals.has(terminalId);
  }

  /** Kills every command still running and forgets every terminal; later calls are refused. */
  async dispose(): Promise<void> {
    this.disposed = true;
    await this.terminals.dispose();
    this.workspace.close();
  }

  private async dispatch(call: unknown, ctx: ClientCallContext, note: ToolCallNote): Promise<unknown> {
    if (this.disposed) throw new ClientToolError(CLIENT_TOOL_CODES.REFUSED, 'DISPOSED', 'The client is shutting down');
    if (ctx.signal?.aborted) throw new ClientToolError(CLIENT_TOOL_CODES.REFUSED, 'ABORTED', 'The call was canceled');
    if (!isRecord(call)) throw invalidParams('call', 'must be an object {id, method, params}');
    const method = call.method;
    if (typeof method !== 'string' || !(CLIENT_METHODS as readonly string[]).includes(method)) {
      throw new ClientToolError(
        CLIENT_TOOL_CODES.METHOD_NOT_SUPPORTED,
        'METHOD_NOT_SUPPORTED',
        `This client does not run ${typeof method === 'string' ? method : 'that method'}`,
        { method },
      );
    }
    note.decision = 'denied';
    this.offered(method as ClientMethod);
    // Until a question or the sandbox decides otherwise: the person's flags (or no question needed).
    note.decision = 'allowed';
    const params = call.params ?? {};
    if (!isRecord(params)) throw invalidParams('params', 'must be an object');
    switch (method as ClientMethod) {
      case 'fs/read_text_file':
        return this.read(params, note);
      case 'fs/write_text_file':
        return this.write(params, note);
      case 'terminal/create':
        return this.createTerminal(params, note);
      case 'terminal/output':
        return this.terminals.output(terminalId(params));
      case 'terminal/wait_for_exit':
        return this.terminals.waitForExit(terminalId(params), ctx.signal);
      case 'terminal/kill':
        this.terminals.kill(terminalId(params));
        return {};
      case 'terminal/release':
        this.terminals.release(terminalId(params));
        return {};
    }
  }

  /** Refuses a method the capabilities do not declare. */
  private offered(method: ClientMethod): void {
    const caps = this.allowed();
    const on =
      method === 'fs/read_text_file' ? caps.fs.read : method === 'fs/write_text_file' ? caps.fs.write : caps.terminal;
    if (!on) {
      throw new ClientToolError(
        CLIENT_TOOL_CODES.METHOD_NOT_SUPPORTED,
        'METHOD_NOT_SUPPORTED',
        `The user did not allow ${method} on this client`,
        { method },
      );
    }
  }

  private async read(params: Params, note: ToolCallNote): Promise<{ content: string }> {
    const path = nonEmptyString(params, 'path');
    const line = optionalPositiveInteger(params, 'line');
    const limit = optionalPositiveInteger(params, 'limit');
    const file = await this.workspace.readTextFile(path, { line, limit });
    // Judged on the file actually read, not on a path checked before.
    const secret = secretKindOf(file.path.real, this.baseEnv);
    if (secret !== undefined) {
      note.secret = true;
      const preview: ReadPreview = { path: file.path.real, relativePath: file.path.relative, secret };
      const why = await this.decide(note, this.options.confirmRead, preview);
      if (why !== undefined) {
        throw refused('READ_DECLINED', `The user declined to hand out ${path}, ${secret}${why}`, {
          path: file.path.real,
          secret,
        });
      }
    }
    return { content: file.content };
  }

  /**
   * What the user would be shown for a write, through the same confinement and limits as the write
   * itself; nothing is written. Throws the write's refusal (outside, a FIFO, too large...).
   */
  async previewWrite(path: string, content: string): Promise<WritePreview> {
    return this.writePreview(await this.workspace.prepareWrite(path, content));
  }

  private writePreview(prepared: PreparedWrite): WritePreview {
    const rel = prepared.path.relative;
    const { isNew, oldContent, newContent } = prepared;
    const runsCode = runsCodeOf(prepared.path.real, rel, this.baseEnv);
    return {
      path: prepared.path.real,
      relativePath: rel,
      isNew,
      diff: createTwoFilesPatch(isNew ? '/dev/null' : `a/${rel}`, `b/${rel}`, oldContent, newContent),
      oldContent,
      newContent,
      ...(runsCode !== undefined ? { runsCode } : {}),
    };
  }

  private async write(params: Params, note: ToolCallNote): Promise<Record<string, never>> {
    const path = nonEmptyString(params, 'path');
    const content = requiredString(params, 'content');
    const prepared = await this.workspace.prepareWrite(path, content);
    note.secret = secretKindOf(prepared.path.real, this.baseEnv) !== undefined;
    if (!prepared.isNew && prepared.oldContent === content) return {};
    const preview = this.writePreview(prepared);
    // A write that configures code run later is asked about like a command, whatever was approved ahead.
    if (!this.options.autoApproveWrites || preview.runsCode !== undefined) {
      const why = await this.decide(note, this.options.confirmWrite, preview);
      if (why !== undefined) {
        const runs = preview.runsCode !== undefined ? ` (${preview.runsCode}: it runs code later)` : '';
        throw refused('WRITE_DECLINED', `The user declined the write to ${path}${runs}${why}`, {
          path: prepared.path.real,
          ...(preview.runsCode !== undefined ? { runsCode: true } : {}),
        });
      }
    }
    await this.workspace.commitWrite(prepared);
    return {};
  }

  /** Asks as `ask` does, noting the decision for the call's span. */
  private async decide<P>(
    note: ToolCallNote,
    confirm: Confirm<P> | undefined,
    preview: P,
  ): Promise<string | undefined> {
    const why = await this.ask(confirm, preview);
    note.decision = why === undefined ? 'asked' : 'denied';
    return why;
  }

  /** Asks a confirm callback: undefined when approved, else what to add to the message. */
  private async ask<P>(confirm: Confirm<P> | undefined, preview: P): Promise<string | undefined> {
    if (!confirm) return ' (this client cannot ask for approval)';
    try {
      return (await confirm(preview)) === true ? undefined : '';
    } catch (error) {
      return ` (asking failed: ${error instanceof Error ? error.message : String(error)})`;
    }
  }

  private async createTerminal(params: Params, note: ToolCallNote): Promise<{ terminalId: string }> {
    const command = nonEmptyString(params, 'command');
    const args = stringArray(params, 'args');
    const asked = envVariables(params);
    const cwdParam = optionalString(params, 'cwd');
    const outputByteLimit = Math.min(
      optionalPositiveInteger(params, 'outputByteLimit') ??
        this.options.defaultOutputByteLimit ??
        DEFAULT_OUTPUT_BYTE_LIMIT,
      MAX_OUTPUT_BYTE_LIMIT,
    );
    const status = await this.sandbox.status();
    note.sandboxed = status.sandboxed;
    if (!status.sandboxed && status.mode === 'require') {
      note.decision = 'denied';
      throw refused(
        'SANDBOX_REQUIRED',
        `Commands run only in a sandbox, and bubblewrap is not available: ${status.reason}. ` +
          `To run commands, ${INSTALL_BUBBLEWRAP_HINT}, or allow unsandboxed commands for this run (--sandbox auto or off).`,
        { bwrapPath: status.bwrapPath },
      );
    }
    this.terminals.checkRoom();
    const cwd = await this.workspace.directory(cwdParam);
    const base = this.baseEnv;
    const env = checkAgentEnv(asked, {
      workspace: this.workspace.root,
      sandboxed: status.sandboxed,
      allowed: this.options.allowEnv,
      trustedPath: trustedPathEntries(base.PATH),
    });
    const commandEnv = commandEnvironment(base, env);
    const program = await findExecutable(command, commandEnv.PATH, cwd);
    if (program === undefined) {
      throw notFound('COMMAND_NOT_FOUND', `Command not found: ${command} (looked for on PATH ${commandEnv.PATH})`, {
        command,
      });
    }
    const timeoutMs = this.options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    const preview: CommandPreview = {
      command,
      args,
      program,
      cwd,
      env,
      sandboxed: status.sandboxed,
      network: status.sandboxed ? status.network : true,
      ...(status.reason !== undefined ? { sandboxReason: status.reason } : {}),
      timeoutMs,
    };
    const display = [command, ...args].join(' ');
    if (this.options.autoApproveCommands) note.decision = status.sandboxed ? 'sandboxed' : 'allowed';
    else {
      const why = await this.decide(note, this.options.confirmCommand, preview);
      if (why !== undefined) {
        throw refused('COMMAND_DECLINED', `The user declined to run ${display}${why}`, { command });
      }
    }
    if (!status.sandboxed && !this.warnedUnsandboxed) {
      this.warnedUnsandboxed = true;
      this.options.onUnsandboxed?.(status);
    }
    const launch = status.sandboxed
      ? this.sandbox.wrap({
          workspace: this.workspace.root,
          cwd,
          program,
          args,
          env: commandEnv,
          home: base.HOME,
          ...homeProtectedPaths({ HOME: realHome(base.HOME), XDG_CONFIG_HOME: base.XDG_CONFIG_HOME }),
        })
      : { command: program, args, env: commandEnv };
    const terminalId = await this.terminals.create({
      ...launch,
      cwd,
      outputByteLimit,
      timeoutMs,
      displayCommand: display,
    });
    this.madeTerminals.add(terminalId);
    return { terminalId };
  }
}
