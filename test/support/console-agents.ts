import { TaskState, type Task } from '@a2a-js/sdk';
import { expect } from '@jest/globals';
import type { CleverAgentsClient } from '../../packages/client/src/node.js';
import { OpenAiCompatibleEndpoint, scenarioMessagesOf, type EndpointAnswer } from './openai-endpoint.js';
import { sendRequestOf, statusData, wireMessage } from './orchestration.js';

/**
 * What the console suites make the agents do: a scripted model behind the `local` backend that, asked
 * `plan …`, proposes a plan (one step with markup, one with an escape sequence and a direction override)
 * and, asked `command …`, starts a command; under the `manual` profile either waits at its gate, a real
 * approval. Every answer reports token usage, so sessions show some.
 */

export const HOSTILE = '<img src=x onerror=alert(1)>';

export const PLAN_ENTRIES = [
  { content: `Read the notes ${HOSTILE}`, priority: 'high', status: 'pending' },
  { content: 'Summarise them \u001b[2J\u202equietly', priority: 'low', status: 'pending' },
];

export const COMMAND = { command: 'rm', args: ['-rf', 'build dir'], cwd: '/work/app' };

/** A client that offers files and a terminal, so the model is given terminal_create. */
const CAPABILITIES = {
  'cleveragents/clientCapabilities': { fs: { read: true, write: true }, terminal: true },
};

const USAGE = { promptTokens: 90, completionTokens: 30 };

function reply(body: Record<string, unknown>): EndpointAnswer {
  const messages = scenarioMessagesOf(body);
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  if (messages.slice(lastUser).some((m) => m.role === 'tool')) return { tokens: ['Done', '.'], usage: USAGE };
  const asked = messages[lastUser]?.content ?? '';
  if (asked.startsWith('plan')) {
    return {
      toolCalls: [{ id: 'plan-1', name: 'update_plan', arguments: JSON.stringify({ entries: PLAN_ENTRIES }) }],
      usage: USAGE,
    };
  }
  if (asked.startsWith('command')) {
    return { toolCalls: [{ id: 'cmd-1', name: 'terminal_create', arguments: JSON.stringify(COMMAND) }], usage: USAGE };
  }
  return { tokens: ['Hello', ' there', '.'], usage: USAGE };
}

/** The scripted model, and the server environment that points the `local` backend at it. */
export async function startConsoleModel(): Promise<{ model: OpenAiCompatibleEndpoint; env: Record<string, string> }> {
  const model = await OpenAiCompatibleEndpoint.start(reply);
  return {
    model,
    env: {
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'console-suite',
    },
  };
}

/** A message in a session of its own that stops at a gate (`plan` or `command`): the ids of the waiting approval. */
export async function gate(
  client: CleverAgentsClient,
  what: 'plan' | 'command',
  options: { profile?: string; title?: string } = {},
): Promise<{ sessionId: string; taskId: string; approvalId: string }> {
  const { sessionId } = await client.sessions.create({
    profile: options.profile ?? 'manual',
    ...(options.title ? { title: options.title } : {}),
  });
  const task = (await client.send(
    sendRequestOf(wireMessage(what, { contextId: sessionId, metadata: CAPABILITIES })),
  )) as Task;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  const request = statusData(task).find((data) => data.type === 'cleveragents/approval-request');
  expect(request?.approvalId).toEqual(expect.any(String));
  return { sessionId, taskId: task.id, approvalId: String(request?.approvalId) };
}

/** A message in `sessionId` the model answers at once, for usage and history. */
export async function chat(client: CleverAgentsClient, sessionId: string, text: string): Promise<Task> {
  const task = (await client.send(sendRequestOf(wireMessage(text, { contextId: sessionId })))) as Task;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  return task;
}
