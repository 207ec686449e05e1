import {
  TaskState,
  type Artifact,
  type Message,
  type Part,
  type StreamResponse,
  type Task,
  type TaskStatus,
} from '@a2a-js/sdk';
import type { TurnOutput, TurnResult } from '../actor-turn.js';
import { quoted } from './a2a.errors.js';

/** The remote task a turn follows: its ids as the agent named them (never shown to our caller). */
export interface RemoteTask {
  taskId?: string;
  contextId?: string;
}

/** What `remember` stores of the remote task: enough to answer its input-required and to re-join it. */
export const REMOTE_TASK_KEY = 'a2aRemoteTask';

/**
 * Follows the events of one remote task and passes them on: the first event's task and context ids are
 * remembered (before anything else is reported); text-only artifacts stream into the turn's answer (their
 * texts joined, in the order they came; a chunk replacing one already streamed starts the answer over),
 * other artifacts pass on under an `agent-` id; working status messages become working notes. `result()`
 * says how the remote task rests, or undefined when its stream ended before it did.
 */
export class RemoteTaskFollower {
  readonly remote: RemoteTask;
  private readonly texts = new Map<string, string>();
  private streamed = '';
  private state: TaskState | undefined;
  private statusText = '';
  private statusData: unknown;
  /** The id of the last status message, when the agent gave one. */
  statusMessageId: string | undefined;
  private direct: Message | undefined;

  constructor(
    private readonly output: TurnOutput,
    private readonly onIds: (remote: RemoteTask) => Promise<void>,
    /** The remote task this turn answers or re-joins, remembered by an earlier turn. */
    known: RemoteTask = {},
  ) {
    this.remote = { ...known };
  }

  async accept(event: StreamResponse): Promise<void> {
    const payload = event.payload;
    switch (payload?.$case) {
      case 'task':
        await this.ids(payload.value.id, payload.value.contextId);
        this.task(payload.value);
        return;
      case 'message':
        // An answer without a task: the exchange is over.
        this.direct = payload.value;
        return;
      case 'statusUpdate':
        await this.ids(payload.value.taskId, payload.value.contextId);
        this.status(payload.value.status);
        return;
      case 'artifactUpdate': {
        await this.ids(payload.value.taskId, payload.value.contextId);
        const { artifact, append, lastChunk } = payload.value;
        if (artifact) this.artifact(artifact, append, lastChunk);
        return;
      }
      case undefined:
        return;
    }
  }

  /** The remote task's last state, as the agent told it; undefined before it told one. */
  get remoteState(): TaskState | undefined {
    return this.state;
  }

  /** How the remote task rests, or undefined while it has not (its stream ended early). */
  result(): TurnResult | undefined {
    if (this.direct) return { state: 'completed', text: textOf(this.direct.parts) || this.answer() || undefined };
    const answer = this.answer();
    switch (this.state) {
      case TaskState.TASK_STATE_COMPLETED:
        return { state: 'completed', text: answer || this.statusText || undefined };
      case TaskState.TASK_STATE_INPUT_REQUIRED:
        return {
          state: 'input-required',
          text: this.statusText || 'The agent needs more input.',
          foreign: true,
          ...(this.statusData === undefined ? {} : { value: this.statusData }),
        };
      case TaskState.TASK_STATE_FAILED:
        return {
          state: 'failed',
          reason: `The external A2A agent failed: ${quoted(this.statusText || 'no reason given')}`,
        };
      case TaskState.TASK_STATE_REJECTED:
        return { state: 'rejected', reason: this.statusText || 'The external A2A agent rejected the task.' };
      case TaskState.TASK_STATE_CANCELED:
        return { state: 'canceled' };
      case TaskState.TASK_STATE_AUTH_REQUIRED:
        return { state: 'failed', reason: 'A2A_AGENT_UNAUTHORIZED: the external A2A agent asked for authentication' };
      default:
        return undefined;
    }
  }

  /**
   * A whole task (a stream's first event, a blocking answer, a task read back): its status, and its
   * artifacts when it is done (a task that goes on, or one resumed, streams them; its earlier turns'
   * artifacts are not this turn's answer).
   */
  task(task: Task): void {
    if (isFinal(task.status?.state)) {
      for (const artifact of task.artifacts) this.artifact(artifact, false, true);
    }
    this.status(task.status);
  }

  private async ids(taskId: string, contextId: string): Promise<void> {
    if (this.remote.taskId !== undefined || !taskId) return;
    this.remote.taskId = taskId;
    this.remote.contextId = contextId || undefined;
    await this.onIds(this.remote);
  }

  private status(status: TaskStatus | undefined): void {
    if (!status) return;
    this.state = status.state;
    const parts = status.message?.parts ?? [];
    this.statusText = textOf(parts);
    this.statusData = dataOf(parts);
    this.statusMessageId = status.message?.messageId || undefined;
    if (status.state === TaskState.TASK_STATE_WORKING) this.output.working(this.statusText || undefined);
  }

  private artifact(artifact: Artifact, append: boolean, lastChunk: boolean): void {
    const { parts } = artifact;
    if (parts.length > 0 && parts.every((part) => part.content?.$case === 'text')) {
      const before = append ? (this.texts.get(artifact.artifactId) ?? '') : '';
      this.texts.set(artifact.artifactId, before + textOf(parts));
      this.stream();
      return;
    }
    this.output.artifact({
      artifactId: `agent-${artifact.artifactId}`,
      name: artifact.name || 'artifact',
      parts,
      append,
      lastChunk,
    });
  }

  /** Streams what the answer gained; starts it over when a chunk replaced text already streamed. */
  private stream(): void {
    const answer = this.answer();
    if (answer.startsWith(this.streamed)) {
      const delta = answer.slice(this.streamed.length);
      if (delta) this.output.text(delta);
    } else {
      this.output.restartText();
      if (answer) this.output.text(answer);
    }
    this.streamed = answer;
  }

  private answer(): string {
    return [...this.texts.values()].join('');
  }
}

function isFinal(state: TaskState | undefined): boolean {
  return (
    state === TaskState.TASK_STATE_COMPLETED ||
    state === TaskState.TASK_STATE_FAILED ||
    state === TaskState.TASK_STATE_CANCELED ||
    state === TaskState.TASK_STATE_REJECTED
  );
}

function textOf(parts: readonly Part[]): string {
  return parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
}

function dataOf(parts: readonly Part[]): unknown {
  for (const part of parts) if (part.content?.$case === 'data') return part.content.value;
  return undefined;
}
