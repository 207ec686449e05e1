import type { Command } from 'commander';
import {
  contextServer,
  credentialsPath,
  currentServer,
  keepLogin,
  loginFor,
  readCredentials,
  serverKey,
  writeCredentials,
  type CredentialsFile,
  type OidcTokens,
  type StoredLogin,
} from '../credentials.js';
import { cliCommand, ioFor, withClient, type GlobalOptions, type Io } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { writeRecord } from '../pages.js';
import { safeLine, visibleText } from '../safe-text.js';
import { fields, table } from '../table.js';

interface LoginOptions {
  apiKey?: string;
  default: boolean;
  clientId?: string;
  flow: 'auto' | 'device' | 'browser';
  browser: boolean;
}

/** The server a login or logout is about: --server, else --context's, else $CLEVERAGENTS_SERVER, else the current one. */
function serverFor(options: GlobalOptions, io: Io, file: CredentialsFile): string | undefined {
  if (options.server) return options.server;
  if (options.context) return file.contexts[options.context]?.server;
  return io.env.CLEVERAGENTS_SERVER ?? currentServer(file);
}

/**
 * Records the login: the context's own with --context (which then names `key`), else the server's; and
 * makes it the default unless --no-default.
 */
function remember(
  file: CredentialsFile,
  key: string,
  login: StoredLogin,
  options: GlobalOptions,
  makeDefault: boolean,
): void {
  if (options.context) file.contexts[options.context] = { server: key, login };
  else keepLogin(file, { server: key }, login);
  if (makeDefault) {
    file.defaultServer = key;
    if (options.context) file.currentContext = options.context;
    else delete file.currentContext;
  }
}

/** Why a server refused a sign-in's token, and what mends it, by the reason it gave. */
function refusalHint(reason: string | undefined): string {
  switch (reason) {
    case 'TOKEN_INVALID_AUDIENCE':
      return "the issuer makes the CLI's tokens for another audience than the server accepts: the server's OIDC_AUDIENCE must name it (ask its administrator)";
    case 'TOKEN_INVALID_ISSUER':
      return 'the server trusts another issuer than the one its Agent Card names (ask its administrator)';
    default:
      return 'ask the administrator of the server to accept sign-ins from this issuer';
  }
}

/**
 * Who the server takes a new sign-in's token for (`auth/whoami`); undefined when the server offers no
 * way to ask (an A2A agent without the CleverAgents extension). A refusal says why, nothing stored.
 */
async function verifiedSubject(key: string, tokens: OidcTokens): Promise<string | undefined> {
  const { CleverAgentsError, connect } = await import('@cleveragents/client/node');
  const client = await connect({ server: key, bearerToken: tokens.accessToken });
  try {
    if (!client.offersExtensions) return undefined;
    return (await client.whoami()).subject;
  } catch (err) {
    const refused = err instanceof CleverAgentsError && (err.code === -32002 || err.httpStatus === 401);
    if (!refused) throw err;
    // The tokens work nowhere they are meant to: given back to the issuer, where it takes them.
    const { revoke } = await import('../sso.js');
    await revoke(tokens).catch(() => undefined);
    throw new CliError(
      `${key} refused the sign-in at ${tokens.issuer}: ${err.message}${err.reason ? ` (${err.reason})` : ''}; nothing was stored`,
      EXIT.AUTH,
      refusalHint(err.reason),
    );
  } finally {
    await client.close();
  }
}

/**
 * `cleveragents login`: with --api-key, stores the key; otherwise signs the person in at the server's
 * OpenID issuer (device grant, or Authorization Code with PKCE) and stores the tokens.
 */
export async function login(options: GlobalOptions, command: Command): Promise<number> {
  const opts = command.opts<LoginOptions>();
  const io = ioFor(options);
  const file = await readCredentials(io.env);
  const server = serverFor(options, io, file);
  if (!server) {
    throw new CliError(
      'login needs the server',
      EXIT.USAGE,
      options.context
        ? `the context "${options.context}" is new: pass --server URL to name it`
        : 'pass --server URL (or set CLEVERAGENTS_SERVER)',
    );
  }
  const key = serverKey(server);
  const makeDefault = opts.default !== false;
  const named = options.context ? ` as context "${options.context}"` : '';
  const apiKey = opts.apiKey ?? options.apiKey;
  if (apiKey) {
    remember(file, key, { apiKey, savedAt: new Date().toISOString() }, options, makeDefault);
    const path = await writeCredentials(file, io.env);
    io.err.write(`Stored the API key for ${key}${named} in ${path}${makeDefault ? ' (default server)' : ''}\n`);
    return EXIT.OK;
  }

  const { loginTarget, signIn } = await import('../sso.js');
  const target = await loginTarget(key);
  if (!target) {
    throw new CliError(
      `${key} declares no OpenID Connect or OAuth2 sign-in in its Agent Card`,
      EXIT.LOGIN_UNSUPPORTED,
      `sign in with an API key: ${cliCommand(['login', '--api-key', 'KEY'], options)}`,
    );
  }
  const clientId = opts.clientId ?? target.clientId;
  if (!clientId) {
    throw new CliError(
      `${key} names no client id for the CLI`,
      EXIT.LOGIN_UNSUPPORTED,
      'pass --client-id ID, or ask the administrator to set OIDC_CLI_CLIENT_ID on the server',
    );
  }
  // The issuer is the card's word: shown with any control sequence escaped.
  io.err.write(`Signing in to ${key} at ${visibleText(target.issuer)}\n`);
  const tokens = await signIn(
    { ...target, clientId },
    { flow: opts.flow, openBrowser: opts.browser, out: io.err, env: io.env, again: cliCommand(['login'], options) },
  );
  // Signed in at the issuer; the server has the last word: a token it refuses is not kept.
  const subject = await verifiedSubject(key, tokens);
  // Read again: another command may have written the file while the person was signing in.
  const latest = await readCredentials(io.env);
  remember(latest, key, { oidc: tokens, savedAt: new Date().toISOString() }, options, makeDefault);
  const path = await writeCredentials(latest, io.env);
  const who = subject === undefined ? ' (the server offers no whoami to check it)' : ` as ${safeLine(subject)}`;
  const context = options.context ? ` in context "${options.context}"` : '';
  io.err.write(
    `Signed in to ${key}${who}${context}; the tokens are in ${path}${makeDefault ? ' (default server)' : ''}\n`,
  );
  return EXIT.OK;
}

/** `cleveragents logout`: revokes a sign-in's tokens where the issuer can, and forgets the login. */
export async function logout(options: GlobalOptions): Promise<number> {
  const io = ioFor(options);
  const file = await readCredentials(io.env);
  const server = serverFor(options, io, file);
  const found = server ? loginFor(file, server, options.context) : undefined;
  if (!server || !found) {
    io.err.write(`No stored login${server ? ` for ${serverKey(server)}` : ''} in ${credentialsPath(io.env)}\n`);
    return EXIT.OK;
  }
  const { place, login: stored } = found;
  const key = serverKey(server);
  if (stored.oidc) {
    const { revoke } = await import('../sso.js');
    try {
      const outcome = await revoke(stored.oidc);
      io.err.write(
        outcome === 'revoked'
          ? `Revoked the tokens at ${stored.oidc.issuer}\n`
          : `${stored.oidc.issuer} offers no revocation endpoint: the tokens stay valid until they expire\n`,
      );
    } catch (err) {
      io.err.write(`Could not revoke the tokens at ${stored.oidc.issuer}: ${(err as Error).message}\n`);
    }
  }
  const latest = await readCredentials(io.env);
  keepLogin(latest, place, undefined);
  if (place.context === undefined && latest.defaultServer === key) delete latest.defaultServer;
  await writeCredentials(latest, io.env);
  io.err.write(`Forgot the login for ${key}${place.context === undefined ? '' : ` (context "${place.context}")`}\n`);
  return EXIT.OK;
}

/** `cleveragents whoami`: who the server takes the caller for (subject, namespace, role). */
export async function whoami(options: GlobalOptions): Promise<number> {
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const me = await client.whoami();
    return writeRecord(io, options, me, () =>
      fields([
        ['subject', me.subject],
        ['name', me.displayName],
        ['scheme', me.scheme],
        ['namespace', me.defaultNamespace],
        ['role', me.defaultNamespaceRole ?? '—'],
        ['grants', me.grants.map((g) => `${g.namespace}:${g.role}`).join(', ') || '—'],
        ...(me.expiresAt ? [['expires', me.expiresAt] as [string, string]] : []),
      ]),
    );
  });
}

/** `cleveragents contexts list`: the named servers, the login each has, and the current one. */
export async function listContexts(options: GlobalOptions): Promise<number> {
  const io = ioFor(options);
  const file = await readCredentials(io.env);
  const rows = Object.entries(file.contexts).flatMap(([name, context]) => {
    if (!context) return [];
    const login = loginFor(file, context.server, name)?.login;
    const kind = login?.oidc ? 'sso' : login?.apiKey ? 'api key' : 'none';
    return [{ name, server: context.server, login: kind, current: file.currentContext === name }];
  });
  if (options.json) {
    io.out.write(`${JSON.stringify({ currentContext: file.currentContext ?? null, contexts: rows })}\n`);
    return EXIT.OK;
  }
  if (rows.length === 0) {
    io.out.write('No contexts. Name one with `cleveragents login --server URL --context NAME`.\n');
    return EXIT.OK;
  }
  io.out.write(
    `${table(
      ['CURRENT', 'NAME', 'SERVER', 'LOGIN'],
      rows.map((r) => [r.current ? '*' : '', r.name, r.server, r.login]),
    )}\n`,
  );
  return EXIT.OK;
}

/** `cleveragents contexts use NAME`: the context used when no --server or --context is given. */
export async function useContext(options: GlobalOptions, _command: Command, name: string): Promise<number> {
  const io = ioFor(options);
  const file = await readCredentials(io.env);
  const server = contextServer(file, name);
  file.currentContext = name;
  file.defaultServer = serverKey(server);
  await writeCredentials(file, io.env);
  io.err.write(`Using the context "${name}" (${server})\n`);
  return EXIT.OK;
}
