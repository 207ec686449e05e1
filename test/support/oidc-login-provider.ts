/**
 * A real OpenID provider (oidc-provider 9) that signs people in, for the login tests of the terminal
 * client and the web console: a public client for each (no secret; the CLI's with the device grant too;
 * authorization code with PKCE, refresh tokens, loopback redirects on any port), revocation, and JWT
 * access tokens for the server's audience. Its login and consent pages are oidc-provider's development
 * interactions (any login name, any password), which a test drives with plain HTTP requests (see
 * `Browser`) or in Chromium.
 *
 *   const idp = await startLoginProvider({ deviceFlow: true });
 *   // server: OIDC_ISSUER_URL=idp.issuer, OIDC_AUDIENCE=idp.audience, OIDC_CLI_CLIENT_ID=idp.clientId,
 *   //         OIDC_CONSOLE_CLIENT_ID=idp.consoleClientId
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type AdapterFactory, type AdapterPayload, type Configuration } from 'oidc-provider';

export const CLI_CLIENT_ID = 'cleveragents-cli';
/** The web console's client: its redirect is `http://127.0.0.1:<any port>/console/signed-in`. */
export const CONSOLE_CLIENT_ID = 'cleveragents-console';
/** The audience (a resource indicator, so an absolute URI) of the access tokens. */
export const API_AUDIENCE = 'urn:cleveragents:test-api';
/** Every account is in this group (the `groups` claim of its access tokens). */
export const ACCOUNT_GROUP = 'cli-users';

export interface LoginProviderOptions {
  /** Offer the device grant (a device_authorization_endpoint). */
  deviceFlow: boolean;
}

export interface LoginProvider {
  readonly issuer: string;
  readonly clientId: string;
  readonly consoleClientId: string;
  readonly audience: string;
  /** Lifetime of new access tokens (300 s unless set). */
  accessTokenTtlSeconds: number;
  /** Makes every pending device code expired (as its lifetime running out would). */
  expireDeviceCodes(): void;
  /** A refresh_token grant with `refreshToken` (issued to `clientId`, the CLI's unless given): the answer. */
  refresh(refreshToken: string, clientId?: string): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Revokes a token at the revocation endpoint, as a client would. */
  revoke(token: string): Promise<void>;
  close(): Promise<void>;
}

/** A plain in-memory store, with the lookups the device flow and interactions need. */
function memoryAdapter(store: Map<string, AdapterPayload>): AdapterFactory {
  return (model) => {
    const key = (id: string): string => `${model}:${id}`;
    const find = (predicate: (payload: AdapterPayload) => boolean): AdapterPayload | undefined => {
      for (const [k, payload] of store) if (k.startsWith(`${model}:`) && predicate(payload)) return payload;
      return undefined;
    };
    return {
      upsert: (id, payload) => {
        store.set(key(id), payload);
        return Promise.resolve();
      },
      find: (id) => Promise.resolve(store.get(key(id))),
      findByUserCode: (userCode) => Promise.resolve(find((p) => p.userCode === userCode)),
      findByUid: (uid) => Promise.resolve(find((p) => p.uid === uid)),
      consume: (id) => {
        const payload = store.get(key(id));
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
        return Promise.resolve();
      },
      destroy: (id) => {
        store.delete(key(id));
        return Promise.resolve();
      },
      revokeByGrantId: (grantId) => {
        for (const [k, payload] of store) if (payload.grantId === grantId) store.delete(k);
        return Promise.resolve();
      },
    };
  };
}

export async function startLoginProvider(options: LoginProviderOptions): Promise<LoginProvider> {
  const store = new Map<string, AdapterPayload>();
  const state = { accessTokenTtlSeconds: 300 };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const configuration: Configuration = {
    adapter: memoryAdapter(store),
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'cli-login-test', alg: 'RS256', use: 'sig' }] },
    clients: [
      {
        client_id: CLI_CLIENT_ID,
        token_endpoint_auth_method: 'none',
        application_type: 'native',
        grant_types: [
          ...(options.deviceFlow ? ['urn:ietf:params:oauth:grant-type:device_code'] : []),
          'authorization_code',
          'refresh_token',
        ],
        response_types: ['code'],
        // A native client's loopback redirect matches on any port (RFC 8252 §7.3).
        redirect_uris: ['http://127.0.0.1/callback'],
      },
      {
        client_id: CONSOLE_CLIENT_ID,
        token_endpoint_auth_method: 'none',
        // Native only so that its loopback redirect matches the test server's port, whatever it is; the
        // console runs in a browser, as a web client registered with its exact redirect URI would.
        application_type: 'native',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: ['http://127.0.0.1/console/signed-in'],
      },
    ],
    // The console calls the token and revocation endpoints from its page: its origin is the test server's.
    clientBasedCORS: (_ctx, origin, client) => {
      const from = URL.parse(origin);
      if (client.clientId === CONSOLE_CLIENT_ID) return from?.protocol === 'http:' && from.hostname === '127.0.0.1';
      return client.redirectUris?.some((uri) => URL.parse(uri)?.origin === origin) ?? false;
    },
    cookies: { keys: ['a-cookie-key-only-for-tests'] },
    features: {
      devInteractions: { enabled: true },
      deviceFlow: { enabled: options.deviceFlow },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => API_AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: 'api',
          audience: API_AUDIENCE,
          accessTokenFormat: 'jwt',
          accessTokenTTL: state.accessTokenTtlSeconds,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    scopes: ['openid', 'profile', 'offline_access', 'api'],
    // Refresh tokens whatever the scopes (offline_access needs prompt=consent otherwise).
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    extraTokenClaims: () => ({ groups: [ACCOUNT_GROUP] }),
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, preferred_username: id }) }),
    ttl: {
      AccessToken: () => state.accessTokenTtlSeconds,
      DeviceCode: 600,
      Grant: 3600,
      IdToken: 3600,
      Interaction: 600,
      Session: 3600,
      RefreshToken: 3600,
      AuthorizationCode: 60,
    },
  };
  const provider = new Provider(issuer, configuration);
  const handler = provider.callback();

  const form = (body: Record<string, string>) => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body),
  });

  return {
    issuer,
    clientId: CLI_CLIENT_ID,
    consoleClientId: CONSOLE_CLIENT_ID,
    audience: API_AUDIENCE,
    get accessTokenTtlSeconds() {
      return state.accessTokenTtlSeconds;
    },
    set accessTokenTtlSeconds(value: number) {
      state.accessTokenTtlSeconds = value;
    },
    expireDeviceCodes() {
      for (const [k, payload] of store) {
        if (k.startsWith('DeviceCode:')) payload.exp = Math.floor(Date.now() / 1000) - 1;
      }
    },
    async refresh(refreshToken, clientId = CLI_CLIENT_ID) {
      const response = await fetch(
        `${issuer}/token`,
        form({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId }),
      );
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    async revoke(token) {
      const response = await fetch(`${issuer}/token/revocation`, form({ token, client_id: CLI_CLIENT_ID }));
      if (!response.ok) throw new Error(`revocation answered ${response.status}: ${await response.text()}`);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/**
 * A person's browser, with plain HTTP requests: follows redirects by hand, keeps cookies, and
 * submits oidc-provider's device, login and consent forms.
 */
export class Browser {
  private readonly cookies = new Map<string, string>();

  /** GETs or POSTs `url`, following redirects (up to 20); the last response's URL, status and body. */
  async visit(url: string, body?: Record<string, string>): Promise<{ url: string; status: number; text: string }> {
    let current = url;
    let init: RequestInit | undefined = body
      ? {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(body),
        }
      : undefined;
    for (let hop = 0; hop < 20; hop += 1) {
      const headers = new Headers(init?.headers);
      const jar = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
      if (jar) headers.set('cookie', jar);
      const response = await fetch(current, { ...init, headers, redirect: 'manual' });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const at = pair.indexOf('=');
        const name = pair.slice(0, at).trim();
        const value = pair.slice(at + 1).trim();
        if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
        else this.cookies.set(name, value);
      }
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        current = new URL(location, current).toString();
        init = undefined;
        continue;
      }
      return { url: current, status: response.status, text: await response.text() };
    }
    throw new Error(`more than 20 redirects from ${url}`);
  }

  /** Submits the one form of a page (its action and hidden inputs) plus `fields`. */
  async submit(page: { url: string; text: string }, fields: Record<string, string> = {}) {
    const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(page.text);
    if (!form) throw new Error(`no form on ${page.url}:\n${page.text.slice(0, 2000)}`);
    // The inputs that carry a value: hidden ones, and a prefilled user code.
    const hidden: Record<string, string> = {};
    for (const input of form[2].matchAll(/<input[^>]*>/g)) {
      const name = /name="([^"]+)"/.exec(input[0])?.[1];
      const value = /value="([^"]*)"/.exec(input[0])?.[1];
      if (name && value !== undefined) hidden[name] = value;
    }
    return this.visit(new URL(form[1].replace(/&amp;/g, '&'), page.url).toString(), { ...hidden, ...fields });
  }

  /**
   * Signs `login` in for a device user code: the code page, its confirmation (or `deny`: the abort
   * button), then, when confirmed, the login and consent pages. The last page.
   */
  async approveDevice(
    verificationUriComplete: string,
    login: string,
    decision: 'approve' | 'deny' = 'approve',
  ): Promise<{ url: string; status: number; text: string }> {
    const codePage = await this.visit(verificationUriComplete);
    const confirmPage = await this.submit(codePage);
    if (decision === 'deny') return this.submit(confirmPage, { abort: 'yes' });
    const loginPage = await this.submit(confirmPage);
    return this.signIn(loginPage, login);
  }

  /** From a login page: signs in as `login` and consents. The last page (or where the redirects ended). */
  async signIn(loginPage: { url: string; status: number; text: string }, login: string) {
    if (!loginPage.text.includes('name="login"')) {
      throw new Error(`not a login page (${loginPage.status} ${loginPage.url}):\n${loginPage.text.slice(0, 2000)}`);
    }
    const consentPage = await this.submit(loginPage, { login, password: 'any' });
    if (!consentPage.text.includes('name="prompt" value="consent"')) return consentPage;
    return this.submit(consentPage);
  }
}
