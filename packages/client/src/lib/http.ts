/**
 * The HTTP transport's `fetch`: adds the credentials (to their own origin only), turns "no answer" into
 * UnreachableError and an HTTP error whose body is a JSON-RPC error into CleverAgentsError (keeping the
 * HTTP status and Retry-After, which the SDK's own error mapping drops). Everything else goes to the
 * SDK unchanged.
 */
import { CleverAgentsError, CredentialOriginError, UnreachableError, type CredentialKind } from './errors.js';

/**
 * A bearer token, or a function asked for it before each request (a token that is refreshed). After a
 * 401 the function is asked again with the token refused: a new token is sent, the same one ends the request.
 */
export type BearerToken = string | ((refused?: string) => string | Promise<string>);

export interface HttpCredentials {
  apiKey?: string;
  bearerToken?: BearerToken;
  /**
   * The origin (or any URL on it) the credentials belong to, the one the user named: they are sent to
   * no other, and a redirect away from it is not followed. Required with a credential.
   */
  origin?: string;
}

export function credentialKind(credentials: HttpCredentials): CredentialKind {
  if (credentials.apiKey) return 'apiKey';
  if (credentials.bearerToken) return 'bearer';
  return 'none';
}

function urlOf(input: Parameters<typeof fetch>[0]): string {
  if (typeof input === 'string') return input;
  if (input instanceof URL) return input.toString();
  return input.url;
}

/** The JSON-RPC method of a request body, for error messages. */
export function methodOfBody(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const method = (JSON.parse(body) as { method?: unknown }).method;
    return typeof method === 'string' ? method : undefined;
  } catch {
    return undefined;
  }
}

/** Retry-After as seconds (delta-seconds or an HTTP date). */
export function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}

/** One request; no answer at all is an UnreachableError naming the URL. */
async function send(base: typeof fetch, input: Parameters<typeof fetch>[0], init: RequestInit): Promise<Response> {
  try {
    return await base(input, init);
  } catch (err) {
    if (isAbort(err) || init.signal?.aborted) throw err;
    throw new UnreachableError(urlOf(input), err);
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;

/** The request after a redirect, as fetch would make it: 303 (and 301/302 of a POST) become a GET. */
function redirected(init: RequestInit, status: number): RequestInit {
  const method = (init.method ?? 'GET').toUpperCase();
  const toGet =
    status === 303 ? method !== 'GET' && method !== 'HEAD' : (status === 301 || status === 302) && method === 'POST';
  if (!toGet) return init;
  const headers = new Headers(init.headers);
  for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language']) headers.delete(name);
  return { ...init, method: 'GET', body: undefined, headers };
}

/**
 * Sends with the credentials, following redirects itself: one that leaves `origin` (another scheme,
 * host or port; so never https to http) is refused, since fetch would carry X-API-Key along.
 */
async function sendWithCredentials(
  base: typeof fetch,
  credentials: HttpCredentials,
  origin: string,
  input: Parameters<typeof fetch>[0],
  init: RequestInit = {},
): Promise<Response> {
  let url = new URL(urlOf(input));
  if (url.origin !== origin) throw new CredentialOriginError(origin, url.href, 'request');
  let request = init;
  let target = input;
  let renewed: string | undefined;
  let renewals = 0;
  for (let hop = 0; ; hop++) {
    const headers = new Headers(request.headers);
    if (credentials.apiKey && !headers.has('x-api-key')) headers.set('X-API-Key', credentials.apiKey);
    let token: string | undefined;
    if (credentials.bearerToken && !headers.has('authorization')) {
      token =
        renewed ??
        (typeof credentials.bearerToken === 'function' ? await credentials.bearerToken() : credentials.bearerToken);
      renewed = undefined;
      headers.set('Authorization', `Bearer ${token}`);
    }
    const response = await send(base, target, { ...request, headers, redirect: 'manual' });
    // A refused token is offered for renewal (twice at most); a new one is sent, the same one is the answer.
    if (
      response.status === 401 &&
      typeof credentials.bearerToken === 'function' &&
      token !== undefined &&
      renewals < 2 &&
      !(request.body instanceof ReadableStream) &&
      !(target instanceof Request)
    ) {
      renewals += 1;
      let fresh: string;
      try {
        fresh = await credentials.bearerToken(token);
      } catch (err) {
        await response.body?.cancel();
        throw err;
      }
      if (fresh === token) return response;
      await response.body?.cancel();
      renewed = fresh;
      continue;
    }
    const location = REDIRECTS.has(response.status) ? response.headers.get('location') : null;
    if (location === null || init.redirect === 'manual') return response;
    await response.body?.cancel();
    const next = new URL(location, url);
    if (init.redirect === 'error') throw new TypeError(`${url.href} redirected to ${next.href} (redirect: 'error')`);
    if (hop >= MAX_REDIRECTS) throw new TypeError(`more than ${MAX_REDIRECTS} redirects from ${urlOf(input)}`);
    if (next.origin !== origin) throw new CredentialOriginError(origin, next.href, 'redirect');
    if (request.body instanceof ReadableStream) {
      throw new TypeError(`${url.href} redirected to ${next.href}: a streamed body cannot be sent again`);
    }
    url = next;
    target = url;
    request = redirected(request, response.status);
  }
}

/** The origin of a URL, or a clear error naming what is wrong with it. */
function originOf(url: string): string {
  const parsed = URL.parse(url);
  if (!parsed || !/^https?:$/.test(parsed.protocol)) throw new TypeError(`not an http(s) URL: ${url}`);
  return parsed.origin;
}

/** The origin credentials given for `url` belong to; undefined when there are none. */
export function credentialOrigin(credentials: HttpCredentials, url: string): string | undefined {
  return credentialKind(credentials) === 'none' ? undefined : originOf(url);
}

/**
 * Refuses, sending nothing, an interface URL (from an Agent Card) on another origin than the one the
 * credentials belong to. Without credentials (`origin` undefined) any URL is let through.
 */
export function assertCredentialOrigin(origin: string | undefined, url: string): void {
  if (origin !== undefined && URL.parse(url)?.origin !== origin) throw new CredentialOriginError(origin, url, 'card');
}

/**
 * A `fetch` for one agent: credentials (when given) on every request to their origin and on no other,
 * errors mapped as above.
 */
export function authenticatedFetch(credentials: HttpCredentials, base: typeof fetch = fetch): typeof fetch {
  const kind = credentialKind(credentials);
  if (kind !== 'none' && !credentials.origin) {
    throw new TypeError('authenticatedFetch: credentials need the origin they belong to (credentials.origin)');
  }
  const origin = credentialOrigin(credentials, credentials.origin ?? '');
  return async (input, init) => {
    const response = origin
      ? await sendWithCredentials(base, credentials, origin, input, init)
      : await send(base, input, { ...init, headers: new Headers(init?.headers) });
    if (response.ok) return response;
    const text = await response.text().catch(() => '');
    let json: { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } } | undefined;
    try {
      json = JSON.parse(text) as typeof json;
    } catch {
      json = undefined;
    }
    if (json?.jsonrpc === '2.0' && typeof json.error?.code === 'number') {
      throw new CleverAgentsError(
        {
          code: json.error.code,
          message: typeof json.error.message === 'string' ? json.error.message : '',
          data: json.error.data,
        },
        {
          httpStatus: response.status,
          retryAfter: parseRetryAfter(response.headers.get('retry-after')),
          credentials: kind,
          method: methodOfBody(init?.body),
        },
      );
    }
    // Not JSON-RPC: hand the SDK the same response again (the body was read above).
    return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
