/**
 * A JSON-RPC streaming call read by the client itself, not by the SDK: used with a server whose card
 * declares resumable streams, so that each event's SSE `id:` is read along with it and SubscribeToTask
 * can carry `lastSequence`. Runs over any `fetch`: HTTP, or the stdio connection's.
 */
import { StreamResponse } from '@a2a-js/sdk';
import { CleverAgentsError, type ErrorContext } from './errors.js';

/** An event as a stream source gives it: the A2A event, and the SSE `id:` line it came with (HTTP). */
export interface SourceEvent {
  event: StreamResponse;
  sseId?: string;
}

/** The largest SSE event accepted (as the SDK's reader): a server sending more is cut off. */
const MAX_EVENT_CHARS = 4 * 1024 * 1024;

let nextRequestId = 1;

interface RpcAnswer {
  jsonrpc?: unknown;
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown };
}

function rpcError(answer: RpcAnswer, context: ErrorContext): CleverAgentsError | undefined {
  const error = answer.error;
  if (!error || typeof error.code !== 'number') return undefined;
  return new CleverAgentsError(
    { code: error.code, message: typeof error.message === 'string' ? error.message : '', data: error.data },
    context,
  );
}

/** The raw SSE events of a response: `data` (lines joined) and the `id` the event set, if any. */
async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<{ id?: string; data: string }> {
  // The cast: the DOM's and Node's typings of TextDecoderStream's writable side differ; both take bytes.
  const reader = body
    .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
    .getReader();
  let buffer = '';
  let data: string[] = [];
  let id: string | undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, end).replace(/\r$/, '');
        buffer = buffer.slice(end + 1);
        if (line === '') {
          if (data.length > 0) yield { id, data: data.join('\n') };
          data = [];
          id = undefined;
          continue;
        }
        const colon = line.indexOf(':');
        if (colon === 0) continue; // a comment (keep-alive)
        const field = colon < 0 ? line : line.slice(0, colon);
        const raw = colon < 0 ? '' : line.slice(colon + 1);
        const fieldValue = raw.startsWith(' ') ? raw.slice(1) : raw;
        if (field === 'data') data.push(fieldValue);
        else if (field === 'id') id = fieldValue;
      }
      if (buffer.length + data.reduce((n, d) => n + d.length, 0) > MAX_EVENT_CHARS) {
        throw new Error(`an event of the stream is larger than ${MAX_EVENT_CHARS} characters`);
      }
    }
    if (data.length > 0) yield { id, data: data.join('\n') };
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * Sends `method` with `params` asking for an event stream and yields its events. A JSON-RPC error (as
 * the answer or as an event) is thrown as a CleverAgentsError; anything unreadable as a plain Error.
 */
export async function* rpcEventStream(
  fetchImpl: typeof fetch,
  url: string,
  method: string,
  params: unknown,
  options: { signal: AbortSignal; headers?: Record<string, string>; context: ErrorContext },
): AsyncGenerator<SourceEvent, void, undefined> {
  const id = nextRequestId++;
  const context = { ...options.context, method };
  const response = await fetchImpl(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'text/event-stream',
      'A2A-Version': '1.0',
      ...options.headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    signal: options.signal,
  });
  if (!response.ok || !response.headers.get('content-type')?.startsWith('text/event-stream') || !response.body) {
    const text = await response.text().catch(() => '');
    let answer: RpcAnswer | undefined;
    try {
      answer = JSON.parse(text) as RpcAnswer;
    } catch {
      answer = undefined;
    }
    const error = answer && rpcError(answer, { ...context, httpStatus: response.status });
    if (error) throw error;
    throw new Error(`${method}: the server answered HTTP ${response.status} without an event stream`);
  }
  for await (const raw of sseEvents(response.body)) {
    let answer: RpcAnswer | null;
    try {
      answer = JSON.parse(raw.data) as RpcAnswer | null;
    } catch {
      throw new Error(`${method}: an event of the stream is not JSON`);
    }
    if (typeof answer !== 'object' || answer === null || answer.jsonrpc !== '2.0' || answer.id !== id) {
      throw new Error(`${method}: an event of the stream is not a JSON-RPC answer to this request`);
    }
    const error = rpcError(answer, context);
    if (error) throw error;
    if (typeof answer.result !== 'object' || answer.result === null) {
      throw new Error(`${method}: an event of the stream has no result`);
    }
    yield { event: StreamResponse.fromJSON(answer.result), ...(raw.id !== undefined ? { sseId: raw.id } : {}) };
  }
}
