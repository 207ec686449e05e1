import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { CLIENT_TOOL_CODES, ClientToolError, notFound, refused } from './errors.js';

/**
 * Terminals as the Agent Client Protocol has them: `create` starts a command and returns at once;
 * its stdout and stderr go, interleaved, into one buffer that keeps the last `outputByteLimit` bytes;
 * `output` reads it, `waitForExit` waits, `kill` stops the command but keeps the terminal, `release`
 * kills and forgets it. Commands run without a shell, in their own process group, which a timeout,
 * `kill`, `release` and `dispose` kill whole.
 */

/** Output kept per terminal when the call names no limit (bytes). */
export const DEFAULT_OUTPUT_BYTE_LIMIT = 1024 * 1024;
/** The most output a terminal keeps, whatever the call asks (bytes). */
export const MAX_OUTPUT_BYTE_LIMIT = 16 * 1024 * 1024;
/** How long a command may run before it is killed (ms). */
export const DEFAULT_COMMAND_TIMEOUT_MS = 120_000;
/** After a command exits, how long to wait for descendants still holding its output open (ms). */
const OUTPUT_DRAIN_MS = 1000;

/** How many terminals a run holds at once (running or exited, not released): each keeps its output. */
export const MAX_TERMINALS = 16;

export interface TerminalExitStatus {
  exitCode: number | null;
  signal: string | null;
}

/** `terminal/output`'s result; `timedOut` is set when the timeout killed the command. */
export interface TerminalOutputResult {
  output: string;
  truncated: boolean;
  exitStatus?: TerminalExitStatus;
  timedOut?: true;
}

/** `terminal/wait_for_exit`'s result. */
export type TerminalExitResult = TerminalExitStatus & { timedOut?: true };

/** A command to start: the program and its arguments as spawned (already wrapped when sandboxed). */
export interface TerminalLaunch {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  outputByteLimit: number;
  timeoutMs: number;
  /** The command as the agent named it, for messages. */
  displayCommand: string;
}

/** The last `limit` bytes of a stream, read back as text cut on character boundaries. */
export class OutputTail {
  private buffer = Buffer.alloc(0);
  truncated = false;

  constructor(readonly limit: number) {}

  append(chunk: Buffer): void {
    const total = this.buffer.length + chunk.length;
    if (total <= this.limit) {
      this.buffer = Buffer.concat([this.buffer, chunk], total);
      return;
    }
    this.truncated = true;
    if (chunk.length >= this.limit) {
      this.buffer = Buffer.from(chunk.subarray(chunk.length - this.limit));
    } else {
      const keep = this.limit - chunk.length;
      this.buffer = Buffer.concat([this.buffer.subarray(this.buffer.length - keep), chunk], this.limit);
    }
  }

  /** The text: a UTF-8 sequence cut by truncation at the start, or unfinished at the end, is left out. */
  text(): string {
    const bytes = this.buffer;
    let start = 0;
    if (this.truncated) while (start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++;
    let end = bytes.length;
    let lead = end - 1;
    while (lead >= start && end - lead < 4 && (bytes[lead] & 0xc0) === 0x80) lead--;
    if (lead >= start && bytes[lead] >= 0xc0) {
      const length = bytes[lead] >= 0xf0 ? 4 : bytes[lead] >= 0xe0 ? 3 : 2;
      if (end - lead < length) end = lead;
    }
    return bytes.subarray(start, end).toString('utf8');
  }
}

class Terminal {
  readonly output: OutputTail;
  exitStatus?: TerminalExitStatus;
  timedOut = false;
  readonly exited: Promise<TerminalExitStatus>;
  private timer?: NodeJS.Timeout;

  constructor(
    readonly id: string,
    readonly child: ChildProcess,
    launch: TerminalLaunch,
  ) {
    this.output = new OutputTail(launch.outputByteLimit);
    const take = (chunk: Buffer) => this.output.append(chunk);
    child.stdout?.on('data', take);
    child.stderr?.on('data', take);
    this.exited = new Promise((resolve) => {
      let drain: NodeJS.Timeout | undefined;
      const finish = () => {
        clearTimeout(drain);
        clearTimeout(this.timer);
        resolve(this.exitStatus!);
      };
      child.on('exit', (code, signal) => {
        this.exitStatus = { exitCode: code, signal };
        // Descendants may keep the pipes open; do not wait on them for long.
        drain = setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          finish();
        }, OUTPUT_DRAIN_MS);
        drain.unref();
      });
      child.on('close', (code, signal) => {
        this.exitStatus ??= { exitCode: code, signal };
        finish();
      });
    });
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.kill();
    }, launch.timeoutMs);
    this.timer.unref();
  }

  get running(): boolean {
    return this.exitStatus === undefined;
  }

  /** Kills the command's whole process group (it leads one). */
  kill(): void {
    clearTimeout(this.timer);
    if (!this.running || this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      this.child.kill('SIGKILL');
    }
  }

  exitResult(status: TerminalExitStatus): TerminalExitResult {
    return this.timedOut ? { ...status, timedOut: true } : { ...status };
  }
}

export class TerminalManager {
  private readonly terminals = new Map<string, Terminal>();
  private disposed = false;
  private readonly onProcessExit = () => {
    for (const terminal of this.terminals.values()) terminal.kill();
  };

  /** How many terminals are known (running or exited, not released). */
  get size(): number {
    return this.terminals.size;
  }

  /** Refuses a new terminal when the run already holds MAX_TERMINALS. */
  checkRoom(): void {
    if (this.terminals.size >= MAX_TERMINALS) {
      throw refused(
        'TOO_MANY_TERMINALS',
        `This run already holds ${this.terminals.size} terminals, the most it keeps; release one (terminal/release) first`,
        { limit: MAX_TERMINALS },
      );
    }
  }

  /** Starts a command; resolves once it runs (or fails when it cannot start). */
  async create(launch: TerminalLaunch): Promise<string> {
    if (this.disposed) throw new ClientToolError(CLIENT_TOOL_CODES.REFUSED, 'DISPOSED', 'The client is shutting down');
    this.checkRoom();
    const child = spawn(launch.command, launch.args, {
      cwd: launch.cwd,
      env: launch.env,
      // Its own session and process group, with no controlling terminal: the sandbox relies on it (sandbox.ts).
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') {
          reject(
            notFound('COMMAND_NOT_FOUND', `Command not found: ${launch.displayCommand}`, {
              command: launch.displayCommand,
            }),
          );
        } else {
          reject(
            new ClientToolError(
              CLIENT_TOOL_CODES.INTERNAL,
              'IO_ERROR',
              `Cannot start ${launch.displayCommand}: ${error.message}`,
              { command: launch.displayCommand, ...(error.code ? { errno: error.code } : {}) },
            ),
          );
        }
      });
    });
    child.on('error', () => undefined);
    const id = `term_${randomBytes(8).toString('hex')}`;
    const terminal = new Terminal(id, child, launch);
    if (this.terminals.size === 0) process.on('exit', this.onProcessExit);
    this.terminals.set(id, terminal);
    return id;
  }

  private get(id: string): Terminal {
    const terminal = this.terminals.get(id);
    if (!terminal) {
      throw notFound('UNKNOWN_TERMINAL', `No terminal ${id} (never created, or released)`, { terminalId: id });
    }
    return terminal;
  }

  output(id: string): TerminalOutputResult {
    const terminal = this.get(id);
    return {
      output: terminal.output.text(),
      truncated: terminal.output.truncated,
      ...(terminal.exitStatus ? { exitStatus: { ...terminal.exitStatus } } : {}),
      ...(terminal.timedOut ? { timedOut: true as const } : {}),
    };
  }

  /** Waits for the command to exit; `signal` gives up waiting (the command keeps running). */
  async waitForExit(id: string, signal?: AbortSignal): Promise<TerminalExitResult> {
    const terminal = this.get(id);
    if (!signal) return terminal.exitResult(await terminal.exited);
    if (signal.aborted) throw aborted();
    let onAbort: (() => void) | undefined;
    try {
      const status = await Promise.race([
        terminal.exited,
        new Promise<never>((_, reject) => {
          onAbort = () => reject(aborted());
          signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
      return terminal.exitResult(status);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  /** Kills the command; the terminal stays, with its output and exit status. */
  kill(id: string): void {
    this.get(id).kill();
  }

  /** Kills the command if it still runs and forgets the terminal. */
  release(id: string): void {
    const terminal = this.get(id);
    terminal.kill();
    this.forget(id);
  }

  private forget(id: string): void {
    this.terminals.delete(id);
    if (this.terminals.size === 0) process.off('exit', this.onProcessExit);
  }

  /** Kills every command and waits (a few seconds at most) for them to be gone. */
  async dispose(): Promise<void> {
    this.disposed = true;
    const all = [...this.terminals.values()];
    for (const terminal of all) terminal.kill();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(all.map((t) => t.exited)),
      new Promise((resolve) => {
        timer = setTimeout(resolve, 5000);
      }),
    ]);
    clearTimeout(timer);
    for (const terminal of all) this.forget(terminal.id);
  }
}

function aborted(): ClientToolError {
  return new ClientToolError(CLIENT_TOOL_CODES.REFUSED, 'ABORTED', 'Stopped waiting: the call was canceled');
}
