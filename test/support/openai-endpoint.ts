import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nextReply, type ScenarioMessage } from '../fixtures/orchestrator-scenario.mjs';

/** One request the endpoint received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** The text tokens of its answer written so far. */
  tokensSent: number;
}

/** A tool call the endpoint streams: `arguments` (a JSON text) is split into `argumentChunks` pieces. */
export interface EndpointToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** Token counts reported in a last `usage` chunk, when the request asked (`stream_options.include_usage`). */
export interface EndpointUsage {
  promptTokens: number;
  completionTokens: number;
}

/**
 * How the endpoint answers a request: an HTTP error; these tokens as a chat-completions stream (one
 * every `delayMs` when set); or tool calls (`delta.tool_calls`, `finish_reason: 'tool_calls'`), after the
 * text tokens if any. `usage` adds
 * a last chunk with the counts when the request asked for one. With `heldUntil`, what comes after the
 * text tokens (the tool calls, the finish) waits for it to settle.
 */
export type EndpointAnswer =
  | { status: number; error: string }
  /** Something that is no model: this body, as it is, with HTTP 200. */
  | { raw: string; contentType: string }
  | { tokens: string[]; delayMs?: number; usage?: EndpointUsage; heldUntil?: Promise<unknown> }
  | {
      tokens?: string[];
      delayMs?: number;
      toolCalls: EndpointToolCall[];
      argumentChunks?: number;
      usage?: EndpointUsage;
      heldUntil?: Promise<unknown>;
    };

/** A fixed answer, or one made from each request's body (its `messages`, `tools`, …). */
export type EndpointReply = EndpointAnswer | ((body: Record<string, unknown>) => EndpointAnswer);

/** One OpenAI chat message as a client sends it. */
interface OpenAiMessage {
  role: string;
  content?: string | null | { type: string; text?: string }[];
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

function openAiText(content: OpenAiMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');
}

function parsedArguments(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/**
 * The messages of an OpenAI chat-completions request as the orchestrator scenario's plain messages
 * (test/fixtures/orchestrator-scenario.mjs). OpenAI's tool messages carry no status: the orchestrator
 * graph starts a failed tool's result with `Error:`, which is read as `status: 'error'`.
 */
export function scenarioMessagesOf(body: Record<string, unknown>): ScenarioMessage[] {
  const messages = Array.isArray(body.messages) ? (body.messages as OpenAiMessage[]) : [];
  return messages.map((message) => {
    const content = openAiText(message.content);
    const role = (['system', 'user', 'assistant', 'tool'] as const).find((r) => r === message.role) ?? 'user';
    const plain: ScenarioMessage = { role: message.role === 'developer' ? 'system' : role, content };
    if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
      plain.toolCalls = message.tool_calls.map((call) => ({
        id: call.id,
        name: call.function.name,
        args: parsedArguments(call.function.arguments),
      }));
    }
    if (role === 'tool') {
      plain.toolCallId = message.tool_call_id;
      plain.status = content.startsWith('Error:') ? 'error' : 'success';
    }
    return plain;
  });
}

/** The names of the function tools a request offered, in its order. */
export function offeredToolNames(body: Record<string, unknown>): string[] {
  const tools = Array.isArray(body.tools) ? (body.tools as { function?: { name?: string } }[]) : [];
  return tools.map((tool) => String(tool.function?.name));
}

/**
 * An endpoint reply that plays the orchestrator scenario: the request's messages as the scenario's,
 * answered with `nextReply` — text a word at a time, or tool calls whose arguments arrive in pieces —
 * with `usage` reported when the request asks for it.
 */
export function scenarioReply(usage?: EndpointUsage): (body: Record<string, unknown>) => EndpointAnswer {
  return (body) => {
    const reply = nextReply(scenarioMessagesOf(body));
    const tokens = reply.content.match(/\S+\s*|\s+/g) ?? [];
    if (reply.toolCalls.length === 0) return { tokens, ...(usage ? { usage } : {}) };
    return {
      tokens,
      toolCalls: reply.toolCalls.map((call) => ({
        id: call.id,
        name: call.name,
        arguments: JSON.stringify(call.args),
      })),
      argumentChunks: 3,
      ...(usage ? { usage } : {}),
    };
  };
}

/** `text` cut into `pieces` parts of about the same length (fewer when it is shorter). */
function split(text: string, pieces: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, pieces)));
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size));
  return parts.length > 0 ? parts : [''];
}

/**
 * An OpenAI-compatible chat endpoint on loopback (`POST <base>/chat/completions`, `stream: true`; and
 * `GET <base>/models`, which /readyz probes),
 * answering with server-sent `chat.completion.chunk` events and `data: [DONE]`, as vLLM and Ollama
 * do: text as `delta.content`, tool calls as `delta.tool_calls` (arguments possibly in pieces) ending
 * with `finish_reason: 'tool_calls'`, and a last `usage` chunk when asked for and given. The answer is
 * fixed, or made from each request (`scenarioReply()` plays the orchestrator scenario). It records
 * every request it receives.
 */
export class OpenAiCompatibleEndpoint {
  private constructor(
    private readonly server: Server,
    private readonly reply: { current: EndpointReply },
    readonly requests: ReceivedRequest[],
    private readonly counters: { hangUps: number } = { hangUps: 0 },
  ) {}

  /** The chat-completion requests: every request but the readiness probe's `GET /models`. */
  get completions(): ReceivedRequest[] {
    return this.requests.filter((request) => request.path.endsWith('/chat/completions'));
  }

  /** The readiness probe's requests (`GET <base>/models`). */
  get modelListings(): ReceivedRequest[] {
    return this.requests.filter((request) => request.method === 'GET' && request.path.endsWith('/models'));
  }

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
        const received: ReceivedRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body,
          tokensSent: 0,
        };
        requests.push(received);
        if (req.method === 'GET' && req.url?.endsWith('/models')) {
          // What /readyz probes (the model list, as vLLM and Ollama answer it).
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ object: 'list', data: [{ id: 'test-model', object: 'model', owned_by: 'test' }] }));
          return;
        }
        if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
          return;
        }
        let answer: EndpointAnswer;
        try {
          answer = typeof state.current === 'function' ? state.current(body) : state.current;
        } catch (error) {
          answer = { status: 500, error: `the test endpoint's reply failed: ${String(error)}` };
        }
        if ('raw' in answer) {
          res.writeHead(200, { 'content-type': answer.contentType }).end(answer.raw);
        } else if ('status' in answer) {
          res
            .writeHead(answer.status, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { message: answer.error, type: 'test_error' } }));
        } else {
          streamAnswer(res, `chatcmpl-test-${requests.length}`, received, answer, counters);
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

/**
 * Writes `answer` as server-sent `chat.completion.chunk` events, then `data: [DONE]`. `id` differs per
 * request, as a real endpoint's: LangChain makes it the AIMessage's id, and LangGraph's messages reducer
 * replaces a message whose id it already holds.
 */
function streamAnswer(
  res: ServerResponse,
  id: string,
  request: ReceivedRequest,
  answer: Exclude<EndpointAnswer, { status: number } | { raw: string }>,
  counters: { hangUps: number },
): void {
  const { body } = request;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const model = String(body.model);
  const chunk = (extra: Record<string, unknown>) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model, ...extra })}\n\n`;
  const event = (delta: Record<string, unknown>, finish: string | null) =>
    chunk({ choices: [{ index: 0, delta, finish_reason: finish }] });
  res.write(event({ role: 'assistant', content: '' }, null));
  const tokens = answer.tokens ?? [];
  const toolCalls = 'toolCalls' in answer ? answer.toolCalls : [];
  const finishNow = () => {
    toolCalls.forEach((call, index) => {
      const [first = '', ...rest] = split(
        call.arguments,
        'argumentChunks' in answer ? (answer.argumentChunks ?? 1) : 1,
      );
      res.write(
        event(
          { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: first } }] },
          null,
        ),
      );
      for (const piece of rest) res.write(event({ tool_calls: [{ index, function: { arguments: piece } }] }, null));
    });
    res.write(event({}, toolCalls.length > 0 ? 'tool_calls' : 'stop'));
    const include = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
    if (answer.usage && include) {
      const { promptTokens, completionTokens } = answer.usage;
      res.write(
        chunk({
          choices: [],
          usage: {
            prompt_tokens: promptTokens,
            completion_tokens: completionTokens,
            total_tokens: promptTokens + completionTokens,
          },
        }),
      );
    }
    res.end('data: [DONE]\n\n');
  };
  const finish = () => {
    if (!answer.heldUntil) return finishNow();
    void answer.heldUntil.then(() => {
      if (!res.destroyed) finishNow();
    });
  };
  const delayMs = 'delayMs' in answer ? (answer.delayMs ?? 0) : 0;
  if (delayMs === 0) {
    for (const token of tokens) res.write(event({ content: token }, null));
    request.tokensSent = tokens.length;
    finish();
    return;
  }
  // One token every delayMs, until the answer ends or the client hangs up (a cancel).
  let next = 0;
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer);
    if (next < tokens.length) {
      res.write(event({ content: tokens[next++] }, null));
      request.tokensSent = next;
    } else {
      clearInterval(timer);
      finish();
    }
  }, delayMs);
  res.on('close', () => {
    clearInterval(timer);
    if (next < tokens.length) counters.hangUps++;
  });
}
