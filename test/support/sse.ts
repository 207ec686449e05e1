/** One Server-Sent Event of a JSON-RPC stream: its `id:` (when it has one) and its JSON-RPC message. */
export interface SseEvent {
  id: number | undefined;
  message: { result?: Record<string, unknown>; error?: { code: number; data?: unknown[] } };
}

/**
 * POSTs a JSON-RPC call and reads its answer as Server-Sent Events, in order, until the server ends the
 * stream or the caller stops reading (the request is then aborted: the client went away). A plain JSON answer
 * (an error before any event) comes as one event without an id.
 */
export async function* sseCall(
  endpoint: string,
  body: unknown,
  headers: Record<string, string> = {},
): AsyncGenerator<SseEvent, void, undefined> {
  const abort = new AbortController();
  try {
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'a2a-version': '1.0', ...headers },
      body: JSON.stringify(body),
      signal: abort.signal,
    });
    if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
      yield { id: undefined, message: (await res.json()) as SseEvent['message'] };
      return;
    }
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    for (;;) {
      const next = await reader.read();
      if (next.done) return;
      buffered += decoder.decode(next.value, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        let id: number | undefined;
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) id = Number(line.slice(4));
          else if (line.startsWith('data: ')) data += line.slice(6);
        }
        if (data) yield { id, message: JSON.parse(data) as SseEvent['message'] };
      }
    }
  } finally {
    abort.abort();
  }
}
