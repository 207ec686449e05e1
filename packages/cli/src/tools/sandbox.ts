import { spawn } from 'node:child_process';
import { accessSync, constants, lstatSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { isWithin } from './paths.js';

/**
 * Commands run inside bubblewrap (`bwrap`): they see the system's programs and libraries read-only,
 * the workspace read-write (its `.git` read-only), an empty throwaway home, /tmp and /run, no host
 * sockets, no network unless allowed, and die with the client. bwrap itself comes from a fixed system
 * folder and starts with an empty environment: nothing the agent sends reaches the sandbox's own start.
 */

export const SANDBOX_MODES = ['require', 'auto', 'off'] as const;
/**
 * `require` (default): commands run only in the sandbox, refused without it; `auto`: sandbox when
 * bubblewrap works, else run unsandboxed (the person chose it); `off`: never sandbox.
 */
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
  /** The bubblewrap binary used or probed (an absolute path once found). */
  bwrapPath: string;
}

export interface SandboxOptions {
  mode?: SandboxMode;
  /** The bubblewrap binary: an absolute path, or a name looked up in the system folders only; default `bwrap`. */
  bwrapPath?: string;
  /** Let sandboxed commands use the network (default: no network). */
  network?: boolean;
  /** More folders commands may read (a tool installed in your home); each must be absolute. */
  readOnlyPaths?: readonly string[];
}

/** How to install bubblewrap, for messages. */
export const INSTALL_BUBBLEWRAP_HINT =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora/RHEL: dnf install bubblewrap)';

/** Where bubblewrap is looked for: system folders only, never the PATH an agent or a workspace could shape. */
export const SYSTEM_BIN_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin'] as const;

/** System folders a command sees, read-only (those that exist here). */
export const SANDBOX_SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt'] as const;

/**
 * What of /etc a command sees: what programs need to load, resolve names and users, read certificates
 * and time zones. Not the rest (ssh host keys, shadow files, service configs with passwords).
 */
export const SANDBOX_ETC_ENTRIES = [
  'alternatives',
  'bash.bashrc',
  'ca-certificates',
  'ca-certificates.conf',
  'crypto-policies',
  'debian_version',
  'gai.conf',
  'gitconfig',
  'group',
  'host.conf',
  'hostname',
  'hosts',
  'inputrc',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'locale.alias',
  'localtime',
  'login.defs',
  'mime.types',
  'nsswitch.conf',
  'os-release',
  'passwd',
  'pki',
  'profile',
  'protocols',
  'resolv.conf',
  'services',
  'shells',
  'ssl',
  'terminfo',
  'timezone',
] as const;

const PROBE_TIMEOUT_MS = 10_000;

/** An executable regular file, or undefined. */
function executableFile(path: string): string | undefined {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile() ? path : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The bubblewrap binary to run: an absolute path as given, or the name found in SYSTEM_BIN_DIRS.
 * Never a relative path, never a PATH lookup: both could lead into a folder the agent writes.
 */
export function resolveBubblewrap(bwrapPath = 'bwrap'): { path: string; found: boolean } {
  if (isAbsolute(bwrapPath)) return { path: bwrapPath, found: executableFile(bwrapPath) !== undefined };
  if (bwrapPath.includes('/')) return { path: bwrapPath, found: false };
  for (const dir of SYSTEM_BIN_DIRS) {
    const candidate = executableFile(join(dir, bwrapPath));
    if (candidate) return { path: candidate, found: true };
  }
  return { path: bwrapPath, found: false };
}

const PROBE_ARGS = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-all', 'true'];

/** Whether bubblewrap runs a trivial sandboxed command: undefined when it does, else why not. */
export function probeBubblewrap(bwrapPath: string): Promise<string | undefined> {
  const bwrap = resolveBubblewrap(bwrapPath);
  if (!bwrap.found) {
    const where = isAbsolute(bwrapPath) ? '' : ` in ${SYSTEM_BIN_DIRS.join(', ')}`;
    return Promise.resolve(`${bwrapPath} was not found${where}`);
  }
  return new Promise((done) => {
    let output = '';
    let settled = false;
    const finish = (why: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done(why);
    };
    const child = spawn(bwrap.path, PROBE_ARGS, { stdio: ['ignore', 'ignore', 'pipe'], env: {} });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(`${bwrap.path} did not finish its probe within ${PROBE_TIMEOUT_MS / 1000} s`);
    }, PROBE_TIMEOUT_MS);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (output.length < 2000) output += chunk;
    });
    child.on('error', (error: NodeJS.ErrnoException) =>
      finish(
        error.code === 'ENOENT' ? `${bwrap.path} was not found` : `${bwrap.path} failed to start: ${error.message}`,
      ),
    );
    child.on('close', (code, signal) => {
      if (code === 0) return finish(undefined);
      const said = output.trim() ? `: ${output.trim()}` : '';
      finish(`${bwrap.path} does not work here (exit ${code ?? signal})${said}`);
    });
  });
}

/** What the sandbox of one command is made of. */
export interface SandboxLaunch {
  workspace: string;
  cwd: string;
  /** The program, an absolute path. */
  program: string;
  args: readonly string[];
  /** The command's whole environment (bwrap itself gets none of it). */
  env: Readonly<Record<string, string>>;
  /** The home folder to show empty and writable (the command's HOME). */
  home?: string;
  /** Paths the workspace may hold that a command must not see (credentials): emptied in the sandbox. */
  hide?: readonly string[];
  /** Paths the workspace may hold that a command must not change (startup files): read-only. */
  readOnly?: readonly string[];
}

/** The sandbox of one CLI run: probed once, on first use. */
export class Sandbox {
  readonly mode: SandboxMode;
  readonly bwrapPath: string;
  readonly network: boolean;
  readonly readOnlyPaths: readonly string[];
  private probed?: Promise<SandboxStatus>;

  constructor(options: SandboxOptions = {}) {
    this.mode = options.mode ?? 'require';
    // Resolved now, before any agent input exists.
    this.bwrapPath = resolveBubblewrap(options.bwrapPath ?? 'bwrap').path;
    this.network = options.network ?? false;
    this.readOnlyPaths = (options.readOnlyPaths ?? []).map((path) => {
      if (!isAbsolute(path)) throw new Error(`A folder the sandbox may read must be absolute: ${path}`);
      return path;
    });
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
   * The command line that runs a command in the sandbox. Order matters: bwrap mounts in argument order,
   * so the workspace goes over the empty home (a workspace inside it), and `.git` read-only over the
   * workspace. Started with an empty environment; the command's own comes in through --setenv.
   */
  wrap(launch: SandboxLaunch): { command: string; args: string[]; env: Record<string, string> } {
    const args: string[] = [];
    for (const dir of SANDBOX_SYSTEM_DIRS) args.push('--ro-bind-try', dir, dir);
    for (const entry of SANDBOX_ETC_ENTRIES) args.push('--ro-bind-try', `/etc/${entry}`, `/etc/${entry}`);
    args.push('--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/run', '--tmpfs', '/var/tmp');
    if (launch.home && launch.home !== '/') args.push('--tmpfs', launch.home);
    for (const dir of this.readOnlyPaths) args.push('--ro-bind-try', dir, dir);
    args.push('--bind', launch.workspace, launch.workspace);
    // Code that runs later, outside the sandbox (hooks, config), lives in .git: read-only in here.
    const git = join(launch.workspace, '.git');
    if (entryKind(git) !== undefined) args.push('--ro-bind', git, git);
    // A workspace that takes in the home folder: its credentials hidden, its startup files read-only.
    for (const path of (launch.hide ?? []).filter((p) => isWithin(p, launch.workspace))) {
      const kind = entryKind(path);
      if (kind === 'dir') args.push('--tmpfs', path);
      else if (kind === 'file') args.push('--ro-bind', '/dev/null', path);
    }
    for (const path of (launch.readOnly ?? []).filter((p) => isWithin(p, launch.workspace))) {
      if (entryKind(path) !== undefined) args.push('--ro-bind', path, path);
    }
    args.push('--unshare-all', ...(this.network ? ['--share-net'] : []));
    // No --new-session: the command's process group must hold bubblewrap's helper inside the sandbox (the
    // sandbox's first process), so that killing the group tears the whole sandbox down, even in the moments
    // bubblewrap is still setting it up, before --die-with-parent holds (a helper that had left the group
    // then lived on with the command). The terminal starts it in a new session with no controlling terminal
    // and its output on pipes, so it has no terminal to type into (what --new-session guards against).
    args.push('--die-with-parent', '--clearenv');
    for (const [name, value] of Object.entries(launch.env)) args.push('--setenv', name, value);
    args.push('--chdir', launch.cwd, '--', launch.program, ...launch.args);
    return { command: this.bwrapPath, args, env: {} };
  }
}

/** A directory or regular file, never followed through a symbolic link (a link could point a bind anywhere). */
function entryKind(path: string): 'dir' | 'file' | undefined {
  try {
    const stats = lstatSync(path);
    return stats.isDirectory() ? 'dir' : stats.isFile() ? 'file' : undefined;
  } catch {
    return undefined;
  }
}
