/**
 * The HTTP transport's `fetch`: adds the credentials, turns "no answer" into UnreachableError and an
 * HTTP error whose body is a JSON-RPC error into CleverAgentsError (keeping the HTTP status and
 * Retry-After, which the SDK's own error mapping drops). Everything else goes to the SDK unchanged.
 */
import { CleverAgentsError, UnreachableError, type CredentialKind } from './errors.js';

/** A bearer token, or a function asked for it before each request (a token that is refreshed). */
export type BearerToken = string | (() => string | Promise<string>);

export interface HttpCredentials {
  apiKey?: string;
  bearerToken?: BearerToken;
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

/** A `fetch` for one agent: credentials (when given) on every request, errors mapped as above. */
export function authenticatedFetch(credentials: HttpCredentials, base: typeof fetch = fetch): typeof fetch {
  const kind = credentialKind(credentials);
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    if (credentials.apiKey && !headers.has('x-api-key')) headers.set('X-API-Key', credentials.apiKey);
    if (credentials.bearerToken && !headers.has('authorization')) {
      const token =
        typeof credentials.bearerToken === 'function' ? await credentials.bearerToken() : credentials.bearerToken;
      headers.set('Authorization', `Bearer ${token}`);
    }
    let response: Response;
    try {
      response = await base(input, { ...init, headers });
    } catch (err) {
      if (isAbort(err) || init?.signal?.aborted) throw err;
      throw new UnreachableError(urlOf(input), err);
    }
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
