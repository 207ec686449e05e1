// Load generation: JSON-RPC bodies, one-off calls, autocannon rounds, SSE subscriptions.
import http from 'node:http';
import autocannon from 'autocannon';

/** Every request names the v1.0 wire: both servers speak it (the SDK's v0.3 compat layer is off). */
export const A2A_HEADERS = { 'content-type': 'application/json', 'a2a-version': '1.0' };

let seq = 0;
export const userMessage = (messageId, extra = {}) => ({
  messageId,
  role: 'ROLE_USER',
  parts: [{ text: 'benchmark' }],
  ...extra,
});
export const rpc = (method, params) => ({ jsonrpc: '2.0', id: ++seq, method, params });

/** One JSON-RPC call over HTTP; resolves with { status, body } (body parsed when it is JSON). */
export function call(base, headers, method, params, agent) {
  const payload = JSON.stringify(rpc(method, params));
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}/a2a`,
      { method: 'POST', headers: { ...A2A_HEADERS, ...headers, 'content-length': Buffer.byteLength(payload) }, agent },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          let body = text;
          try {
            body = JSON.parse(text);
          } catch {
            /* SSE or plain text */
          }
          resolve({ status: res.statusCode, body, text });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** A call that must succeed; returns its `result`. */
export async function mustCall(base, headers, method, params, agent) {
  const { status, body, text } = await call(base, headers, method, params, agent);
  if (status !== 200 || typeof body !== 'object' || !body || !('result' in body)) {
    throw new Error(`${method} on ${base}: HTTP ${status} ${text.slice(0, 400)}`);
  }
  return body.result;
}

/** Runs `fn(i)` for i in [0, n) with at most `concurrency` in flight. */
export async function pool(n, concurrency, fn) {
  let next = 0;
  const results = new Array(n);
  const worker = async () => {
    while (next < n) {
      const i = next++;
      results[i] = await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return results;
}

/**
 * One autocannon round against `${base}/a2a`. `body(i)` makes the i-th request's JSON-RPC body, so
 * message ids can differ per request. Resolves with autocannon's result.
 */
export function cannon({ base, headers, body, durationS, connections }) {
  let i = 0;
  return autocannon({
    url: `${base}/a2a`,
    connections,
    pipelining: 1,
    duration: durationS,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        headers: { ...A2A_HEADERS, ...headers },
        setupRequest: (req) => ({ ...req, body: JSON.stringify(body(i++)) }),
      },
    ],
  });
}

/**
 * Opens one SSE stream (SubscribeToTask) and resolves when its first event has arrived, with the
 * time to first event in ms and the request (destroy it to close the stream).
 */
export function openSubscription(base, headers, taskId, agent) {
  const payload = JSON.stringify(rpc('SubscribeToTask', { id: taskId }));
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/a2a`, {
      method: 'POST',
      agent,
      headers: {
        ...A2A_HEADERS,
        ...headers,
        accept: 'text/event-stream',
        'content-length': Buffer.byteLength(payload),
      },
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`SubscribeToTask: HTTP ${res.statusCode}`));
        res.resume();
        return;
      }
      let seen = '';
      const onData = (chunk) => {
        seen += chunk.toString();
        if (seen.includes('\n\n')) {
          res.off('data', onData);
          if (!seen.startsWith('data:') && !seen.includes('\ndata:') && !seen.startsWith('event:')) {
            reject(new Error(`SubscribeToTask: unexpected first event ${seen.slice(0, 200)}`));
            return;
          }
          if (seen.includes('"error"')) {
            reject(new Error(`SubscribeToTask: error event ${seen.slice(0, 300)}`));
            return;
          }
          res.on('data', () => {}); // keep draining heartbeats
          resolve({ ttfeMs: performance.now() - started, req, res });
        }
      };
      res.on('data', onData);
      res.on('error', () => {});
    });
    req.on('error', reject);
    req.end(payload);
  });
}
