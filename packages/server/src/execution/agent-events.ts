import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Part, type Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent } from '@a2a-js/sdk/server';

/**
 * The A2A pieces every executor publishes (the session workflow and recovery, the conformance actor):
 * parts, an agent message, a new task, a status update.
 */

export function textPart(value: string): Part {
  return { content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: undefined };
}

export function dataPart(value: Record<string, unknown>): Part {
  return { content: { $case: 'data', value }, mediaType: 'application/json', filename: '', metadata: undefined };
}

export function agentMessage(contextId: string, taskId: string, parts: Part[]): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A task just made for `userMessage` at `at`: `submitted`, the message its only history. */
export function submittedTask(taskId: string, contextId: string, userMessage: Message, at: Date = new Date()): Task {
  return {
    id: taskId,
    contextId,
    status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: at.toISOString() },
    artifacts: [],
    history: [userMessage],
    metadata: undefined,
  };
}

/** A status update stamped `at` (now by default); with `parts`, they are its agent message. */
export function statusEvent(
  taskId: string,
  contextId: string,
  state: TaskState,
  parts?: Part[],
  at: Date = new Date(),
): AgentExecutionEvent {
  return AgentEvent.statusUpdate({
    taskId,
    contextId,
    status: {
      state,
      message: parts === undefined ? undefined : agentMessage(contextId, taskId, parts),
      timestamp: at.toISOString(),
    },
    metadata: undefined,
  });
}
