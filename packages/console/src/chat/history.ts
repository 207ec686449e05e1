import './bytes';
import { Role, Task } from '@a2a-js/sdk';
import {
  TOOL_ARTIFACT,
  TurnEventReader,
  dataOfParts,
  pendingRequestOf,
  textOfParts,
  turnState,
} from '@cleveragents/client';
import { TOOL_CALL_EVENT, TOOL_RESULT_EVENT, ToolCallData, ToolResultData, decode } from '@cleveragents/contract';
import { EMPTY, append, applyEvent, type SentFile, type Transcript } from './transcript';

/** A stored task (a history item, JSON) as the SDK reads it; undefined for one that is no task. */
export function taskOfItem(item: unknown): Task | undefined {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return undefined;
  if (typeof (item as { id?: unknown }).id !== 'string') return undefined;
  try {
    const task = Task.fromJSON(item);
    return task.id ? task : undefined;
  } catch {
    return undefined;
  }
}

function filesOf(parts: Task['history'][number]['parts']): SentFile[] {
  return parts.flatMap((part) =>
    part.content?.$case === 'raw'
      ? [
          {
            name: part.filename || 'file',
            mediaType: part.mediaType || '',
            size: (part.content.value as unknown as Uint8Array).length,
          },
        ]
      : [],
  );
}

/** One stored task as the conversation shows it: what the person said, the tools that ran, the plan, the answer. */
function addTask(t: Transcript, task: Task): Transcript {
  let out = t;
  for (const message of task.history.filter((m) => m.role === Role.ROLE_USER)) {
    const text = textOfParts(message.parts);
    const files = filesOf(message.parts);
    if (text.trim() !== '' || files.length > 0) out = append(out, { kind: 'user', text, files });
  }
  for (const artifact of task.artifacts.filter((a) => a.name === TOOL_ARTIFACT)) {
    for (const data of dataOfParts(artifact.parts)) {
      if (data.type === TOOL_CALL_EVENT) {
        const call = decode(ToolCallData, data);
        if (call.ok) out = applyEvent(out, { kind: 'tool-call', call: call.value });
      } else if (data.type === TOOL_RESULT_EVENT) {
        const result = decode(ToolResultData, data);
        if (result.ok) out = applyEvent(out, { kind: 'tool-result', result: result.value });
      }
    }
  }
  // The library's reader gives the task's plan, answer and state as a live turn would.
  const reader = new TurnEventReader();
  for (const event of reader.read({ payload: { $case: 'task', value: task } })) {
    if (event.kind !== 'approval' && event.kind !== 'client-request') out = applyEvent(out, event);
  }
  return { ...out, taskId: task.id };
}

/** A task's answer so far, as the library's reader assembles it. */
function answerOf(task: Task): string {
  const reader = new TurnEventReader();
  reader.read({ payload: { $case: 'task', value: task } });
  return reader.answerText;
}

/** What a resumed session shows: its stored tasks, oldest first, and the last task when it waits for an answer. */
export function transcriptOf(items: readonly unknown[]): {
  transcript: Transcript;
  waiting?: Task;
  /** The last task, when it still runs, and its answer so far (shown here, so not again when it is followed). */
  running?: { taskId: string; answer: string };
} {
  let transcript = EMPTY;
  let last: Task | undefined;
  for (const item of items) {
    const task = taskOfItem(item);
    if (!task) continue;
    transcript = addTask(transcript, task);
    last = task;
  }
  const waits =
    last !== undefined &&
    turnState(last.status?.state) === 'input-required' &&
    pendingRequestOf(last.status?.message?.parts) !== undefined;
  const state = last ? turnState(last.status?.state) : undefined;
  const running =
    last && (state === 'working' || state === 'submitted') ? { taskId: last.id, answer: answerOf(last) } : undefined;
  return { transcript, ...(waits ? { waiting: last } : {}), ...(running ? { running } : {}) };
}
