import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { CliHome, CliRun } from './cli.js';
import { CLI_BIN } from './terminal.js';

/**
 * A user's machine for the client's security tests: a temporary HOME holding what an agent must never
 * reach (an SSH key, stored logins, a .env, a secret file), each with a unique text to look for, and a
 * workspace inside it (`project/`). Markers are files an escape would create outside the workspace.
 */
export interface HostileHome extends CliHome {
  /** The workspace, HOME/project (real path). */
  readonly workspace: string;
  /** The secret files' paths: ~/.ssh/id_rsa, ~/.config/cleveragents/credentials.json, ~/.env, ~/secret.txt. */
  readonly secretFiles: readonly string[];
  /** The unique texts the secret files hold: none may ever reach the agent. */
  readonly secrets: readonly string[];
  /** A path outside the workspace (in HOME) that only an escape would create. */
  readonly marker: (name: string) => string;
  /** The files outside the workspace that were not there when the home was made, relative to HOME. */
  readonly newOutside: () => string[];
}

function filesUnder(dir: string, skip: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (path === skip) continue;
    if (entry.isDirectory()) found.push(...filesUnder(path, skip));
    else found.push(path);
  }
  return found;
}

/**
 * Where the homes go: /var/tmp when it can be written, as a real HOME is not under /tmp, which a
 * sandbox may replace with an empty one (hiding what it should be shown to keep out of reach).
 */
function homesBase(): string {
  try {
    accessSync('/var/tmp', constants.W_OK);
    return '/var/tmp';
  } catch {
    return tmpdir();
  }
}

export async function hostileHome(): Promise<HostileHome> {
  const dir = realpathSync(await mkdtemp(join(homesBase(), 'cleveragents-hostile-')));
  const workspace = join(dir, 'project');
  await mkdir(workspace);
  const token = () => `SECRET-${randomBytes(9).toString('hex')}`;
  const [ssh, login, dotenv, plain] = [token(), token(), token(), token()];
  const sshKey = join(dir, '.ssh', 'id_rsa');
  const credentials = join(dir, '.config', 'cleveragents', 'credentials.json');
  const envFile = join(dir, '.env');
  const secretTxt = join(dir, 'secret.txt');
  await mkdir(join(dir, '.ssh'), { mode: 0o700 });
  await writeFile(sshKey, `-----BEGIN OPENSSH PRIVATE KEY-----\n${ssh}\n-----END OPENSSH PRIVATE KEY-----\n`, {
    mode: 0o600,
  });
  await mkdir(join(dir, '.config', 'cleveragents'), { recursive: true, mode: 0o700 });
  const stored = {
    contexts: {},
    servers: { 'https://prod.example': { apiKey: login, savedAt: '2026-01-01T00:00:00Z' } },
  };
  await writeFile(credentials, JSON.stringify(stored), { mode: 0o600 });
  await writeFile(envFile, `DATABASE_PASSWORD=${dotenv}\n`, { mode: 0o600 });
  await writeFile(secretTxt, `${plain}\n`, { mode: 0o600 });
  const before = new Set(filesUnder(dir, workspace));
  return {
    dir,
    workspace,
    env: { HOME: dir, XDG_CONFIG_HOME: join(dir, '.config'), XDG_DATA_HOME: join(dir, '.local', 'share') },
    secretFiles: [sshKey, credentials, envFile, secretTxt],
    secrets: [ssh, login, dotenv, plain],
    marker: (name) => join(dir, `marker-${name}`),
    newOutside: () =>
      filesUnder(dir, workspace)
        .filter((path) => !before.has(path))
        .map((path) => relative(dir, path)),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Writes an executable shell script. */
export async function script(path: string, body: string): Promise<void> {
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
}

/** A symlink at `link` to `target`. */
export function link(target: string, path: string): Promise<void> {
  return symlink(target, path);
}

/** Whether gcc can build a shared object here: undefined when it can, else why not. */
export function gccMissing(): string | undefined {
  const probe = spawnSync('gcc', ['--version'], { encoding: 'utf8' });
  return probe.error || probe.status !== 0
    ? `gcc is not available (${probe.error?.message ?? probe.status})`
    : undefined;
}

/** Builds `out`, a shared object whose constructor writes `marker` when any program loads it. */
export function buildPreloadObject(out: string, marker: string): void {
  const source = `#include <stdio.h>
__attribute__((constructor)) static void preloaded(void) {
  FILE *f = fopen(${JSON.stringify(marker)}, "w");
  if (f) { fputs("loaded\\n", f); fclose(f); }
}
`;
  const built = spawnSync('gcc', ['-shared', '-fPIC', '-x', 'c', '-o', out, '-'], { input: source, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`gcc failed: ${built.stderr}`);
}

/** Why a working bubblewrap is missing here (undefined when `bwrap` runs a sandboxed `true`). */
export function bubblewrapMissing(): string | undefined {
  const bwrap = process.env.CLEVERAGENTS_TEST_BWRAP || 'bwrap';
  const probe = spawnSync(bwrap, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-all', 'true'], {
    encoding: 'utf8',
  });
  return probe.error || probe.status !== 0
    ? `bubblewrap (${bwrap}) is not available (${(probe.error?.message ?? probe.stderr.trim()) || `exit ${probe.status}`})`
    : undefined;
}

/** The pids of processes whose command line holds `word` as one of its arguments. */
export function processesWith(word: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes(word)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** The places bubblewrap is installed at on this machine's usual paths (the client may look there). */
export function bubblewrapPaths(): string[] {
  return ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/usr/sbin/bwrap', '/bin/bwrap', '/sbin/bwrap'].filter(
    (path) => existsSync(path) && statSync(path).isFile(),
  );
}

/**
 * Runs `cleveragents <args>` as runCli does, but inside a mount namespace (bubblewrap) where every
 * bubblewrap binary on the usual paths is replaced by an empty, non-executable file: a machine without
 * bubblewrap, whatever PATH says. Everything else (files, network, /tmp) is the host's.
 */
export function runCliWithoutBubblewrap(
  args: string[],
  options: { home: CliHome; cwd: string; timeoutMs?: number },
): Promise<CliRun> {
  const hidden = [...new Set(bubblewrapPaths().map((path) => realpathSync(path)))].flatMap((path) => [
    '--ro-bind',
    '/dev/null',
    path,
  ]);
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...options.home.env };
  const jail = ['--bind', '/', '/', '--dev', '/dev', '--proc', '/proc', ...hidden, '--die-with-parent', '--'];
  const started = performance.now();
  const child = spawn('bwrap', [...jail, process.execPath, CLI_BIN, ...args], { env, cwd: options.cwd });
  child.stdin.end();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`cleveragents ${args.join(' ')} (no bubblewrap) did not end\n${Buffer.concat(err).toString()}`));
    }, options.timeoutMs ?? 30000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        ms: performance.now() - started,
      });
    });
  });
}
