import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the endpoint received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** How the endpoint answers a request: an HTTP error, or these tokens as a chat-completions stream. */
export type EndpointReply = { status: number; error: string } | { tokens: string[]; delayMs?: number };

/**
 * An OpenAI-compatible chat endpoint on loopback (`POST <base>/chat/completions`, `stream: true`),
 * answering with server-sent `chat.completion.chunk` events and `data: [DONE]`, as vLLM and Ollama
 * do. It records every request it receives.
 */
export class OpenAiCompatibleEndpoint {
  private constructor(
    private readonly server: Server,
    private readonly reply: { current: EndpointReply },
    readonly requests: ReceivedRequest[],
    private readonly counters: { hangUps: number } = { hangUps: 0 },
  ) {}

  /** Streamed answers whose client hung up before the end (a canceled or killed turn). */
  get hangUps(): number {
    return this.counters.hangUps;
  }

  static async start(reply: EndpointReply): Promise<OpenAiCompatibleEndpoint> {
    const state = { current: reply };
    const requests: ReceivedRequest[] = [];
    const counters = { hangUps: 0 };
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
        requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
        const answer = state.current;
        if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        } else if ('status' in answer) {
          res
            .writeHead(answer.status, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { message: answer.error, type: 'test_error' } }));
        } else {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          const model = String(body.model);
          const event = (delta: Record<string, unknown>, finish: string | null) =>
            `data: ${JSON.stringify({
              id: 'chatcmpl-test',
              object: 'chat.completion.chunk',
              created: 0,
              model,
              choices: [{ index: 0, delta, finish_reason: finish }],
            })}\n\n`;
          res.write(event({ role: 'assistant', content: '' }, null));
          const { tokens, delayMs = 0 } = answer;
          const finish = () => {
            res.write(event({}, 'stop'));
            res.end('data: [DONE]\n\n');
          };
          if (delayMs === 0) {
            for (const token of tokens) res.write(event({ content: token }, null));
            finish();
          } else {
            // One token every delayMs, until the answer ends or the client hangs up (a cancel).
            let next = 0;
            const timer = setInterval(() => {
              if (res.destroyed) return clearInterval(timer);
              if (next < tokens.length) res.write(event({ content: tokens[next++] }, null));
              else {
                clearInterval(timer);
                finish();
              }
            }, delayMs);
            res.on('close', () => {
              clearInterval(timer);
              if (next < tokens.length) counters.hangUps++;
            });
          }
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new OpenAiCompatibleEndpoint(server, state, requests, counters);
  }

  /** The base URL a client is configured with, e.g. http://127.0.0.1:PORT/v1. */
  baseUrl(prefix = '/v1'): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${prefix}`;
  }

  answerWith(reply: EndpointReply): void {
    this.reply.current = reply;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve, reject) => this.server.close((error) => (error ? reject(error) : resolve())));
  }
}
