import { TaskState, type Message, type Part } from '@a2a-js/sdk';
import { AgentEvent, type ExecutionEventBus } from '@a2a-js/sdk/server';
import { dataPart, statusEvent, textPart } from '../execution/agent-events.js';
import type { ArtifactChunk, TurnInput, TurnOutput, TurnResult } from '../execution/actor-turn.js';
import { INTERRUPT_DATA_TYPE } from '@cleveragents/contract';
import {
  APPROVAL_REQUEST_TYPE,
  CLIENT_REQUEST_TYPE,
  PLAN_DATA_TYPE,
  TOOL_CALL_EVENT,
  TOOL_RESULT_EVENT,
  type PlanEntry,
  type ToolCallReport,
  type ToolResultReport,
} from '../execution/orchestrator/protocol.js';

/** The artifact a turn's answer streams into. */
export const ANSWER_ARTIFACT_NAME = 'answer';
/** The artifact of one tool invocation: its call, then (appended) its result. */
export const TOOL_ARTIFACT_NAME = 'tool-call';

/** The names of the server's own artifacts, which no backend's artifact takes. */
const RESERVED_ARTIFACT_NAMES: readonly string[] = [ANSWER_ARTIFACT_NAME, TOOL_ARTIFACT_NAME];

/** Interrupt values the client answers with a typed data part of its own: sent as they are (docs/protocol.md §5). */
const TYPED_INTERRUPTS: readonly unknown[] = [APPROVAL_REQUEST_TYPE, CLIENT_REQUEST_TYPE];

/** What the workflow does with what a turn reports besides A2A events. */
export interface TurnHooks {
  /** Stores backend handles with the task (TurnOutput.remember). */
  remember(data: Record<string, unknown>): Promise<void>;
  /** The plan object the `cleveragents/plan` data part carries for these entries (the plan's whole view). */
  plan?(entries: PlanEntry[]): Record<string, unknown>;
  /** Counts what ran against the budgets: tokens, tool calls. */
  usage?(delta: { tokens?: number; toolCalls?: number }): void;
  /** The time status updates are stamped with (the workflow's clock); the machine's time by default. */
  now?(): Date;
}

/** A typed interrupt value (approval-request, client-request), or undefined for any other value. */
export function typedInterrupt(value: unknown): Record<string, unknown> | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  return TYPED_INTERRUPTS.includes(record.type) ? record : undefined;
}

/**
 * Turns what a backend reports into A2A events on the task's bus, in order: `working` status updates,
 * the answer as artifact updates (each streamed piece appended; at the end the whole answer once more,
 * `lastChunk`, replacing the streamed copy so that a re-streamed or resumed answer is never doubled),
 * then the final status. After the final status it publishes nothing more.
 */
export class TurnPublisher implements TurnOutput {
  private streamed = '';
  private started = false;
  private finished = false;

  constructor(
    private readonly bus: ExecutionEventBus,
    private readonly taskId: string,
    private readonly contextId: string,
    /** Stable per turn (derived from the user message), so a recovered turn writes the same artifact. */
    private readonly artifactId: string,
    private readonly hooks: TurnHooks,
  ) {}

  get done(): boolean {
    return this.finished;
  }

  working(note?: string): void {
    this.status(TaskState.TASK_STATE_WORKING, note === undefined ? undefined : [textPart(note)]);
  }

  text(delta: string): void {
    if (this.finished || delta.length === 0) return;
    this.bus.publish(
      AgentEvent.artifactUpdate({
        taskId: this.taskId,
        contextId: this.contextId,
        artifact: this.answer([textPart(delta)]),
        append: this.started,
        lastChunk: false,
        metadata: undefined,
      }),
    );
    this.started = true;
    this.streamed += delta;
  }

  restartText(): void {
    this.started = false;
    this.streamed = '';
  }

  remember(data: Record<string, unknown>): Promise<void> {
    return this.hooks.remember(data);
  }

  artifact(chunk: ArtifactChunk): void {
    if (this.finished) return;
    const { artifactId, parts, append, lastChunk } = chunk;
    // A backend's artifact (an external agent's) never passes as the server's answer or tool call.
    const name = RESERVED_ARTIFACT_NAMES.includes(chunk.name) ? `agent-${chunk.name}` : chunk.name;
    this.bus.publish(
      AgentEvent.artifactUpdate({
        taskId: this.taskId,
        contextId: this.contextId,
        artifact: { artifactId, name, description: '', parts, metadata: undefined, extensions: [] },
        append,
        lastChunk,
        metadata: undefined,
      }),
    );
  }

  plan(entries: PlanEntry[]): void {
    if (this.finished) return;
    const plan = this.hooks.plan ? this.hooks.plan(entries) : { entries };
    this.status(TaskState.TASK_STATE_WORKING, [dataPart({ type: PLAN_DATA_TYPE, plan })]);
  }

  toolCall(call: ToolCallReport): void {
    if (this.finished) return;
    this.hooks.usage?.({ toolCalls: 1 });
    const { id, name, args } = call;
    this.tool(id, 'call', { type: TOOL_CALL_EVENT, id, name, args });
  }

  toolResult(result: ToolResultReport): void {
    if (this.finished) return;
    const { id, name } = result;
    const outcome = result.error ? { error: result.error } : { result: result.result ?? null };
    const resultPart = { type: TOOL_RESULT_EVENT, id, name, ...outcome };
    // A call that never ran had no chunk of its own: its artifact is the call and its result at once.
    if (result.notRun) {
      this.tool(id, 'whole', { type: TOOL_CALL_EVENT, id, name, args: result.notRun.args }, resultPart);
    } else this.tool(id, 'result', resultPart);
  }

  usage(tokens: number): void {
    if (this.finished || !(tokens > 0)) return;
    this.hooks.usage?.({ tokens });
  }

  /**
   * Publishes how the turn rested; `plan`, when given, is the plan as the task leaves it (its status
   * moved with the task), carried as a `cleveragents/plan` data part of the final status message.
   */
  finish(result: TurnResult, plan?: Record<string, unknown>): void {
    if (this.finished) return;
    const planParts = plan ? [dataPart({ type: PLAN_DATA_TYPE, plan })] : [];
    switch (result.state) {
      case 'completed': {
        const answer = result.text ?? this.streamed;
        if (answer.length > 0) {
          this.bus.publish(
            AgentEvent.artifactUpdate({
              taskId: this.taskId,
              contextId: this.contextId,
              artifact: this.answer([textPart(answer)]),
              append: false,
              lastChunk: true,
              metadata: undefined,
            }),
          );
        }
        const parts = answer.length > 0 ? [textPart(answer)] : [textPart('Done.')];
        this.status(TaskState.TASK_STATE_COMPLETED, [...parts, ...planParts]);
        break;
      }
      case 'input-required': {
        const parts = [textPart(result.text)];
        // A third party's value is only ever an interrupt: it cannot drive the client's tools or forge a gate.
        const typed = result.foreign ? undefined : typedInterrupt(result.value);
        if (typed) parts.push(dataPart(typed));
        else if (result.value !== undefined || result.gate) {
          // A foreign request recorded as an approval names it: answered by approval/answer or by a reply.
          parts.push(
            dataPart({
              type: INTERRUPT_DATA_TYPE,
              ...(result.value === undefined ? {} : { value: result.value }),
              ...(result.gate ?? {}),
            }),
          );
        }
        this.status(TaskState.TASK_STATE_INPUT_REQUIRED, [...parts, ...planParts]);
        break;
      }
      case 'rejected':
        this.status(TaskState.TASK_STATE_REJECTED, [textPart(result.reason), ...planParts]);
        break;
      case 'failed':
        this.status(TaskState.TASK_STATE_FAILED, [textPart(result.reason), ...planParts]);
        break;
      case 'canceled':
        this.status(TaskState.TASK_STATE_CANCELED, [textPart('Task canceled.'), ...planParts]);
        break;
      default: {
        const unknown: never = result;
        throw new Error(`Unknown turn result ${JSON.stringify(unknown)}`);
      }
    }
    this.finished = true;
  }

  private answer(parts: Part[]) {
    return {
      artifactId: this.artifactId,
      name: ANSWER_ARTIFACT_NAME,
      description: '',
      parts,
      metadata: undefined,
      extensions: [],
    };
  }

  /**
   * One tool invocation's artifact: the call (first chunk), then its result (appended, last chunk); or,
   * for a call that never ran, both in one chunk (`whole`).
   */
  private tool(callId: string, chunk: 'call' | 'result' | 'whole', ...values: Record<string, unknown>[]): void {
    this.bus.publish(
      AgentEvent.artifactUpdate({
        taskId: this.taskId,
        contextId: this.contextId,
        artifact: {
          artifactId: `tool-${callId}`,
          name: TOOL_ARTIFACT_NAME,
          description: '',
          parts: values.map((value) => dataPart(value)),
          metadata: undefined,
          extensions: [],
        },
        append: chunk === 'result',
        lastChunk: chunk !== 'call',
        metadata: undefined,
      }),
    );
  }

  private status(state: TaskState, parts: Part[] | undefined): void {
    if (this.finished) return;
    this.bus.publish(statusEvent(this.taskId, this.contextId, state, parts, this.hooks.now?.()));
  }
}

/** A turn's input as the backends take it: text parts joined, data parts' values in order. */
export function turnInputOf(message: Message): TurnInput {
  const texts: string[] = [];
  const data: Record<string, unknown>[] = [];
  for (const part of message.parts) {
    if (part.content?.$case === 'text') texts.push(part.content.value);
    else if (part.content?.$case === 'data' && part.content.value && typeof part.content.value === 'object') {
      data.push(part.content.value as Record<string, unknown>);
    }
  }
  return { text: texts.join('\n\n'), data, message };
}
