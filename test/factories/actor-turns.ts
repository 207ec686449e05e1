import { randomUUID } from 'node:crypto';
import { Role } from '@a2a-js/sdk';
import type {
  ActorDefinition,
  ActorTurn,
  ArtifactChunk,
  TurnOutput,
} from '../../packages/server/src/execution/actor-turn.js';
import type {
  OrchestratorSetup,
  PlanEntry,
  ToolCallReport,
  ToolResultReport,
} from '../../packages/server/src/execution/orchestrator/protocol.js';

/** No gates and no tools: a plain conversation turn. */
export const PLAIN_SETUP: OrchestratorSetup = { policy: { gate: 'autonomous', allowedTools: [] }, tools: [] };

/**
 * A TurnOutput that keeps every call, in order: `working`, `text:<delta>`, `restart`, `plan`, `tool-call:<name>`,
 * `tool-result:<name>`; the plans, tool calls and results themselves, and the tokens reported.
 */
export class RecordingTurnOutput implements TurnOutput {
  readonly events: string[] = [];
  readonly plans: PlanEntry[][] = [];
  readonly toolCalls: ToolCallReport[] = [];
  readonly toolResults: ToolResultReport[] = [];
  tokens = 0;
  remembered: Record<string, unknown> = {};
  private readonly textListeners: ((answer: string) => void)[] = [];

  working(note?: string): void {
    this.events.push(note === undefined ? 'working' : `working:${note}`);
  }

  text(delta: string): void {
    this.events.push(`text:${delta}`);
    for (const listener of this.textListeners) listener(this.answer);
  }

  restartText(): void {
    this.events.push('restart');
  }

  artifact(chunk: ArtifactChunk): void {
    this.events.push(`artifact:${chunk.name}`);
  }

  remember(data: Record<string, unknown>): Promise<void> {
    this.remembered = { ...this.remembered, ...data };
    return Promise.resolve();
  }

  plan(entries: PlanEntry[]): void {
    this.events.push('plan');
    this.plans.push(entries);
  }

  toolCall(call: ToolCallReport): void {
    this.events.push(`tool-call:${call.name}`);
    this.toolCalls.push(call);
  }

  toolResult(result: ToolResultReport): void {
    this.events.push(`tool-result:${result.name}`);
    this.toolResults.push(result);
  }

  usage(tokens: number): void {
    this.tokens += tokens;
  }

  /** The streamed deltas since the last restart, in order. */
  get deltas(): string[] {
    const start = this.events.lastIndexOf('restart') + 1;
    return this.events
      .slice(start)
      .filter((event) => event.startsWith('text:'))
      .map((event) => event.slice('text:'.length));
  }

  /** The streamed answer since the last restart. */
  get answer(): string {
    return this.deltas.join('');
  }

  /** Resolves once the streamed answer satisfies `condition`. */
  answerReaches(condition: (answer: string) => boolean): Promise<void> {
    if (condition(this.answer)) return Promise.resolve();
    return new Promise((resolve) => this.textListeners.push((answer) => condition(answer) && resolve()));
  }
}

export function anActor(overrides: Partial<ActorDefinition> = {}): ActorDefinition {
  return { name: 'default', localGraph: 'orchestrator', tools: [], ...overrides };
}

/** One turn of a local-backend task; a fresh task and message unless given. */
export function aTurn(
  options: {
    text?: string;
    contextId?: string;
    namespace?: string;
    owner?: string;
    taskId?: string;
    messageId?: string;
    mode?: ActorTurn['mode'];
    actor?: ActorDefinition;
    signal?: AbortSignal;
    output?: TurnOutput;
    setup?: OrchestratorSetup;
  } = {},
): ActorTurn {
  const text = options.text ?? 'hello';
  const contextId = options.contextId ?? `ctx-${randomUUID()}`;
  const taskId = options.taskId ?? `task-${randomUUID()}`;
  return {
    taskId,
    contextId,
    namespace: options.namespace ?? 'default',
    owner: options.owner ?? 'alice',
    actor: options.actor ?? anActor(),
    mode: options.mode ?? 'start',
    input: {
      text,
      data: [],
      message: {
        messageId: options.messageId ?? `msg-${randomUUID()}`,
        contextId,
        taskId,
        role: Role.ROLE_USER,
        parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
    },
    setup: options.setup ?? PLAIN_SETUP,
    remembered: {},
    signal: options.signal ?? new AbortController().signal,
    output: options.output ?? new RecordingTurnOutput(),
  };
}
