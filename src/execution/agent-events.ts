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

/** A task just made for `userMessage`: `submitted`, the message its only history. */
export function submittedTask(taskId: string, contextId: string, userMessage: Message): Task {
  return {
    id: taskId,
    contextId,
    status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
    artifacts: [],
    history: [userMessage],
    metadata: undefined,
  };
}

/** A status update stamped now; with `parts`, they are its agent message. */
export function statusEvent(taskId: string, contextId: string, state: TaskState, parts?: Part[]): AgentExecutionEvent {
  return AgentEvent.statusUpdate({
    taskId,
    contextId,
    status: {
      state,
      message: parts === undefined ? undefined : agentMessage(contextId, taskId, parts),
      timestamp: new Date().toISOString(),
    },
    metadata: undefined,
  });
}
