import { createHash } from 'node:crypto';
import type { ActorTurn, AssembledContext, TurnOutput } from '../actor-turn.js';
import type { OrchestratorSetup } from '../orchestrator/protocol.js';
import { USAGE_EVENT } from '../orchestrator/protocol.js';
import { reportEvent } from '../orchestrator/report.js';
import { estimateTokens } from '../turn-values.js';

/** Fixed namespace of our thread ids, so that they never collide with ids minted by others. */
const THREAD_NAMESPACE = Buffer.from('5b0f4c8e2d7a4e6b9c1f0a3d6e8b7c21', 'hex');

/**
 * The LangGraph thread of a session: a version-5-style UUID of (namespace, owner, contextId), so the
 * mapping needs no storage and two owners of the same contextId never share a thread.
 */
export function langGraphThreadId(namespace: string, owner: string, contextId: string): string {
  const name = JSON.stringify([namespace, owner, contextId]);
  const bytes = createHash('sha1').update(THREAD_NAMESPACE).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Keeps the newest messages that fit `maxTokens` (all when unset), oldest first. */
export function trimToTokens(
  messages: AssembledContext['messages'],
  maxTokens: number | undefined,
): Pick<AssembledContext, 'messages' | 'estimatedTokens' | 'omittedMessages'> {
  let kept = 0;
  let tokens = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const cost = estimateTokens(messages[i].content);
    if (maxTokens !== undefined && tokens + cost > maxTokens) break;
    tokens += cost;
    kept += 1;
  }
  const start = messages.length - kept;
  return { messages: messages.slice(start), estimatedTokens: tokens, omittedMessages: start };
}

/**
 * A task's first input to its graph (docs/protocol.md §5): the user's message and the orchestrator setup, which
 * the graph keeps in its state (a resumed or recovered run keeps it). A graph whose state has no
 * `setup` key ignores it: LangGraph writes only the input keys that are channels of the graph.
 */
export function startInput(turn: Pick<ActorTurn, 'input' | 'setup'>): {
  messages: { role: 'user'; content: string }[];
  setup: OrchestratorSetup;
} {
  return { messages: [{ role: 'user', content: turn.input.text }], setup: turn.setup };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The reason of a `rejection: {reason}` in a graph's state values (or a node's update), if any. */
export function rejectionOf(values: unknown): string | undefined {
  if (!isRecord(values) || !isRecord(values.rejection)) return undefined;
  const { reason } = values.rejection;
  return typeof reason === 'string' && reason !== '' ? reason : 'The plan was rejected';
}

/** The rejection a node wrote, from an `updates` stream event (`{<node>: <its update>}`). */
export function rejectionInUpdates(data: unknown): string | undefined {
  if (!isRecord(data)) return undefined;
  for (const [node, update] of Object.entries(data)) {
    if (node.startsWith('__')) continue;
    const reason = rejectionOf(update);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/** Where `remembered` keeps how many custom events of which run were reported: `{runId, count}`. */
export const REPORTED_EVENTS_KEY = 'customEvents';

/**
 * Where `remembered` keeps the run `plan/pause` stopped (cancelled with action `interrupt`, so that its
 * thread keeps its last checkpoint), until a resumed turn continues it: `{runId, mode, replay}`, or null.
 */
export const PAUSED_RUN_KEY = 'pausedRun';

/** A run `plan/pause` stopped, as `remembered` holds it. */
export interface PausedRun {
  /** The stopped run; null when it was stopped before the server named it (nothing of it is known). */
  runId: string | null;
  /** How the stopped run was started: with a new input (`start`), an interrupt's answer, or re-joined. */
  mode: 'start' | 'resume' | 'recover';
  /** Custom events it reported from its unfinished nodes, which they write again when they run again. */
  replay: number;
}

/** The run a pause stopped and no turn has continued yet, if any. */
export function pausedRunOf(remembered: Readonly<Record<string, unknown>>): PausedRun | undefined {
  const entry = remembered[PAUSED_RUN_KEY];
  if (!isRecord(entry)) return undefined;
  const { runId, mode, replay } = entry;
  if (runId !== null && typeof runId !== 'string') return undefined;
  if (mode !== 'start' && mode !== 'resume' && mode !== 'recover') return undefined;
  const count = typeof replay === 'number' && Number.isInteger(replay) && replay > 0 ? replay : 0;
  return { runId, mode, replay: count };
}

/** How many custom events of `runId` an earlier server reported, as `remembered` holds it. */
export function reportedEvents(remembered: Readonly<Record<string, unknown>>, runId: string): number {
  const entry = remembered[REPORTED_EVENTS_KEY];
  if (!isRecord(entry) || entry.runId !== runId) return 0;
  return typeof entry.count === 'number' && Number.isInteger(entry.count) && entry.count > 0 ? entry.count : 0;
}

/**
 * What one run reported to a turn's output besides its text. A re-joined stream replays the run's
 * events from the first, so the custom events already reported (by this server or, remembered, by the
 * one before a restart) are passed over; and usage is counted once per run: the graph's own
 * `cleveragents/usage` events when it writes any, else an estimate of the tokens it streamed, reported
 * when the run ends.
 */
export class RunReport {
  private seen = 0;
  /** `seen` when the stream last told that a node finished (an `updates` event). */
  private seenAtStep = 0;
  private usageSeen = false;
  private streamed = '';
  private finished = false;

  /** `reported`: custom events of this run reported before (a recovered run's remembered count). */
  constructor(
    private readonly output: TurnOutput,
    public reported = 0,
  ) {}

  /** A stream of the run (re)starts from its first event. */
  restart(): void {
    this.seen = 0;
    this.seenAtStep = 0;
    this.streamed = '';
  }

  /** A node of the run finished (its `updates` event): the custom events so far are behind its checkpoint. */
  step(): void {
    this.seenAtStep = this.seen;
  }

  /**
   * Custom events seen since the last node finished: those of the nodes still running, which a run
   * stopped now and continued from its checkpoint writes again (in the same order) when they run again.
   */
  get sinceStep(): number {
    return this.seen - this.seenAtStep;
  }

  /** One custom event, in stream order. True when it was reported now, false for a replayed one. */
  custom(event: unknown): boolean {
    const index = this.seen++;
    if (isRecord(event) && event.type === USAGE_EVENT) this.usageSeen = true;
    if (index < this.reported) return false;
    this.reported = index + 1;
    reportEvent(this.output, event);
    return true;
  }

  /** Streamed answer text (counted for the estimate; the caller hands it to the output). */
  text(delta: string): void {
    this.streamed += delta;
  }

  /** The run came to rest: reports the estimate of its streamed tokens unless the graph counted its own. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (!this.usageSeen && this.streamed !== '') this.output.usage(estimateTokens(this.streamed));
  }
}
