import { spawn } from 'node:child_process';

/**
 * Commands run inside bubblewrap (`bwrap`) when it works here: the whole filesystem read-only except
 * the workspace, a fresh /tmp, a minimal /dev and /proc, no network unless allowed, and the command
 * killed with its sandbox when the client dies.
 */

export const SANDBOX_MODES = ['auto', 'require', 'off'] as const;
/** `auto`: sandbox when bubblewrap works, else run unsandboxed (and say so); `require`: refuse without it; `off`: never. */
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** What the UI shows about the sandbox: whether commands run in one, and why not. */
export interface SandboxStatus {
  mode: SandboxMode;
  /** Whether commands run inside bubblewrap. */
  sandboxed: boolean;
  /** Whether sandboxed commands may use the network. */
  network: boolean;
  /** Why commands are not sandboxed (mode off, bubblewrap missing or not working). */
  reason?: string;
  /** The bubblewrap binary used or probed. */
  bwrapPath: string;
}

export interface SandboxOptions {
  mode?: SandboxMode;
  /** The bubblewrap binary (a name looked up on PATH, or a path); default `bwrap`. */
  bwrapPath?: string;
  /** Let sandboxed commands use the network (default: no network). */
  network?: boolean;
}

/** How to install bubblewrap, for messages. */
export const INSTALL_BUBBLEWRAP_HINT =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora/RHEL: dnf install bubblewrap)';

const PROBE_ARGS = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-all', 'true'];
const PROBE_TIMEOUT_MS = 10_000;

/** Whether bubblewrap runs a trivial sandboxed command: undefined when it does, else why not. */
export function probeBubblewrap(bwrapPath: string): Promise<string | undefined> {
  return new Promise((done) => {
    let output = '';
    let settled = false;
    const finish = (why: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done(why);
    };
    const child = spawn(bwrapPath, PROBE_ARGS, { stdio: ['ignore', 'ignore', 'pipe'] });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(`${bwrapPath} did not finish its probe within ${PROBE_TIMEOUT_MS / 1000} s`);
    }, PROBE_TIMEOUT_MS);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (output.length < 2000) output += chunk;
    });
    child.on('error', (error: NodeJS.ErrnoException) =>
      finish(error.code === 'ENOENT' ? `${bwrapPath} was not found` : `${bwrapPath} failed to start: ${error.message}`),
    );
    child.on('close', (code, signal) => {
      if (code === 0) return finish(undefined);
      const said = output.trim() ? `: ${output.trim()}` : '';
      finish(`${bwrapPath} does not work here (exit ${code ?? signal})${said}`);
    });
  });
}

/** The sandbox of one CLI run: probed once, on first use. */
export class Sandbox {
  readonly mode: SandboxMode;
  readonly bwrapPath: string;
  readonly network: boolean;
  private probed?: Promise<SandboxStatus>;

  constructor(options: SandboxOptions = {}) {
    this.mode = options.mode ?? 'auto';
    this.bwrapPath = options.bwrapPath ?? 'bwrap';
    this.network = options.network ?? false;
  }

  /** Whether commands run sandboxed; probes bubblewrap the first time (never for mode `off`). */
  status(): Promise<SandboxStatus> {
    this.probed ??= this.probe();
    return this.probed;
  }

  private async probe(): Promise<SandboxStatus> {
    const base = { mode: this.mode, network: this.network, bwrapPath: this.bwrapPath };
    if (this.mode === 'off') return { ...base, sandboxed: false, reason: 'the sandbox is turned off (--sandbox off)' };
    const why = await probeBubblewrap(this.bwrapPath);
    return why === undefined ? { ...base, sandboxed: true } : { ...base, sandboxed: false, reason: why };
  }

  /**
   * The command line that runs `command args` in the sandbox: everything read-only, the workspace
   * read-write at the same path, a fresh /tmp, namespaces unshared (the network too unless allowed).
   */
  wrap(workspace: string, cwd: string, command: string, args: readonly string[]): { command: string; args: string[] } {
    return {
      command: this.bwrapPath,
      args: [
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--tmpfs',
        '/tmp',
        '--bind',
        workspace,
        workspace,
        '--unshare-all',
        ...(this.network ? ['--share-net'] : []),
        '--die-with-parent',
        '--new-session',
        '--chdir',
        cwd,
        '--',
        command,
        ...args,
      ],
    };
  }
}
