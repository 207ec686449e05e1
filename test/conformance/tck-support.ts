/**
 * Support for test/conformance/tck-jsonrpc.e2e-spec.ts: a raw JSON-RPC client shaped like the A2A TCK's
 * (every call carries `A2A-Version: 1.0`, streaming calls ask for `text/event-stream`), an incremental
 * SSE reader with time limits, a validator over the official A2A v1.0 JSON Schema bundle, and a webhook
 * receiver for push-notification delivery. Written for this project; no TCK code is copied here.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseJsonOrUndefined } from '../support/server.js';

// ---------------------------------------------------------------------------------------------------
// Identifiers: the TCK makes every messageId `tck-<scenario>-<session>`, so the SUT routes on the prefix
// and separate runs never collide.
// ---------------------------------------------------------------------------------------------------

const SESSION = randomUUID().slice(0, 8);

/** `<prefix>-<session>-<random>`: a messageId the conformance actor routes by its prefix. */
export function tckId(prefix: string): string {
  return `${prefix}-${SESSION}-${randomUUID().slice(0, 8)}`;
}

/** A user message in the v1.0 JSON shape the TCK sends. */
export function userMessage(
  prefix: string,
  text = 'Hello from TCK',
  extra: Record<string, unknown> = {},
): Record<string, any> {
  return { role: 'ROLE_USER', parts: [{ text }], messageId: tckId(prefix), ...extra };
}

// ---------------------------------------------------------------------------------------------------
// JSON-RPC over HTTP
// ---------------------------------------------------------------------------------------------------

export interface RpcResponse {
  status: number;
  headers: Headers;
  contentType: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: any;
  text: string;
}

export interface CallOptions {
  /** Extra or overriding headers; a value of `null` removes the header. */
  headers?: Record<string, string | null>;
  /** JSON-RPC id; a fresh integer by default. */
  id?: string | number | null;
  /** Post here instead of the client's interface URL. */
  url?: string;
}

let nextId = 1;

function buildHeaders(
  base: Record<string, string>,
  overrides: Record<string, string | null> = {},
): Record<string, string> {
  const headers: Record<string, string> = { ...base };
  for (const [name, value] of Object.entries(overrides)) {
    for (const existing of Object.keys(headers)) {
      if (existing.toLowerCase() === name.toLowerCase()) delete headers[existing];
    }
    if (value !== null) headers[name] = value;
  }
  return headers;
}

async function asRpcResponse(res: Response): Promise<RpcResponse> {
  const text = await res.text();
  const json = parseJsonOrUndefined(text);
  return { status: res.status, headers: res.headers, contentType: res.headers.get('content-type') ?? '', json, text };
}

/**
 * Talks to one JSON-RPC interface of the Agent Card the way the TCK's JSON-RPC transport does:
 * `A2A-Version: 1.0` on every request, `Content-Type: application/json`, and for streaming methods
 * `Accept: text/event-stream`.
 */
export class TckJsonRpcClient {
  constructor(
    readonly url: string,
    private readonly version: string | null = '1.0',
  ) {}

  private baseHeaders(): Record<string, string> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (this.version !== null) headers['A2A-Version'] = this.version;
    return headers;
  }

  /** One JSON-RPC request; answers the whole HTTP response. */
  async call(method: string, params?: unknown, options: CallOptions = {}): Promise<RpcResponse> {
    const body: Record<string, unknown> = {
      jsonrpc: '2.0',
      id: options.id === undefined ? nextId++ : options.id,
      method,
    };
    if (params !== undefined) body.params = params;
    return this.post(body, options);
  }

  /** Posts any body (an object is JSON-encoded, a string is sent as is). */
  async post(body: unknown, options: CallOptions = {}): Promise<RpcResponse> {
    const res = await fetch(options.url ?? this.url, {
      method: 'POST',
      headers: buildHeaders(this.baseHeaders(), options.headers),
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return asRpcResponse(res);
  }

  /** A streaming JSON-RPC request, read incrementally. */
  async stream(method: string, params: unknown, options: CallOptions = {}): Promise<SseStream> {
    const id = options.id === undefined ? nextId++ : options.id;
    const controller = new AbortController();
    const res = await fetch(options.url ?? this.url, {
      method: 'POST',
      headers: buildHeaders({ ...this.baseHeaders(), Accept: 'text/event-stream' }, options.headers),
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      signal: controller.signal,
    });
    return SseStream.from(res, id, controller);
  }
}

// ---------------------------------------------------------------------------------------------------
// Server-Sent Events
// ---------------------------------------------------------------------------------------------------

const NOTHING_YET = Symbol('timeout');

type ChunkReader = { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> };

/**
 * One streaming response. When the server answered with plain JSON (an immediate error) instead of an
 * event stream, `isSse` is false and `json` holds the body.
 */
export class SseStream {
  readonly events: any[] = [];
  closed = false;
  private buffer = '';
  private queue: any[] = [];
  private pending: Promise<{ done: boolean; value?: Uint8Array }> | undefined;
  private readonly decoder = new TextDecoder();

  private constructor(
    readonly status: number,
    readonly headers: Headers,
    readonly requestId: string | number | null,
    readonly isSse: boolean,
    readonly json: any,
    private readonly reader: ChunkReader | undefined,
    private readonly controller: AbortController,
  ) {}

  static async from(res: Response, requestId: string | number | null, controller: AbortController): Promise<SseStream> {
    const contentType = res.headers.get('content-type') ?? '';
    if (!contentType.includes('text/event-stream') || !res.body) {
      const { json } = await asRpcResponse(res);
      const stream = new SseStream(res.status, res.headers, requestId, false, json, undefined, controller);
      stream.closed = true;
      return stream;
    }
    return new SseStream(res.status, res.headers, requestId, true, undefined, res.body.getReader(), controller);
  }

  get contentType(): string {
    return this.headers.get('content-type') ?? '';
  }

  /**
   * The next event's parsed `data:` payload, or undefined once the server has closed the stream.
   * Throws when nothing arrives within `timeoutMs` (the stream stays usable).
   */
  async next(timeoutMs = 10_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.queue.length > 0) {
        const event = this.queue.shift();
        this.events.push(event);
        return event;
      }
      if (this.closed || !this.reader) return undefined;
      this.pending ??= this.reader.read();
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no SSE event within ${timeoutMs} ms`);
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        this.pending,
        new Promise<typeof NOTHING_YET>((resolve) => {
          timer = setTimeout(() => resolve(NOTHING_YET), left);
        }),
      ]).finally(() => clearTimeout(timer));
      if (outcome === NOTHING_YET) throw new Error(`no SSE event within ${timeoutMs} ms`);
      this.pending = undefined;
      if (outcome.done) {
        this.closed = true;
        this.parse(true);
        continue;
      }
      this.buffer += this.decoder.decode(outcome.value, { stream: true });
      this.parse(false);
    }
  }

  /** Reads until the server closes the stream; throws if it is still open after `timeoutMs`. */
  async drain(timeoutMs = 10_000): Promise<any[]> {
    const deadline = Date.now() + timeoutMs;
    while ((await this.next(Math.max(1, deadline - Date.now()))) !== undefined) {
      // keep reading
    }
    return this.events;
  }

  /** Closes the connection from the client side (a client going away). */
  async cancel(): Promise<void> {
    this.closed = true;
    this.controller.abort();
    await this.reader?.cancel().catch(() => undefined);
  }

  private parse(final: boolean): void {
    this.buffer = this.buffer.replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      this.take(this.buffer.slice(0, end));
      this.buffer = this.buffer.slice(end + 2);
    }
    if (final && this.buffer.trim().length > 0) {
      this.take(this.buffer);
      this.buffer = '';
    }
  }

  private take(block: string): void {
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data.length > 0) this.queue.push(JSON.parse(data));
  }
}

// ---------------------------------------------------------------------------------------------------
// Reading A2A payloads
// ---------------------------------------------------------------------------------------------------

export const TERMINAL_STATES = [
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
];
export const STREAM_RESPONSE_KEYS = ['task', 'message', 'statusUpdate', 'artifactUpdate'];

/** The task state a StreamResponse (or SendMessageResponse) carries, if any. */
export function stateOf(result: any): string | undefined {
  return result?.statusUpdate?.status?.state ?? result?.task?.status?.state ?? result?.status?.state;
}

/** The one StreamResponse member set in an SSE event's result. */
export function kindOf(result: any): string {
  const keys = STREAM_RESPONSE_KEYS.filter((key) => result && key in result);
  if (keys.length !== 1) {
    throw new Error(
      `expected exactly one of ${STREAM_RESPONSE_KEYS.join('|')}, got ${JSON.stringify(Object.keys(result ?? {}))}`,
    );
  }
  return keys[0];
}

export const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';

/** The google.rpc.ErrorInfo entry of a JSON-RPC error's `data` array. */
export function errorInfoOf(error: any): any {
  return Array.isArray(error?.data) ? error.data.find((d: any) => d?.['@type'] === ERROR_INFO_TYPE) : undefined;
}

// ---------------------------------------------------------------------------------------------------
// Push-notification webhook receiver
// ---------------------------------------------------------------------------------------------------

export interface WebhookRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
}

/** An HTTP server on 127.0.0.1 that records every request it gets and answers 200. */
export class WebhookReceiver {
  readonly requests: WebhookRequest[] = [];
  private server: Server | undefined;
  private waiters: Array<() => void> = [];

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        this.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        for (const wake of this.waiters.splice(0)) wake();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  url(path: string): string {
    const { port } = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${port}${path}`;
  }

  /** The requests received on `path`, waiting until `predicate` holds for them or `timeoutMs` passes. */
  async waitFor(
    path: string,
    predicate: (received: WebhookRequest[]) => boolean,
    timeoutMs = 15_000,
  ): Promise<WebhookRequest[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const received = this.requests.filter((r) => r.path === path);
      if (predicate(received) || Date.now() >= deadline) return received;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
