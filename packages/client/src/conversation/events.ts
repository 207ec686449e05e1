import { TaskState, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  APPROVAL_REQUEST_TYPE,
  ApprovalRequest,
  CLIENT_REQUEST_TYPE,
  ClientRequest,
  PLAN_DATA_TYPE,
  PlanDataPart,
  TOOL_CALL_EVENT,
  TOOL_RESULT_EVENT,
  ToolCallData,
  ToolResultData,
  decode,
  type FieldViolationDetail,
  type PlanDataView,
  type WireSchema,
  type z,
} from '@cleveragents/contract';

/** A task's state as the client names it (A2A's states, lower-case and dashed). */
export type TurnState =
  | 'submitted'
  | 'working'
  | 'input-required'
  | 'auth-required'
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'rejected'
  | 'unknown';

const STATE_NAMES: Partial<Record<TaskState, TurnState>> = {
  [TaskState.TASK_STATE_SUBMITTED]: 'submitted',
  [TaskState.TASK_STATE_WORKING]: 'working',
  [TaskState.TASK_STATE_INPUT_REQUIRED]: 'input-required',
  [TaskState.TASK_STATE_AUTH_REQUIRED]: 'auth-required',
  [TaskState.TASK_STATE_COMPLETED]: 'completed',
  [TaskState.TASK_STATE_FAILED]: 'failed',
  [TaskState.TASK_STATE_CANCELED]: 'canceled',
  [TaskState.TASK_STATE_REJECTED]: 'rejected',
};

export function turnState(state: TaskState | undefined): TurnState {
  return (state !== undefined ? STATE_NAMES[state] : undefined) ?? 'unknown';
}

/** States after which the task runs no more. */
export const TERMINAL_STATES: ReadonlySet<TurnState> = new Set(['completed', 'failed', 'canceled', 'rejected']);
/** States in which the task waits for the client. */
export const INTERRUPTED_STATES: ReadonlySet<TurnState> = new Set(['input-required', 'auth-required']);

/** What a UI shows of a conversation turn, in the order it happened. */
export type TurnEvent =
  /** The task the turn runs in (the first event of a task-based answer). */
  | { kind: 'task'; taskId: string; contextId: string }
  /** A piece of the answer, as it streams. */
  | { kind: 'text'; delta: string }
  /**
   * The answer started over and took another course than what was shown: `text` is the answer from its
   * start (a UI marks the restart and shows it again). A restart that repeats what was shown is not one.
   */
  | { kind: 'answer'; text: string }
  /** The plan as it now stands. */
  | { kind: 'plan'; plan: PlanDataView }
  | { kind: 'tool-call'; call: ToolCallData }
  | { kind: 'tool-result'; result: ToolResultData }
  /** The task's state changed; `text` is the status message's text, if any. */
  | { kind: 'status'; state: TurnState; text?: string }
  | { kind: 'approval'; request: ApprovalRequest }
  | { kind: 'client-request'; request: ClientRequest }
  /**
   * A data part the agent sent that does not follow the contract (a type of ours, a shape that is not): it is
   * not acted on. `text` says so in words; `violations` name the fields (agent data: make them safe to show).
   */
  | { kind: 'warning'; text: string; part: string; violations: FieldViolationDetail[] }
  /** The agent answered with a message instead of a task (agents without tasks do). */
  | { kind: 'message'; text: string; contextId?: string };

/** The text of parts, joined. */
export function textOfParts(parts: readonly Part[] | undefined): string {
  return (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

/** The values of the data parts. */
export function dataOfParts(parts: readonly Part[] | undefined): Record<string, unknown>[] {
  return (parts ?? []).flatMap((p) =>
    p.content?.$case === 'data' && typeof p.content.value === 'object' && p.content.value !== null
      ? [p.content.value as Record<string, unknown>]
      : [],
  );
}

/** A data part of ours that did not decode: its `type`, what is wrong with it, and the value as it came. */
export interface MalformedPart {
  part: string;
  violations: FieldViolationDetail[];
  value: Record<string, unknown>;
}

/** What each data part of ours is, in words, and what becomes of it when it does not decode. */
const PART_WORDS: Partial<Record<string, [what: string, fate: string]>> = {
  [PLAN_DATA_TYPE]: ['a plan', 'it is not shown'],
  [APPROVAL_REQUEST_TYPE]: ['an approval request', 'it is not shown, and nothing is approved'],
  [CLIENT_REQUEST_TYPE]: ['a client request', 'none of its calls runs'],
  [TOOL_CALL_EVENT]: ['a tool call report', 'it is not shown'],
  [TOOL_RESULT_EVENT]: ['a tool result report', 'it is not shown'],
};

/** The warning a malformed part is shown as: what it was, its first violation, what becomes of it. */
export function warningOf(malformed: Pick<MalformedPart, 'part' | 'violations'>): TurnEvent & { kind: 'warning' } {
  const [what, fate] = PART_WORDS[malformed.part] ?? [`a ${malformed.part} part`, 'it is not acted on'];
  const first = malformed.violations.at(0);
  const more = malformed.violations.length > 1 ? ` (and ${malformed.violations.length - 1} more)` : '';
  const why = first ? `${first.field || 'the part'}: ${first.description}${more}` : 'it does not follow the contract';
  return {
    kind: 'warning',
    text: `The agent sent ${what} this client cannot read (${why}): ${fate}.`,
    part: malformed.part,
    violations: malformed.violations,
  };
}

/** A data part decoded with its schema, or what is wrong with it. */
function decodePart<S extends WireSchema>(
  schema: S,
  data: Record<string, unknown>,
): { value: z.output<S> } | { malformed: MalformedPart } {
  const decoded = decode(schema, data);
  if (decoded.ok) return { value: decoded.value };
  return { malformed: { part: String(data.type), violations: decoded.violations, value: data } };
}

/** The approval or client request a waiting task's status carries, decoded; or the one that did not decode. */
export function pendingRequestOf(
  parts: readonly Part[] | undefined,
): { approval: ApprovalRequest } | { clientRequest: ClientRequest } | { malformed: MalformedPart } | undefined {
  for (const data of dataOfParts(parts)) {
    if (data.type === APPROVAL_REQUEST_TYPE) {
      const decoded = decodePart(ApprovalRequest, data);
      return 'value' in decoded ? { approval: decoded.value } : decoded;
    }
    if (data.type === CLIENT_REQUEST_TYPE) {
      const decoded = decodePart(ClientRequest, data);
      return 'value' in decoded ? { clientRequest: decoded.value } : decoded;
    }
  }
  return undefined;
}

/** The artifact the answer streams into; tool calls have their own artifacts. */
export const ANSWER_ARTIFACT = 'answer';
export const TOOL_ARTIFACT = 'tool-call';

/**
 * Turns the stream of one task into what a UI shows. Keeps the answer as assembled and as shown, so
 * that each piece of it is shown once: a whole answer sent again at its end (as the CleverAgents server
 * does), or an answer started over after a take-over (`append: false` mid-stream), shows only what goes
 * past what was shown. While a restarted answer is still behind what was shown, nothing is shown; only
 * when it takes another course is it shown again whole, as an `answer` event.
 */
export class TurnEventReader {
  /** The answer as the events assemble it. */
  private answer = '';
  /** What of it was shown: `answer` or a prefix of it, or (a restart still catching up) ahead of it. */
  private shown = '';
  /** The plan last shown, so one repeated by the next status is not shown again. */
  private planShown = '';
  taskId?: string;
  contextId?: string;
  state: TurnState = 'unknown';
  statusParts: readonly Part[] | undefined;

  /** The answer as it stands. */
  get answerText(): string {
    return this.answer;
  }

  read(event: StreamResponse): TurnEvent[] {
    const payload = event.payload;
    if (!payload) return [];
    switch (payload.$case) {
      case 'task':
        return this.readTask(payload.value);
      case 'message': {
        const text = textOfParts(payload.value.parts);
        this.contextId = payload.value.contextId || this.contextId;
        this.state = 'completed';
        return [{ kind: 'message', text, contextId: payload.value.contextId || undefined }];
      }
      case 'statusUpdate': {
        const status = payload.value.status;
        this.taskId ??= payload.value.taskId;
        this.contextId ??= payload.value.contextId;
        return this.readStatus(turnState(status?.state), status?.message?.parts);
      }
      case 'artifactUpdate': {
        const { artifact, append } = payload.value;
        if (!artifact) return [];
        if (artifact.name === TOOL_ARTIFACT) {
          return dataOfParts(artifact.parts).flatMap((data): TurnEvent[] => {
            if (data.type === TOOL_CALL_EVENT) {
              const decoded = decodePart(ToolCallData, data);
              return ['value' in decoded ? { kind: 'tool-call', call: decoded.value } : warningOf(decoded.malformed)];
            }
            if (data.type === TOOL_RESULT_EVENT) {
              const decoded = decodePart(ToolResultData, data);
              return [
                'value' in decoded ? { kind: 'tool-result', result: decoded.value } : warningOf(decoded.malformed),
              ];
            }
            return [];
          });
        }
        const text = textOfParts(artifact.parts);
        if (append) return this.addText(text);
        return this.replaceText(text);
      }
    }
  }

  private readTask(task: Task): TurnEvent[] {
    const events: TurnEvent[] = [];
    if (this.taskId !== task.id) {
      this.taskId = task.id;
      this.contextId = task.contextId;
      events.push({ kind: 'task', taskId: task.id, contextId: task.contextId });
    }
    for (const artifact of task.artifacts) {
      if (artifact.name === ANSWER_ARTIFACT) events.push(...this.replaceText(textOfParts(artifact.parts)));
    }
    events.push(...this.readStatus(turnState(task.status?.state), task.status?.message?.parts));
    return events;
  }

  private readStatus(state: TurnState, parts: readonly Part[] | undefined): TurnEvent[] {
    const events: TurnEvent[] = [];
    const changed = state !== this.state;
    this.state = state;
    this.statusParts = parts;
    for (const data of dataOfParts(parts)) {
      if (data.type !== PLAN_DATA_TYPE) continue;
      const decoded = decodePart(PlanDataPart, data);
      // A plan repeated by the next status is shown once; so is one that did not decode.
      const key =
        'value' in decoded
          ? JSON.stringify([
              decoded.value.plan.status,
              decoded.value.plan.entries.map((e) => [e.content, e.priority, e.status]),
            ])
          : JSON.stringify(['malformed', decoded.malformed.violations]);
      if (key === this.planShown) continue;
      this.planShown = key;
      events.push('value' in decoded ? { kind: 'plan', plan: decoded.value.plan } : warningOf(decoded.malformed));
    }
    const text = textOfParts(parts);
    // A restarted answer that ended shorter than what was shown: shown again, as it is.
    if (state === 'completed' && this.shown !== this.answer && this.answer !== '') {
      this.shown = this.answer;
      events.push({ kind: 'answer', text: this.answer });
    }
    // A completed task's status message is its answer: shown as it streamed, or now if nothing streamed.
    if (state === 'completed' && text) {
      if (changed) events.push({ kind: 'status', state });
      events.push(...this.replaceText(this.answer === '' ? text : this.answer));
      return events;
    }
    const note = text || undefined;
    if (changed || note !== undefined) events.push({ kind: 'status', state, ...(note ? { text: note } : {}) });
    const pending = state === 'input-required' ? pendingRequestOf(parts) : undefined;
    if (pending && 'approval' in pending) events.push({ kind: 'approval', request: pending.approval });
    if (pending && 'clientRequest' in pending) events.push({ kind: 'client-request', request: pending.clientRequest });
    if (pending && 'malformed' in pending) events.push(warningOf(pending.malformed));
    return events;
  }

  private addText(delta: string): TurnEvent[] {
    return this.replaceText(this.answer + delta);
  }

  /** The answer is now `text`: what goes past what was shown, or (another course) all of it again. */
  private replaceText(text: string): TurnEvent[] {
    this.answer = text;
    if (text.startsWith(this.shown)) {
      const delta = text.slice(this.shown.length);
      this.shown = text;
      return delta ? [{ kind: 'text', delta }] : [];
    }
    if (this.shown.startsWith(text)) return []; // started over, still behind what was shown
    this.shown = text;
    return [{ kind: 'answer', text }];
  }
}
