import type { AgentCard } from '@a2a-js/sdk';
import { EXTENSION_URI } from '@cleveragents/contract';
import * as oauth from 'oauth4webapi';
import { consoleUrl } from './base';

/**
 * Single sign-on in the browser: the authorization-code flow with PKCE (S256), `state` and `nonce` against
 * the OpenID provider the Agent Card names, for the public client the card's `console.login` gives. The
 * round trip's secrets and the tokens live in this tab's session storage only (docs/console.md, "Signing in").
 */
export interface ConsoleLogin {
  /** The OpenID provider's issuer. */
  issuer: string;
  clientId: string;
  scopes: string[];
}

/** A signed-in person's tokens: the access token to send (refreshed when due), and a way to end them. */
export interface TokenSource {
  /** The access token; `refused` is one the server answered 401 to, which a refresh replaces once. */
  bearer(refused?: string): Promise<string>;
  /** Revokes the tokens at the provider (when it has a revocation endpoint) and forgets them. */
  signOut(): Promise<void>;
  /** Called once when the sign-in ends without the person signing out (the provider refused a refresh). */
  onEnded(listener: (reason: Error) => void): void;
}

/** What a person reads when a sign-in fails or ends: said plainly, the provider's words kept. */
export class SignInError extends Error {
  override readonly name = 'SignInError';
}

/** The round trip's secrets, kept from the redirect to the provider until its answer comes back. */
interface PendingSignIn {
  issuer: string;
  clientId: string;
  codeVerifier: string;
  state: string;
  nonce: string;
  returnTo: string;
}

interface KeptTokens {
  issuer: string;
  clientId: string;
  accessToken: string;
  refreshToken?: string;
  /** When the access token expires (ms since the epoch), and how long it was given for (s). */
  expiresAt: number;
  lifetime: number;
}

const PENDING_ITEM = 'cleveragents.console.signIn';
const TOKENS_ITEM = 'cleveragents.console.tokens';

/** An access token is refreshed when less than this is left of it (or a fifth of its lifetime, if shorter). */
const REFRESH_MARGIN_SECONDS = 60;
/** An access token without expires_in is taken to last this long. */
const DEFAULT_LIFETIME_SECONDS = 300;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The issuer of the card's first OpenID Connect scheme (its discovery URL without the well-known suffix). */
function issuerOf(card: AgentCard): string | undefined {
  for (const scheme of Object.values(card.securitySchemes)) {
    if (scheme.scheme?.$case !== 'openIdConnectSecurityScheme') continue;
    const url = scheme.scheme.value.openIdConnectUrl;
    return url.replace(/\/\.well-known\/openid-configuration$/, '');
  }
  return undefined;
}

/** The console's sign-in the card offers, if any: the extension's `console.login` and the OpenID issuer. */
export function consoleLoginOf(card: AgentCard): ConsoleLogin | undefined {
  const extension = card.capabilities?.extensions.find((e) => e.uri === EXTENSION_URI);
  const params: unknown = extension?.params;
  const consoleParams = isRecord(params) ? params.console : undefined;
  const login = isRecord(consoleParams) ? consoleParams.login : undefined;
  if (!isRecord(login) || typeof login.clientId !== 'string') return undefined;
  const issuer = issuerOf(card);
  if (!issuer) return undefined;
  const scopes =
    Array.isArray(login.scopes) && login.scopes.every((s) => typeof s === 'string') ? login.scopes : ['openid'];
  return { issuer, clientId: login.clientId, scopes };
}

/** Plain HTTP is allowed only for an issuer on this machine (a development or test provider). */
// eslint-disable-next-line @typescript-eslint/no-deprecated -- marked so only to stand out; see below
function requestOptions(issuer: string): { [oauth.allowInsecureRequests]?: boolean } {
  const url = URL.parse(issuer);
  if (url?.protocol !== 'http:' || !LOOPBACK_HOSTS.has(url.hostname)) return {};
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- marked so only to stand out; plain HTTP is for a loopback issuer alone
  return { [oauth.allowInsecureRequests]: true };
}

const discovered = new Map<string, Promise<oauth.AuthorizationServer>>();

/** The provider's metadata from its discovery document, once per issuer (a failure is asked again next time). */
function discover(issuer: string): Promise<oauth.AuthorizationServer> {
  let found = discovered.get(issuer);
  if (!found) {
    const url = new URL(issuer);
    found = oauth
      .discoveryRequest(url, { algorithm: 'oidc', ...requestOptions(issuer) })
      .then((response) => oauth.processDiscoveryResponse(url, response))
      .catch((error: unknown) => {
        discovered.delete(issuer);
        throw new SignInError(`The sign-in provider ${issuer} could not be reached: ${messageOf(error)}`, {
          cause: error,
        });
      });
    discovered.set(issuer, found);
  }
  return found;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A refusal from the provider, in its words (`error`: `error_description`). */
function providerWords(error: { error: string; error_description?: string }): string {
  return error.error_description ? `${error.error}: ${error.error_description}` : error.error;
}

function readItem<T>(item: string): T | undefined {
  try {
    const value: unknown = JSON.parse(sessionStorage.getItem(item) ?? 'null');
    return isRecord(value) ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}

/** Sends the browser to the provider's sign-in page; the provider sends it back to `signed-in`. */
export async function beginSignIn(login: ConsoleLogin, returnTo: string): Promise<void> {
  const as = await discover(login.issuer);
  if (!as.authorization_endpoint) throw new SignInError(`The sign-in provider ${login.issuer} names no sign-in page.`);
  const pending: PendingSignIn = {
    issuer: login.issuer,
    clientId: login.clientId,
    codeVerifier: oauth.generateRandomCodeVerifier(),
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    returnTo: returnTo === 'signed-in' ? '' : returnTo,
  };
  const url = new URL(as.authorization_endpoint);
  url.search = new URLSearchParams({
    client_id: login.clientId,
    redirect_uri: consoleUrl('signed-in'),
    response_type: 'code',
    scope: login.scopes.join(' '),
    code_challenge: await oauth.calculatePKCECodeChallenge(pending.codeVerifier),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  }).toString();
  sessionStorage.setItem(PENDING_ITEM, JSON.stringify(pending));
  location.assign(url.href);
}

/** On `signed-in`: the provider's answer exchanged for tokens, and the path the person started from. */
export async function finishSignIn(login: ConsoleLogin, url: URL): Promise<{ tokens: TokenSource; returnTo: string }> {
  // The secrets serve one answer: gone before it is checked, so that no answer is taken twice.
  const pending = readItem<PendingSignIn>(PENDING_ITEM);
  sessionStorage.removeItem(PENDING_ITEM);
  if (!pending || pending.issuer !== login.issuer || pending.clientId !== login.clientId) {
    throw new SignInError(
      'This sign-in answer belongs to no sign-in started in this tab (it was used already, or started elsewhere). Sign in again.',
    );
  }
  const as = await discover(login.issuer);
  const client: oauth.Client = { client_id: login.clientId };
  let parameters: URLSearchParams;
  try {
    parameters = oauth.validateAuthResponse(as, client, url, pending.state);
  } catch (error) {
    if (error instanceof oauth.AuthorizationResponseError) {
      const refusal = providerWords(error);
      throw new SignInError(
        error.error === 'access_denied'
          ? `The sign-in was cancelled or refused at the provider (${refusal}).`
          : `The sign-in provider refused the sign-in (${refusal}).`,
        { cause: error },
      );
    }
    throw new SignInError(
      `The sign-in provider's answer does not match the sign-in this tab started: ${messageOf(error)}`,
      {
        cause: error,
      },
    );
  }
  try {
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      parameters,
      consoleUrl('signed-in'),
      pending.codeVerifier,
      requestOptions(login.issuer),
    );
    const answer = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: pending.nonce,
      requireIdToken: login.scopes.includes('openid'),
    });
    const tokens = new SignedIn(login, keptFrom(login, answer));
    tokens.keep();
    return { tokens, returnTo: pending.returnTo };
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) {
      throw new SignInError(`The sign-in provider refused the sign-in's code (${providerWords(error)}).`, {
        cause: error,
      });
    }
    throw new SignInError(`The sign-in could not be finished: ${messageOf(error)}`, { cause: error });
  }
}

/** The tokens kept for this tab, if the person signed in before a reload. */
export function restoreSignIn(login: ConsoleLogin): TokenSource | undefined {
  const kept = readItem<KeptTokens>(TOKENS_ITEM);
  if (!kept || kept.issuer !== login.issuer || kept.clientId !== login.clientId) return undefined;
  if (typeof kept.accessToken !== 'string' || typeof kept.expiresAt !== 'number') return undefined;
  return new SignedIn(login, kept);
}

function keptFrom(login: ConsoleLogin, answer: oauth.TokenEndpointResponse, previous?: KeptTokens): KeptTokens {
  const lifetime = answer.expires_in ?? DEFAULT_LIFETIME_SECONDS;
  // A provider that does not rotate refresh tokens answers a refresh without one: the old one stays good.
  const refreshToken = answer.refresh_token ?? previous?.refreshToken;
  return {
    issuer: login.issuer,
    clientId: login.clientId,
    accessToken: answer.access_token,
    ...(refreshToken ? { refreshToken } : {}),
    expiresAt: Date.now() + lifetime * 1000,
    lifetime,
  };
}

/** A sign-in's tokens: refreshed before they expire (one refresh at a time), kept for the tab, revoked on sign-out. */
class SignedIn implements TokenSource {
  private refreshing?: Promise<string>;
  /** The access token a refresh after a 401 gave: refused too, the sign-in has ended. */
  private retried?: string;
  private ended = false;
  private readonly listeners: ((reason: Error) => void)[] = [];

  constructor(
    private readonly login: ConsoleLogin,
    private kept: KeptTokens,
  ) {}

  keep(): void {
    sessionStorage.setItem(TOKENS_ITEM, JSON.stringify(this.kept));
  }

  async bearer(refused?: string): Promise<string> {
    if (this.ended) throw new SignInError('You are signed out. Sign in again.');
    if (refused !== undefined) {
      if (refused === this.retried) throw this.end('The server no longer accepts your sign-in. Sign in again.');
      if (refused !== this.kept.accessToken) return this.kept.accessToken;
      this.retried = await this.refresh();
      return this.retried;
    }
    const margin = Math.min(REFRESH_MARGIN_SECONDS, this.kept.lifetime / 5) * 1000;
    return Date.now() < this.kept.expiresAt - margin ? this.kept.accessToken : this.refresh();
  }

  onEnded(listener: (reason: Error) => void): void {
    this.listeners.push(listener);
  }

  async signOut(): Promise<void> {
    const { accessToken, refreshToken } = this.kept;
    this.forget();
    const as = await discover(this.login.issuer).catch(() => undefined);
    if (!as?.revocation_endpoint) return;
    const client: oauth.Client = { client_id: this.login.clientId };
    // The refresh token first: most providers end the grant, and the access tokens with it.
    const revocations: [string, string][] = [
      ...(refreshToken ? [[refreshToken, 'refresh_token'] as [string, string]] : []),
      [accessToken, 'access_token'],
    ];
    for (const [token, hint] of revocations) {
      try {
        const response = await oauth.revocationRequest(as, client, oauth.None(), token, {
          ...requestOptions(this.login.issuer),
          additionalParameters: { token_type_hint: hint },
        });
        await oauth.processRevocationResponse(response);
      } catch (error) {
        console.warn(`the provider did not revoke the ${hint.replace('_', ' ')}: ${messageOf(error)}`);
      }
    }
  }

  /** One refresh at a time: a request that finds one running waits for its token. */
  private refresh(): Promise<string> {
    this.refreshing ??= this.refreshNow().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refreshNow(): Promise<string> {
    const { refreshToken } = this.kept;
    if (!refreshToken) throw this.end('Your sign-in has expired. Sign in again.');
    const as = await discover(this.login.issuer);
    const client: oauth.Client = { client_id: this.login.clientId };
    let answer: oauth.TokenEndpointResponse;
    try {
      const response = await oauth.refreshTokenGrantRequest(
        as,
        client,
        oauth.None(),
        refreshToken,
        requestOptions(this.login.issuer),
      );
      answer = await oauth.processRefreshTokenResponse(as, client, response);
    } catch (error) {
      // The provider's refusal ends the sign-in; a provider out of reach fails this request only.
      if (error instanceof oauth.ResponseBodyError) {
        throw this.end(`Your sign-in has ended at the provider (${providerWords(error)}). Sign in again.`);
      }
      throw new SignInError(`Your sign-in could not be renewed: ${messageOf(error)}`, { cause: error });
    }
    if (this.ended) throw new SignInError('You are signed out. Sign in again.');
    this.kept = keptFrom(this.login, answer, this.kept);
    this.keep();
    return this.kept.accessToken;
  }

  private forget(): void {
    this.ended = true;
    sessionStorage.removeItem(TOKENS_ITEM);
  }

  /** The sign-in is over: forgotten, and the console told (it shows the sign-in page with `message`). */
  private end(message: string): SignInError {
    const reason = new SignInError(message);
    if (this.ended) return reason;
    this.forget();
    for (const listener of this.listeners) listener(reason);
    return reason;
  }
}
