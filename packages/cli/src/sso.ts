/**
 * Single sign-on for the terminal client: signing a person in at the server's OpenID issuer (the
 * OAuth 2.0 Device Authorization Grant, or Authorization Code with PKCE through a loopback redirect),
 * refreshing the stored tokens before they expire, and revoking them on logout. The protocol work is
 * openid-client's; it loads only when a sign-in, a refresh or a revocation needs it.
 */
import { spawn } from 'node:child_process';
import { rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';
import type { Configuration, TokenEndpointResponse, TokenEndpointResponseHelpers } from 'openid-client';
import {
  credentialsFolder,
  credentialsPath,
  keepLogin,
  loginAt,
  readCredentials,
  serverKey,
  writeCredentials,
  type LoginPlace,
  type OidcTokens,
} from './credentials.js';
import { CliError, EXIT } from './exit-codes.js';
import { visibleText } from './safe-text.js';

/** A token with fewer seconds than this left is refreshed before use. */
export const REFRESH_MARGIN_SECONDS = 60;

/** How long the loopback listener waits for the browser to come back (seconds). */
const BROWSER_WAIT_SECONDS = 600;

const DEFAULT_SCOPES = ['openid', 'profile', 'offline_access'];

type OpenIdClient = typeof import('openid-client');

/** What the server's Agent Card says about signing in. */
export interface LoginTarget {
  /** The issuer (from the card's openIdConnect / oauth2 scheme). */
  issuer: string;
  /** The public client id (the card's extension params, `login.clientId`), unless --client-id gave one. */
  clientId?: string;
  scopes: string[];
}

/** Where the person is told what to do (stderr). */
export interface LoginOutput {
  write(text: string): unknown;
}

export type LoginFlow = 'auto' | 'device' | 'browser';

const DISCOVERY_SUFFIX = '/.well-known/openid-configuration';
const OAUTH_DISCOVERY_SUFFIX = '/.well-known/oauth-authorization-server';

function issuerOfMetadataUrl(url: string): string {
  for (const suffix of [DISCOVERY_SUFFIX, OAUTH_DISCOVERY_SUFFIX]) {
    if (url.endsWith(suffix)) return url.slice(0, -suffix.length);
  }
  return url;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The issuer and client id of a server, from its Agent Card (either card shape): the first
 * `openIdConnect` scheme's discovery URL, else an `oauth2` scheme's metadata URL.
 */
export async function loginTarget(server: string): Promise<LoginTarget | undefined> {
  const url = new URL('/.well-known/agent-card.json', serverKey(server) + '/').toString();
  let card: unknown;
  try {
    const response = await fetch(url, { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    card = await response.json();
  } catch (err) {
    throw new CliError(
      `Cannot read the Agent Card of ${serverKey(server)}: ${(err as Error).message}`,
      EXIT.UNREACHABLE,
    );
  }
  if (!isRecord(card)) return undefined;
  const schemes = isRecord(card.securitySchemes) ? Object.values(card.securitySchemes) : [];
  let metadataUrl: string | undefined;
  const stringAt = (value: unknown, field: string): string | undefined =>
    isRecord(value) && typeof value[field] === 'string' ? value[field] : undefined;
  for (const scheme of schemes.filter(isRecord)) {
    // v1.0: { openIdConnectSecurityScheme: { openIdConnectUrl } }; v0.3: { type: 'openIdConnect', openIdConnectUrl }.
    const oidcUrl =
      stringAt(scheme.openIdConnectSecurityScheme, 'openIdConnectUrl') ??
      (scheme.type === 'openIdConnect' ? stringAt(scheme, 'openIdConnectUrl') : undefined);
    if (oidcUrl) {
      metadataUrl = oidcUrl;
      break;
    }
    metadataUrl ??=
      stringAt(scheme.oauth2SecurityScheme, 'oauth2MetadataUrl') ??
      (scheme.type === 'oauth2' ? stringAt(scheme, 'oauth2MetadataUrl') : undefined);
  }
  if (!metadataUrl) return undefined;
  const capabilities = isRecord(card.capabilities) ? card.capabilities : {};
  const extensions = Array.isArray(capabilities.extensions) ? capabilities.extensions.filter(isRecord) : [];
  let clientId: string | undefined;
  let scopes = DEFAULT_SCOPES;
  for (const extension of extensions) {
    const login = isRecord(extension.params) && isRecord(extension.params.login) ? extension.params.login : undefined;
    if (login && typeof login.clientId === 'string') {
      clientId = login.clientId;
      if (Array.isArray(login.scopes) && login.scopes.every((s) => typeof s === 'string')) {
        scopes = login.scopes;
      }
      break;
    }
  }
  return { issuer: issuerOfMetadataUrl(metadataUrl), ...(clientId ? { clientId } : {}), scopes };
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** Plain HTTP only for an issuer on this machine (a development or test IdP); anything else needs HTTPS. */
function allowsHttp(issuer: string): boolean {
  const url = URL.parse(issuer);
  return url?.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/** The endpoints a code or a token is sent to. */
const TOKEN_ENDPOINTS = [
  'token_endpoint',
  'device_authorization_endpoint',
  'authorization_endpoint',
  'revocation_endpoint',
] as const;

/**
 * The issuer's configuration, read from its discovery document. openid-client refuses a document that
 * names another issuer (OpenID Connect Discovery §4.3). Its endpoints may be on other origins, as the
 * specs allow; but they get the tokens, so each must be HTTPS, or plain HTTP on this machine when the
 * issuer is on it (allowing plain HTTP for a loopback issuer would otherwise allow it for every endpoint).
 */
async function configurationFor(oidc: OpenIdClient, issuer: string, clientId: string): Promise<Configuration> {
  let config: Configuration;
  try {
    config = await oidc.discovery(
      new URL(issuer),
      clientId,
      { token_endpoint_auth_method: 'none' },
      oidc.None(),
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- marked so only to stand out; plain HTTP is for a loopback issuer alone
      allowsHttp(issuer) ? { execute: [oidc.allowInsecureRequests] } : undefined,
    );
  } catch (err) {
    throw new CliError(
      `Cannot read the OpenID configuration of ${issuer}: ${(err as Error).message}`,
      EXIT.UNREACHABLE,
    );
  }
  const metadata = config.serverMetadata();
  for (const name of TOKEN_ENDPOINTS) {
    const value = metadata[name];
    if (value === undefined) continue;
    const url = URL.parse(value);
    const loopback = url?.protocol === 'http:' && allowsHttp(issuer) && LOOPBACK_HOSTS.has(url.hostname);
    if (url?.protocol !== 'https:' && !loopback) {
      throw new CliError(
        `The OpenID configuration of ${issuer} names its ${name} at ${value}: tokens are sent only over HTTPS ` +
          '(plain HTTP only on this machine, for an issuer on it), so nothing was sent',
        EXIT.AUTH,
        'ask the administrator of the issuer to publish HTTPS endpoints',
      );
    }
  }
  return config;
}

function tokensOf(
  issuer: string,
  clientId: string,
  response: TokenEndpointResponse & TokenEndpointResponseHelpers,
  previous?: OidcTokens,
): OidcTokens {
  const expiresIn = response.expiresIn();
  const refreshToken = response.refresh_token ?? previous?.refreshToken;
  const idToken = response.id_token ?? previous?.idToken;
  return {
    issuer,
    clientId,
    accessToken: response.access_token,
    ...(refreshToken ? { refreshToken } : {}),
    ...(idToken ? { idToken } : {}),
    ...(expiresIn !== undefined ? { expiresAt: new Date(Date.now() + expiresIn * 1000).toISOString() } : {}),
    ...(response.scope ? { scope: response.scope } : {}),
  };
}

/** The OAuth error code of an openid-client error (a token or authorization endpoint's `error`). */
function oauthError(err: unknown): string | undefined {
  const error = (err as { error?: unknown } | null)?.error;
  return typeof error === 'string' ? error : undefined;
}

function loginError(err: unknown, issuer: string, again: string): Error {
  if (err instanceof CliError) return err;
  switch (oauthError(err)) {
    case 'access_denied':
      return new CliError(
        `The sign-in was denied at ${issuer}`,
        EXIT.LOGIN_DENIED,
        `run \`${again}\` again and approve the request, or ask your administrator for access`,
      );
    case 'expired_token':
      return new CliError(
        'The sign-in code expired before the sign-in was completed',
        EXIT.LOGIN_EXPIRED,
        `run \`${again}\` again and finish signing in within the time shown`,
      );
    default:
      return new CliError(`The sign-in at ${issuer} failed: ${(err as Error).message}`, EXIT.AUTH);
  }
}

/**
 * Signs a person in at the target's issuer: the device grant where the issuer offers it (unless
 * `flow` is `browser`), else Authorization Code with PKCE through a loopback redirect.
 */
export async function signIn(
  target: LoginTarget & { clientId: string },
  options: {
    flow: LoginFlow;
    openBrowser: boolean;
    out: LoginOutput;
    env: NodeJS.ProcessEnv;
    /** The command that signs in again, for the hints (default: `cleveragents login`). */
    again?: string;
  },
): Promise<OidcTokens> {
  const oidc = await import('openid-client');
  const config = await configurationFor(oidc, target.issuer, target.clientId);
  const metadata = config.serverMetadata();
  const device = metadata.device_authorization_endpoint !== undefined;
  const pkce =
    metadata.authorization_endpoint !== undefined &&
    (metadata.code_challenge_methods_supported?.includes('S256') ?? false);
  const scope = target.scopes.join(' ');
  try {
    if (options.flow !== 'browser' && device) {
      return tokensOf(target.issuer, target.clientId, await deviceGrant(oidc, config, scope, options.out));
    }
    if (options.flow !== 'device' && pkce) {
      return tokensOf(target.issuer, target.clientId, await browserGrant(oidc, config, scope, options));
    }
  } catch (err) {
    throw loginError(err, target.issuer, options.again ?? 'cleveragents login');
  }
  const wanted =
    options.flow === 'device'
      ? 'the device grant (no device_authorization_endpoint)'
      : options.flow === 'browser'
        ? 'Authorization Code with PKCE (no authorization endpoint, or no S256 in code_challenge_methods_supported)'
        : 'the device grant or Authorization Code with PKCE';
  throw new CliError(
    `The issuer ${target.issuer} does not offer ${wanted}`,
    EXIT.LOGIN_UNSUPPORTED,
    options.flow === 'auto'
      ? 'ask your administrator to enable one of them for the CleverAgents CLI client, or use --api-key'
      : 'try another --flow, or use --api-key',
  );
}

async function deviceGrant(
  oidc: OpenIdClient,
  config: Configuration,
  scope: string,
  out: LoginOutput,
): Promise<TokenEndpointResponse & TokenEndpointResponseHelpers> {
  const started = await oidc.initiateDeviceAuthorization(config, { scope });
  // The issuer's words, shown exactly: a control sequence in them is shown escaped, not obeyed.
  const uri = visibleText(started.verification_uri);
  out.write(
    `To sign in, open ${uri} in a browser and enter the code ${visibleText(started.user_code)}\n` +
      (started.verification_uri_complete ? `(or open ${visibleText(started.verification_uri_complete)})\n` : '') +
      `Waiting for the sign-in (the code expires in ${Math.round(started.expires_in / 60)} min)…\n`,
  );
  // openid-client waits `interval` seconds between polls and adds 5 s on each slow_down.
  return oidc.pollDeviceAuthorizationGrant(config, started);
}

async function browserGrant(
  oidc: OpenIdClient,
  config: Configuration,
  scope: string,
  options: { openBrowser: boolean; out: LoginOutput; env: NodeJS.ProcessEnv },
): Promise<TokenEndpointResponse & TokenEndpointResponseHelpers> {
  const verifier = oidc.randomPKCECodeVerifier();
  const challenge = await oidc.calculatePKCECodeChallenge(verifier);
  const state = oidc.randomState();
  const listener = createServer();
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(0, '127.0.0.1', resolve);
  });
  try {
    const redirectUri = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`;
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state,
    });
    options.out.write(`To sign in, open this address in a browser:\n  ${url.href}\nWaiting for the sign-in…\n`);
    if (options.openBrowser) openInBrowser(url.href, options.env);
    return await callback(listener, BROWSER_WAIT_SECONDS, async (current) =>
      oidc.authorizationCodeGrant(config, current, { pkceCodeVerifier: verifier, expectedState: state }),
    );
  } finally {
    listener.closeAllConnections();
    listener.close();
  }
}

/** Waits for the browser's request to /callback, exchanges it, and tells the browser how it went. */
function callback<T>(listener: Server, waitSeconds: number, exchange: (url: URL) => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const err = new Error('nobody signed in') as Error & { error: string };
      err.error = 'expired_token';
      reject(err);
    }, waitSeconds * 1000);
    timer.unref();
    listener.on('request', (req, res) => {
      const current = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
      if (current.pathname !== '/callback') {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n');
        return;
      }
      exchange(current).then(
        (result) => {
          clearTimeout(timer);
          res
            .writeHead(200, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' })
            .end('Signed in to CleverAgents. You can close this window and return to the terminal.\n');
          resolve(result);
        },
        (err: unknown) => {
          clearTimeout(timer);
          res
            .writeHead(400, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' })
            .end('The sign-in did not complete; see the terminal.\n');
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  });
}

/** Opens a URL in the person's browser when there is one to open ($BROWSER, macOS, a Linux desktop). */
function openInBrowser(url: string, env: NodeJS.ProcessEnv): void {
  const command = env.BROWSER
    ? env.BROWSER
    : process.platform === 'darwin'
      ? 'open'
      : process.platform === 'win32'
        ? undefined
        : env.DISPLAY || env.WAYLAND_DISPLAY
          ? 'xdg-open'
          : undefined;
  if (!command) return;
  try {
    const child = spawn(command, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // No browser after all: the address is printed.
  }
}

function loginAgain(place: LoginPlace, why: string): CliError {
  const server = serverKey(place.server);
  const where = place.context === undefined ? `--server ${server}` : `--server ${server} --context ${place.context}`;
  return new CliError(
    `The stored sign-in for ${server}${place.context === undefined ? '' : ` (context "${place.context}")`} ${why}`,
    EXIT.LOGIN_AGAIN,
    `run \`cleveragents login ${where}\` again`,
  );
}

/**
 * A stored sign-in (kept at `place`) with an access token good for at least REFRESH_MARGIN_SECONDS:
 * the one given, or, when fewer seconds remain, one refreshed first (and stored again, at `place`).
 */
export async function freshTokens(place: LoginPlace, tokens: OidcTokens, env: NodeJS.ProcessEnv): Promise<OidcTokens> {
  const now = Date.now();
  const expiresAt = tokens.expiresAt ? Date.parse(tokens.expiresAt) : undefined;
  if (expiresAt === undefined || expiresAt - now > REFRESH_MARGIN_SECONDS * 1000) return tokens;
  const key = serverKey(place.server);
  if (!tokens.refreshToken) {
    if (expiresAt > now) return tokens;
    throw loginAgain(place, 'has expired (the issuer gave no refresh token)');
  }
  // One refresh at a time across processes: the issuer may rotate the refresh token, and a second
  // use of the old one can revoke the whole sign-in. Whoever waited reads what the first one stored.
  return withCredentialsLock(env, async () => {
    const latest = loginAt(await readCredentials(env), place)?.oidc;
    if (latest?.expiresAt && Date.parse(latest.expiresAt) - Date.now() > REFRESH_MARGIN_SECONDS * 1000) {
      return latest;
    }
    const current = latest?.refreshToken ? latest : tokens;
    const oidc = await import('openid-client');
    const config = await configurationFor(oidc, current.issuer, current.clientId);
    let refreshed: OidcTokens;
    try {
      refreshed = tokensOf(
        current.issuer,
        current.clientId,
        await oidc.refreshTokenGrant(config, current.refreshToken!),
        current,
      );
    } catch (err) {
      const code = oauthError(err);
      if (code === 'invalid_grant' || code === 'invalid_client' || code === 'unauthorized_client') {
        throw loginAgain(place, `could not be refreshed: it has expired or was revoked (${code})`);
      }
      throw new CliError(`Cannot refresh the sign-in for ${key}: ${(err as Error).message}`, EXIT.UNREACHABLE);
    }
    const file = await readCredentials(env);
    keepLogin(file, place, { oidc: refreshed, savedAt: new Date().toISOString() });
    await writeCredentials(file, env);
    return refreshed;
  });
}

/** A lock older than this is taken to be left by a process that died. */
const STALE_LOCK_MS = 30_000;

/** Runs `work` holding `credentials.json.lock` (created exclusively), waiting up to 30 s for it. */
async function withCredentialsLock<T>(env: NodeJS.ProcessEnv, work: () => Promise<T>): Promise<T> {
  const path = join(await credentialsFolder(env), `${basename(credentialsPath(env))}.lock`);
  const deadline = Date.now() + STALE_LOCK_MS;
  for (;;) {
    try {
      await writeFile(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = await stat(path).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > STALE_LOCK_MS || Date.now() > deadline) await rm(path, { force: true });
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    return await work();
  } finally {
    await rm(path, { force: true });
  }
}

/**
 * Revokes a sign-in's refresh token and access token where the issuer has a revocation endpoint.
 * Returns what happened, for the person.
 */
export async function revoke(tokens: OidcTokens): Promise<'revoked' | 'no-endpoint'> {
  const oidc = await import('openid-client');
  const config = await configurationFor(oidc, tokens.issuer, tokens.clientId);
  if (!config.serverMetadata().revocation_endpoint) return 'no-endpoint';
  const revokeOne = async (token: string, hint: string, optional: boolean): Promise<void> => {
    try {
      await oidc.tokenRevocation(config, token, { token_type_hint: hint });
    } catch (err) {
      // An issuer may not revoke self-contained (JWT) access tokens: they end when they expire.
      if (optional && oauthError(err) === 'unsupported_token_type') return;
      const code = oauthError(err);
      throw new Error(`${(err as Error).message}${code ? ` (${code})` : ''}`);
    }
  };
  if (tokens.refreshToken) await revokeOne(tokens.refreshToken, 'refresh_token', false);
  await revokeOne(tokens.accessToken, 'access_token', true);
  return 'revoked';
}
