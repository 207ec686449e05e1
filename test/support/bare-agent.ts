/** A plain @a2a-js/sdk agent for tests: what "any A2A agent" looks like to the client. */
import express from 'express';
import { TaskState, type Message } from '@a2a-js/sdk';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { sdkAgentCard, startSdkAgent, taskEvents, text, textOf } from './a2a-test-agent.js';

/** Answers every message with a task: working, one text artifact ("bare: <text>"), completed. */
class EchoExecutor implements AgentExecutor {
  readonly received: Message[] = [];

  execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { userMessage } = context;
    this.received.push(userMessage);
    const events = taskEvents(context, bus);
    // A new task every time, even for a reply on an old one: the plainest agent keeps no state.
    events.open();
    events.status(TaskState.TASK_STATE_WORKING);
    events.artifact('answer', 'answer', [text(`bare: ${textOf(userMessage)}`)]);
    events.status(TaskState.TASK_STATE_COMPLETED);
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

/** A plain @a2a-js/sdk agent (Express, in-memory store) whose card declares no extension. */
export async function startBareAgent(): Promise<BareAgent> {
  const executor = new EchoExecutor();
  const methods: string[] = [];
  const agent = await startSdkAgent({
    card: (url) => sdkAgentCard(url, { name: 'Bare SDK agent', description: 'An A2A agent built from the SDK alone' }),
    executor,
    before: [
      express.json(),
      (req, _res, next) => {
        methods.push(String((req.body as { method?: unknown } | undefined)?.method));
        next();
      },
    ],
  });
  return { url: agent.url, received: executor.received, methods, close: agent.close };
}
