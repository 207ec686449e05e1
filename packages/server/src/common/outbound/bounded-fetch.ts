/** A response (or one server-sent event of a stream) longer than the reader allows. */
export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';

  constructor(
    readonly limit: number,
    readonly what: 'response' | 'stream event',
  ) {
    super(`the ${what} is larger than ${limit} bytes`);
  }
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * A `fetch` whose response bodies are read `limit` bytes at most: a whole body, or for
 * `text/event-stream` each event (a stream may run long, one event may not). Past the limit the body
 * errors with ResponseTooLargeError and the connection is dropped, so a hostile peer costs no memory.
 */
export function boundedFetch(inner: typeof fetch, limit: number): typeof fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    if (!response.body) return response;
    const events = (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (!events && declared > limit) {
      await response.body.cancel().catch(() => undefined);
      throw new ResponseTooLargeError(limit, 'response');
    }
    const body = response.body.pipeThrough(events ? perEvent(limit) : whole(limit));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

function whole(limit: number): TransformStream<Uint8Array, Uint8Array> {
  let read = 0;
  return new TransformStream({
    transform(chunk, controller) {
      read += chunk.byteLength;
      if (read > limit) controller.error(new ResponseTooLargeError(limit, 'response'));
      else controller.enqueue(chunk);
    },
  });
}

/** Counts the bytes since the last blank line (an event's end: LF LF, CR LF CR LF, or CR CR). */
function perEvent(limit: number): TransformStream<Uint8Array, Uint8Array> {
  let inEvent = 0;
  // The line ends just seen, CR LF counting as one: two in a row end the event.
  let endings = 0;
  let lastCr = false;
  return new TransformStream({
    transform(chunk, controller) {
      for (const byte of chunk) {
        if (byte === LF && lastCr) {
          lastCr = false;
          continue;
        }
        lastCr = byte === CR;
        if (byte === LF || byte === CR) {
          endings += 1;
          if (endings >= 2) inEvent = 0;
          continue;
        }
        endings = 0;
        inEvent += 1;
        if (inEvent > limit) {
          controller.error(new ResponseTooLargeError(limit, 'stream event'));
          return;
        }
      }
      controller.enqueue(chunk);
    },
  });
}
