/** A plain @a2a-js/sdk agent for tests: what "any A2A agent" looks like to the client. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { TaskState, type AgentCard, type Message } from '@a2a-js/sdk';
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

  execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
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
    return Promise.resolve();
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

/**
 * The card of an SDK agent the tests start at `url` (JSON-RPC at `/a2a`, streaming, text in and out), with
 * its name, description and whatever else the test sets.
 */
export function sdkAgentCard(
  url: string,
  fields: Pick<AgentCard, 'name' | 'description'> & Partial<AgentCard>,
): AgentCard {
  return {
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
    ...fields,
  };
}

/** A plain @a2a-js/sdk agent (Express, in-memory store) whose card declares no extension. */
export async function startBareAgent(): Promise<BareAgent> {
  const app = express();
  const server = createServer(app);
  const port = await listen(server);
  const url = `http://127.0.0.1:${port}`;
  const card = sdkAgentCard(url, { name: 'Bare SDK agent', description: 'An A2A agent built from the SDK alone' });
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
