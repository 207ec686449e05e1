/** Test helpers for the client library suites: a bare SDK agent and a proxy that cuts streams. */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { TaskState, type AgentCard, type Message, type StreamResponse } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

export async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

const text = (value: string) => ({
  content: { $case: 'text' as const, value },
  mediaType: '',
  filename: '',
  metadata: undefined,
});

/** Answers every message with a task: working, one text artifact ("bare: <text>"), completed. */
class EchoExecutor implements AgentExecutor {
  readonly received: Message[] = [];

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage } = context;
    this.received.push(userMessage);
    const said = userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    const status = (state: TaskState) => ({ state, message: undefined, timestamp: new Date().toISOString() });
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: status(TaskState.TASK_STATE_SUBMITTED),
        artifacts: [],
        history: [userMessage],
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING), metadata: undefined }),
    );
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: 'answer',
          name: 'answer',
          description: '',
          parts: [text(`bare: ${said}`)],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(TaskState.TASK_STATE_COMPLETED),
        metadata: undefined,
      }),
    );
    bus.finished();
  }

  async cancelTask(): Promise<void> {}
}

export interface BareAgent {
  url: string;
  received: Message[];
  /** Every JSON-RPC method the agent was asked for, in order. */
  methods: string[];
  close(): Promise<void>;
}

/** A plain @a2a-js/sdk agent (Express, in-memory store) whose card declares no extension. */
export async function startBareAgent(): Promise<BareAgent> {
  const app = express();
  const server = createServer(app);
  const port = await listen(server);
  const url = `http://127.0.0.1:${port}`;
  const card: AgentCard = {
    name: 'Bare SDK agent',
    description: 'An A2A agent built from the SDK alone',
    supportedInterfaces: [{ url: `${url}/a2a`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
  const executor = new EchoExecutor();
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const methods: string[] = [];
  app.use('/a2a', express.json(), (req, _res, next) => {
    methods.push(String((req.body as { method?: unknown } | undefined)?.method));
    next();
  });
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use('/a2a', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return { url, received: executor.received, methods, close: () => closeServer(server) };
}

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
    close: async () => undefined,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let method = '';
      try {
        method = String((JSON.parse(body.toString()) as { method?: unknown }).method ?? '');
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
