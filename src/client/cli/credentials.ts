import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError, EXIT } from './exit-codes.js';

/**
 * Stored logins: `$XDG_CONFIG_HOME/cleveragents/credentials.json` (default ~/.config/…), readable by
 * the user only (0600 in a 0700 folder). One entry per server URL (an API key, or the tokens of a
 * single sign-on), named contexts that point at servers, and the server used when none is named.
 */
export interface StoredLogin {
  apiKey?: string;
  /** Tokens from the server's OpenID issuer (`cleveragents login` without --api-key). */
  oidc?: OidcTokens;
  savedAt: string;
}

/** What a single sign-on leaves: the tokens, and where they came from (to refresh and revoke them). */
export interface OidcTokens {
  issuer: string;
  clientId: string;
  accessToken: string;
  refreshToken?: string;
  idToken?: string;
  /** ISO 8601; absent when the issuer gave no `expires_in`. */
  expiresAt?: string;
  scope?: string;
}

/** A name for a server (`--context NAME`), like kubectl's contexts. */
export interface StoredContext {
  server: string;
}

export interface CredentialsFile {
  defaultServer?: string;
  /** The context used when no --server, --context or $CLEVERAGENTS_SERVER names one. */
  currentContext?: string;
  contexts: Partial<Record<string, StoredContext>>;
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
    return {
      defaultServer: parsed.defaultServer,
      currentContext: parsed.currentContext,
      contexts: parsed.contexts ?? {},
      servers: parsed.servers ?? {},
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { contexts: {}, servers: {} };
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

/** The server of a named context; a usage error naming the known ones when there is none. */
export function contextServer(file: CredentialsFile, name: string): string {
  const server = file.contexts[name]?.server;
  if (!server) {
    const known = Object.keys(file.contexts);
    throw new CliError(
      `No context "${name}"`,
      EXIT.USAGE,
      known.length
        ? `known contexts: ${known.join(', ')} (cleveragents contexts list)`
        : 'name one with `cleveragents login --server URL --context NAME`',
    );
  }
  return server;
}

/** The server used when none is named: the current context's, else the default server. */
export function currentServer(file: CredentialsFile): string | undefined {
  return (file.currentContext ? file.contexts[file.currentContext]?.server : undefined) ?? file.defaultServer;
}
