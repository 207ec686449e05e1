/** Test helpers for the client library suites: a proxy that cuts streams (the bare agent is in test/support). */
import { createServer, request as httpRequest } from 'node:http';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { closeServer, listen } from '../support/a2a-test-agent.js';

export interface CuttingProxy {
  url: string;
  /** Where requests go; set once the server's port is known. */
  target: string;
  /** JSON-RPC methods seen, in order. */
  methods: string[];
  /** How many streams were cut. */
  cuts: number;
  /** How many SSE events pass before the cut (default 1). */
  cutAfter: number;
  close(): Promise<void>;
}

/**
 * An HTTP proxy that passes everything through, except that the response of the first `cutMethod`
 * request is cut (the TCP connection destroyed) right after its first `cutAfter` SSE events.
 */
export async function startCuttingProxy(cutMethod = 'SendStreamingMessage'): Promise<CuttingProxy> {
  const state: CuttingProxy = {
    url: '',
    target: '',
    methods: [],
    cuts: 0,
    cutAfter: 1,
    close: () => Promise.resolve(),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let method = '';
      try {
        const named = (JSON.parse(body.toString()) as { method?: unknown }).method;
        method = typeof named === 'string' ? named : '';
      } catch {
        method = '';
      }
      if (method) state.methods.push(method);
      const cut = method === cutMethod && state.cuts === 0;
      if (cut) state.cuts++;
      const target = new URL(req.url ?? '/', state.target);
      const upstream = httpRequest(
        target,
        { method: req.method, headers: { ...req.headers, host: target.host } },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          let seen = '';
          let done = false;
          up.on('data', (c: Buffer) => {
            if (!cut) return void res.write(c);
            if (done) return;
            seen += c.toString();
            let end = -2;
            for (let n = 0; n < state.cutAfter; n++) {
              end = seen.indexOf('\n\n', end + 2);
              if (end < 0) return;
            }
            done = true;
            res.write(seen.slice(0, end + 2), () => {
              res.socket?.destroy();
              upstream.destroy();
            });
          });
          up.on('end', () => res.end());
          up.on('error', () => res.destroy());
        },
      );
      upstream.on('error', () => res.destroy());
      upstream.end(body);
    });
  });
  const port = await listen(server);
  state.url = `http://127.0.0.1:${port}`;
  state.close = () => closeServer(server);
  return state;
}

/** Every event of a stream. */
export async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

/** A short, comparable description of each event: case and state (or artifact id + append). */
export function shapes(events: readonly StreamResponse[]): string[] {
  return events.map((e) => {
    const p = e.payload;
    switch (p?.$case) {
      case 'task':
        return `task:${TaskState[p.value.status?.state ?? 0]}`;
      case 'statusUpdate':
        return `status:${TaskState[p.value.status?.state ?? 0]}`;
      case 'artifactUpdate':
        return `artifact:${p.value.append ? 'append' : 'set'}`;
      case 'message':
        return 'message';
      case undefined:
        return 'empty';
    }
  });
}
