import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * Stored logins: `$XDG_CONFIG_HOME/cleveragents/credentials.json` (default ~/.config/…), readable by
 * the user only (0600 in a 0700 folder). One entry per server URL, and the server used when none is
 * named.
 */
export interface StoredLogin {
  apiKey?: string;
  savedAt: string;
}

export interface CredentialsFile {
  defaultServer?: string;
  /** By server key; a lookup may find none. */
  servers: Partial<Record<string, StoredLogin>>;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'cleveragents');
}

export function credentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'credentials.json');
}

/** A server URL as stored: no trailing slash, so `http://h/` and `http://h` are one login. */
export function serverKey(url: string): string {
  return url.replace(/\/+$/, '');
}

export async function readCredentials(env: NodeJS.ProcessEnv = process.env): Promise<CredentialsFile> {
  try {
    const parsed = JSON.parse(await readFile(credentialsPath(env), 'utf8')) as Partial<CredentialsFile>;
    return { defaultServer: parsed.defaultServer, servers: parsed.servers ?? {} };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { servers: {} };
    throw new Error(`Cannot read ${credentialsPath(env)}: ${(err as Error).message}`);
  }
}

export async function writeCredentials(file: CredentialsFile, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const path = credentialsPath(env);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, path);
  return path;
}
