import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError, EXIT } from './exit-codes.js';

/**
 * Stored logins: `$XDG_CONFIG_HOME/cleveragents/credentials.json` (default ~/.config/…), readable by
 * the user only (0600 in a 0700 folder). A login (an API key, or the tokens of a single sign-on) made
 * with `--context NAME` is that context's own, so that several logins to one server (other people,
 * other issuers) stay apart; one made without is the server's, by its URL. Named contexts point at
 * servers; the current context (or the default server) is used when none is named.
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

/** A name for a server (`--context NAME`), like kubectl's contexts, with the login made under that name. */
export interface StoredContext {
  server: string;
  /** Absent in files written before contexts kept their own logins: the server's login is used. */
  login?: StoredLogin;
}

/** Where a login is kept: a context's own (`context`), or the server's (made without a context). */
export interface LoginPlace {
  server: string;
  context?: string;
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

function refuse(path: string, why: string, hint: string): CliError {
  return new CliError(`Refusing to ${why}`, EXIT.FAILED, hint.replaceAll('PATH', path));
}

/** The user this process runs as; undefined where there are no user ids (Windows). */
const me = (): number | undefined => process.getuid?.();

/**
 * Opens the config folder without following a link and checks it is the user's own; with `secure`,
 * also makes it 0700 (through the open handle, so the folder checked is the one changed).
 */
async function ownFolder(dir: string, secure: boolean): Promise<void> {
  // Windows has no O_NOFOLLOW, no folder handles and no POSIX modes: its ACLs guard the profile.
  if (process.platform === 'win32') return;
  let handle: FileHandle;
  try {
    handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR') {
      // O_DIRECTORY answers ENOTDIR for a link too; lstat only words the message.
      const link =
        code === 'ELOOP' ||
        (await lstat(dir).then(
          (s) => s.isSymbolicLink(),
          () => false,
        ));
      throw refuse(
        dir,
        `keep credentials in ${dir}: it is ${link ? 'a symbolic link' : 'not a folder'}`,
        'the client keeps credentials only in a folder of its own: replace PATH with a real folder (mkdir -m 700 PATH)',
      );
    }
    throw err;
  }
  try {
    const stats = await handle.stat();
    const uid = me();
    if (uid !== undefined && stats.uid !== uid) {
      throw refuse(
        dir,
        `keep credentials in ${dir}: it belongs to user ${stats.uid}, not to you (${uid})`,
        'remove PATH, or set XDG_CONFIG_HOME to a folder of your own',
      );
    }
    if (secure && (stats.mode & 0o777) !== 0o700) await handle.chmod(0o700);
  } finally {
    await handle.close();
  }
}

/**
 * The stored logins. The folder and the file must be the user's own and no links (a folder others could
 * write may hold a planted file naming their server); a missing file is an empty one.
 */
export async function readCredentials(env: NodeJS.ProcessEnv = process.env): Promise<CredentialsFile> {
  const path = credentialsPath(env);
  let handle: FileHandle;
  try {
    await ownFolder(dirname(path), false);
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { contexts: {}, servers: {} };
    if (err instanceof CliError) throw err;
    if (code === 'ELOOP') {
      throw refuse(
        path,
        `read ${path}: it is a symbolic link`,
        'the client keeps credentials only in a regular file of its own: remove the link (rm PATH) and log in again',
      );
    }
    throw new Error(`Cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    const stats = await handle.stat();
    const uid = me();
    if (!stats.isFile() || (uid !== undefined && stats.uid !== uid)) {
      throw refuse(
        path,
        `read ${path}: it is ${stats.isFile() ? `owned by user ${stats.uid}, not by you (${uid})` : 'not a regular file'}`,
        'remove PATH and log in again',
      );
    }
    const parsed = JSON.parse(await handle.readFile('utf8')) as Partial<CredentialsFile>;
    return {
      defaultServer: parsed.defaultServer,
      currentContext: parsed.currentContext,
      contexts: parsed.contexts ?? {},
      servers: parsed.servers ?? {},
    };
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new Error(`Cannot read ${path}: ${(err as Error).message}`);
  } finally {
    await handle.close();
  }
}

/** Makes the config folder if needed, and returns it checked: the user's own, no link, 0700. */
export async function credentialsFolder(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = configDir(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await ownFolder(dir, true);
  return dir;
}

/**
 * Writes the stored logins: a new file (0600, created exclusively under a random name, so that no
 * planted link is followed) renamed over the old one in the checked folder.
 */
export async function writeCredentials(file: CredentialsFile, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const path = credentialsPath(env);
  const temp = join(await credentialsFolder(env), `.credentials.${randomBytes(8).toString('hex')}.tmp`);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const handle = await open(temp, flags, 0o600);
  try {
    await handle.writeFile(`${JSON.stringify(file, null, 2)}\n`);
    // The umask may only have narrowed the mode; this makes it exactly 0600.
    await handle.chmod(0o600);
    await handle.close();
    // rename replaces the name itself: a link there is replaced, never written through.
    await rename(temp, path);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw err;
  }
  return path;
}

/** The login kept at `place`, if any. */
export function loginAt(file: CredentialsFile, place: LoginPlace): StoredLogin | undefined {
  return place.context === undefined ? file.servers[serverKey(place.server)] : file.contexts[place.context]?.login;
}

/** Keeps `login` at `place` (a context's own login, or the server's); undefined forgets it. */
export function keepLogin(file: CredentialsFile, place: LoginPlace, login: StoredLogin | undefined): void {
  const key = serverKey(place.server);
  if (place.context === undefined) {
    if (login) file.servers[key] = login;
    else delete file.servers[key];
    return;
  }
  const server = file.contexts[place.context]?.server ?? key;
  file.contexts[place.context] = login ? { server, login } : { server };
}

/**
 * The login a command uses for `server`: the named context's own (`context`), else the current
 * context's own when that context names this server, else the server's. A context without a login
 * of its own (as every file before contexts kept theirs) uses the server's.
 */
export function loginFor(
  file: CredentialsFile,
  server: string,
  context?: string,
): { place: LoginPlace; login: StoredLogin } | undefined {
  const key = serverKey(server);
  const named = context ?? file.currentContext;
  const own = named === undefined ? undefined : file.contexts[named];
  if (named !== undefined && own?.login && serverKey(own.server) === key) {
    return { place: { server: key, context: named }, login: own.login };
  }
  const login = file.servers[key];
  return login ? { place: { server: key }, login } : undefined;
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
