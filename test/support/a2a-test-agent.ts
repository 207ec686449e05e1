/**
 * The plumbing every fake A2A agent of the tests shares: an @a2a-js/sdk agent (Express, in-memory task
 * store) started from an executor and a card, and the parts and task events its executor publishes.
 * Each agent file keeps only its script.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import { AgentCard, type Message, type Part, type Task, TaskState } from '@a2a-js/sdk';
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

export interface SdkAgentOptions {
  /** Its card, once its URL is known. */
  card: (url: string) => AgentCard;
  executor: AgentExecutor;
  /** Serve the card as the v1.0 wire JSON; otherwise the SDK writes the card object as it is. */
  wireCard?: boolean;
  /** Handlers on `/a2a` ahead of the SDK's JSON-RPC handler: to record, refuse or answer calls first. */
  before?: RequestHandler[];
}

export interface SdkAgent {
  /** Its base URL: the card is at `/.well-known/agent-card.json`, JSON-RPC at `/a2a`. */
  url: string;
  port: number;
  close: () => Promise<void>;
}

/** Starts an SDK agent on a free local port. */
export async function startSdkAgent(options: SdkAgentOptions): Promise<SdkAgent> {
  const app = express();
  const server = createServer(app);
  const port = await listen(server);
  const url = `http://127.0.0.1:${port}`;
  const card = options.card(url);
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), options.executor);
  const wire = AgentCard.toJSON(card) as AgentCard;
  const agentCardProvider = options.wireCard ? () => Promise.resolve(wire) : handler;
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider }));
  if (options.before?.length) app.use('/a2a', ...options.before);
  app.use('/a2a', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return { url, port, close: () => closeServer(server) };
}

const part = (content: Part['content'], mediaType = ''): Part => ({
  content,
  mediaType,
  filename: '',
  metadata: undefined,
});
export const text = (value: string): Part => part({ $case: 'text', value });
export const data = (value: Record<string, unknown>): Part => part({ $case: 'data', value }, 'application/json');

/** The text parts of `message`, joined. */
export const textOf = (message: Message): string =>
  message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

export interface TaskEvents {
  /** Opens the task: `existing` (the task a reply continues) as it is, else a new one, submitted. */
  open: (existing?: Task) => void;
  /** A status update; `parts`, if any, as the agent's message. */
  status: (state: TaskState, parts?: Part[]) => void;
  artifact: (artifactId: string, name: string, parts: Part[], append?: boolean, lastChunk?: boolean) => void;
}

/** The events of the task `context` runs, published on `bus`. */
export function taskEvents(context: RequestContext, bus: ExecutionEventBus): TaskEvents {
  const { taskId, contextId, userMessage } = context;
  const status = (state: TaskState, parts?: Part[]) => ({
    state,
    message: parts && {
      messageId: `status-${taskId}-${Date.now()}-${Math.random()}`,
      contextId,
      taskId,
      role: 2,
      parts,
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    timestamp: new Date().toISOString(),
  });
  return {
    open: (existing) =>
      bus.publish(
        AgentEvent.task(
          existing ?? {
            id: taskId,
            contextId,
            status: status(TaskState.TASK_STATE_SUBMITTED),
            artifacts: [],
            history: [userMessage],
            metadata: undefined,
          },
        ),
      ),
    status: (state, parts) =>
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(state, parts), metadata: undefined })),
    artifact: (artifactId, name, parts, append = false, lastChunk = true) =>
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId, name, description: '', parts, metadata: undefined, extensions: [] },
          append,
          lastChunk,
          metadata: undefined,
        }),
      ),
  };
}

/** Ends `taskId` as canceled: what a cancellable agent answers a cancel with. */
export function publishCanceled(taskId: string, bus: ExecutionEventBus): Promise<void> {
  bus.publish(
    AgentEvent.statusUpdate({
      taskId,
      contextId: '',
      status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() },
      metadata: undefined,
    }),
  );
  bus.finished();
  return Promise.resolve();
}
