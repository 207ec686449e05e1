import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { pinnedLookup, type VettedTarget } from './outbound-url.policy.js';

/** Statuses whose response has no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` for clients that take one (the OpenAI SDK): every request's URL is vetted first, and the
 * connection goes to the addresses just vetted (no DNS rebinding between check and connect).
 * Redirects are not followed: a 3xx comes back as it is.
 */
export function pinnedFetch(vet: (url: string) => Promise<VettedTarget>): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const target = await vet(url);
    const method = (init?.method ?? 'GET').toUpperCase();
    const headers: Partial<Record<string, string>> = Object.fromEntries(new Headers(init?.headers).entries());
    const body = init?.body == null ? undefined : Buffer.from(await new Response(init.body).arrayBuffer());
    if (body && headers['content-length'] === undefined) headers['content-length'] = String(body.length);
    const { url: vetted } = target;
    const client = vetted.protocol === 'https:' ? https : http;
    return new Promise<Response>((resolve, reject) => {
      const request = client.request(
        {
          method,
          protocol: vetted.protocol,
          hostname: target.host,
          port: vetted.port || undefined,
          path: `${vetted.pathname}${vetted.search}`,
          headers,
          agent: false,
          lookup: pinnedLookup(target),
          signal: init?.signal ?? undefined,
        },
        (response) => {
          const status = response.statusCode ?? 0;
          const answered = new Headers();
          for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) {
            answered.append(response.rawHeaders[i], response.rawHeaders[i + 1]);
          }
          const empty = NULL_BODY_STATUSES.has(status) || method === 'HEAD';
          if (empty) response.resume();
          resolve(
            new Response(empty ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>), {
              status,
              statusText: response.statusMessage,
              headers: answered,
            }),
          );
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  };
}
