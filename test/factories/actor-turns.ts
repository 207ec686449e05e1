import { randomUUID } from 'node:crypto';
import { Role } from '@a2a-js/sdk';
import type { ActorDefinition, ActorTurn, TurnOutput } from '../../src/execution/actor-turn.js';

/** A TurnOutput that keeps every call, in order: `working`, `text:<delta>`, `restart`. */
export class RecordingTurnOutput implements TurnOutput {
  readonly events: string[] = [];
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

  remember(data: Record<string, unknown>): Promise<void> {
    this.remembered = { ...this.remembered, ...data };
    return Promise.resolve();
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
    remembered: {},
    signal: options.signal ?? new AbortController().signal,
    output: options.output ?? new RecordingTurnOutput(),
  };
}
