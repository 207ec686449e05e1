/**
 * A message stream that survives a dropped connection, a restart and a take-over, yielding nothing twice
 * (docs/design-notes.md#resumable-message-streams).
 */
import { SEQUENCE_KEY, SequenceNumber, decode } from '@cleveragents/contract';
import { TaskState, type Artifact, type StreamResponse, type Task, type TaskStatus } from '@a2a-js/sdk';
import {
  CleverAgentsError,
  LocalServerError,
  StreamProtocolError,
  StreamResumeError,
  UnreachableError,
  isRetryable,
} from './errors.js';
import type { SourceEvent } from './event-stream.js';

/** Where an event carries its sequence number (the contract's resumableStreams.metadataKey). */
export { SEQUENCE_KEY };
/** How long a broken stream is re-joined without an event before giving up: a restart, a take-over. */
export const DEFAULT_RESUME_WINDOW_MS = 180_000;

/** States in which a task waits or is done: a stream that reached one is over. */
export const RESTING_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

const INTERRUPTED_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

export interface ResumeOptions {
  signal?: AbortSignal;
  /**
   * How long re-joins go on, from the break, without an event before giving up (default 3 min: a
   * server restart, or a replica take-over of up to two 30 s leases and a start).
   */
  windowMs?: number;
  /** The first back-off delay, doubled each attempt up to `maxDelayMs` (default 250 ms). */
  baseDelayMs?: number;
  /** The longest back-off delay (default 5 s); a server's Retry-After may ask for more, within the window. */
  maxDelayMs?: number;
  /** Told before each re-join attempt; `lastSequence` when it resumes by number. */
  onRejoin?: (info: { taskId: string; attempt: number; error: unknown; lastSequence?: number }) => void;
  /**
   * The server could not resume after `lastSequence` (its events expired, or it does not know them): the
   * task is re-joined from a snapshot, so progress events between may be missing (the answer is not).
   */
  onSnapshotResume?: (info: { taskId: string; lastSequence: number; reason: string }) => void;
  /** Follows a task already running (the first connection is a SubscribeToTask): one that rests is read instead. */
  follow?: boolean;
  /** The clock the window is measured on (tests). */
  now?: () => number;
}

export interface StreamSources {
  open(signal: AbortSignal): AsyncGenerator<SourceEvent, void, undefined>;
  /** SubscribeToTask; with `lastSequence`, only the events after it (no snapshot). */
  resubscribe(taskId: string, signal: AbortSignal, lastSequence?: number): AsyncGenerator<SourceEvent, void, undefined>;
  getTask(taskId: string, signal: AbortSignal): Promise<Task>;
  /** Maps what the SDK throws to the client's errors. */
  mapError(err: unknown): Error;
  /** The server numbers its events (its card declares resumableStreams): each is checked, re-joins resume by number. */
  sequenced?: boolean;
}

function statusKey(status: TaskStatus | undefined): string {
  if (!status) return '';
  return `${status.state}|${status.timestamp ?? ''}|${status.message?.messageId ?? ''}`;
}

function partKey(part: unknown): string {
  // Hex, not Buffer: the library runs in browsers too.
  const hex = (bytes: Uint8Array): string => Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return JSON.stringify(part, (_k, v: unknown) => (v instanceof Uint8Array ? hex(v) : v));
}

/** Is this failure a broken connection (worth re-joining), rather than an answer or the caller's abort? */
export function isConnectionFailure(err: unknown): boolean {
  if (err instanceof CleverAgentsError) return false;
  if (err instanceof StreamProtocolError) return false;
  if (err instanceof LocalServerError) return false;
  if (err instanceof UnreachableError) return true;
  if (err instanceof Error && err.name === 'AbortError') return false;
  return err instanceof Error;
}

/** What the caller has seen; turns events and snapshots into the events still to yield. */
class Seen {
  taskId: string | undefined;
  contextId = '';
  taskYielded = false;
  resting = false;
  private lastStatus: string | undefined;
  private readonly artifacts = new Map<string, string[]>();

  constructor(taskId: string | undefined) {
    this.taskId = taskId;
  }

  private noteStatus(status: TaskStatus | undefined): void {
    this.lastStatus = statusKey(status);
    if (status && RESTING_STATES.has(status.state)) this.resting = true;
  }

  private noteArtifact(artifact: Artifact | undefined, append: boolean): void {
    if (!artifact) return;
    const parts = artifact.parts.map(partKey);
    const had = this.artifacts.get(artifact.artifactId);
    this.artifacts.set(artifact.artifactId, append && had ? [...had, ...parts] : parts);
  }

  /** A live event: the events to yield for it (none when it repeats what was seen). */
  live(event: StreamResponse): StreamResponse[] {
    const payload = event.payload;
    switch (payload?.$case) {
      case undefined:
        return [];
      case 'message':
        if (this.taskId === undefined) this.resting = true; // a bare Message answers the whole call
        return [event];
      case 'task':
        return this.taskYielded ? this.snapshot(payload.value) : this.firstTask(event, payload.value);
      case 'statusUpdate': {
        this.taskId ??= payload.value.taskId;
        this.contextId ||= payload.value.contextId;
        if (statusKey(payload.value.status) === this.lastStatus) return [];
        this.noteStatus(payload.value.status);
        return [event];
      }
      case 'artifactUpdate':
        this.taskId ??= payload.value.taskId;
        this.contextId ||= payload.value.contextId;
        this.noteArtifact(payload.value.artifact, payload.value.append);
        return [event];
    }
  }

  private firstTask(event: StreamResponse, task: Task): StreamResponse[] {
    this.taskYielded = true;
    const continued = this.taskId === task.id;
    this.taskId = task.id;
    this.contextId = task.contextId;
    // A message that answers a waiting task is streamed from the task as it stood, still waiting: that
    // wait is the one being answered, not where this stream rests.
    if (continued && task.status && INTERRUPTED_STATES.has(task.status.state)) this.lastStatus = statusKey(task.status);
    else this.noteStatus(task.status);
    for (const artifact of task.artifacts) this.noteArtifact(artifact, false);
    return [event];
  }

  /** A task snapshot (re-join or GetTask): only what the caller has not seen. */
  snapshot(task: Task): StreamResponse[] {
    if (!this.taskYielded) return this.firstTask({ payload: { $case: 'task', value: task } }, task);
    const out: StreamResponse[] = [];
    const resting = task.status !== undefined && RESTING_STATES.has(task.status.state);
    for (const artifact of task.artifacts) {
      const parts = artifact.parts.map(partKey);
      const had = this.artifacts.get(artifact.artifactId) ?? [];
      const isPrefix = had.length <= parts.length && had.every((p, i) => p === parts[i]);
      if (isPrefix && had.length === parts.length) continue;
      const append = isPrefix && had.length > 0;
      const chunk: Artifact = append ? { ...artifact, parts: artifact.parts.slice(had.length) } : artifact;
      this.artifacts.set(artifact.artifactId, parts);
      out.push({
        payload: {
          $case: 'artifactUpdate',
          value: {
            taskId: task.id,
            contextId: task.contextId,
            artifact: chunk,
            append,
            lastChunk: resting,
            metadata: undefined,
          },
        },
      });
    }
    if (task.status && statusKey(task.status) !== this.lastStatus) {
      this.noteStatus(task.status);
      out.push({
        payload: {
          $case: 'statusUpdate',
          value: { taskId: task.id, contextId: task.contextId, status: task.status, metadata: undefined },
        },
      });
    }
    return out;
  }
}

/** The sequence number an event carries in its metadata, as it came (anything: it is checked after). */
export function sequenceOf(event: StreamResponse): unknown {
  const metadata = event.payload?.value.metadata;
  return metadata?.[SEQUENCE_KEY];
}

/** Checks each event's sequence number against the last one passed on. */
class SequenceCheck {
  last: number | undefined;

  /** `snapshot`: the first event of a connection that starts with a snapshot (no `lastSequence`). */
  check(item: SourceEvent, snapshot: boolean, taskId: string | undefined): void {
    const raw = sequenceOf(item.event);
    const fail = (what: string): never => {
      const expected = this.last === undefined ? undefined : this.last + 1;
      // JSON.stringify gives undefined (whatever its type says) for undefined.
      const shown = (JSON.stringify(raw) as string | undefined) ?? 'none';
      throw new StreamProtocolError(
        `the server broke the stream's contract${taskId ? ` (task ${taskId})` : ''}: ${what} (sequence ${shown.slice(0, 40)}${expected === undefined ? '' : `, expected ${expected}`}); the event was not shown`,
        taskId,
        expected,
        raw,
      );
    };
    // A bare Message (an answer with no task) is in no task's log: it carries no number, and ends the stream.
    if (raw === undefined && item.event.payload?.$case === 'message') return;
    if (raw === undefined) return fail('an event without its sequence number');
    const decoded = decode(SequenceNumber, raw);
    if (!decoded.ok) return fail('a sequence number that is not a whole number from 1');
    const sequence = decoded.value;
    if (item.sseId !== undefined && item.sseId !== String(sequence)) {
      return fail(`the SSE id ${JSON.stringify(item.sseId.slice(0, 40))} differs from the event's sequence number`);
    }
    const startsSnapshot =
      snapshot && (item.event.payload?.$case === 'task' || item.event.payload?.$case === 'message');
    if (this.last === undefined || (startsSnapshot && sequence >= this.last)) {
      this.last = sequence;
      return;
    }
    if (sequence !== this.last + 1) {
      return fail(sequence <= this.last ? 'an event repeated or out of order' : 'events missing before this one');
    }
    this.last = sequence;
  }
}

/** Did the server refuse to resume after `lastSequence` (expired, or a number it does not know)? */
function cannotResume(err: Error): err is CleverAgentsError {
  if (!(err instanceof CleverAgentsError)) return false;
  if (err.reason === 'EVENTS_EXPIRED') return true;
  return err.code === -32602 && err.fieldViolations.some((v) => v.field === 'lastSequence');
}

/** Waits `ms`; rejects with the signal's reason when it aborts first (or has already). */
async function delay(ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
  signal.throwIfAborted();
}

/**
 * Streams a message (`sources.open`) to the task's rest, re-joining as described above.
 * `knownTaskId`: the task the message continues (or, with `follow`, the task followed), if it names one.
 */
export async function* resumableStream(
  sources: StreamSources,
  knownTaskId: string | undefined,
  options: ResumeOptions = {},
): AsyncGenerator<StreamResponse, void, undefined> {
  const windowMs = options.windowMs ?? DEFAULT_RESUME_WINDOW_MS;
  const baseDelay = options.baseDelayMs ?? 250;
  const maxDelay = options.maxDelayMs ?? 5_000;
  const now = options.now ?? Date.now;
  const local = new AbortController();
  const onAbort = (): void => local.abort(options.signal?.reason);
  if (options.signal?.aborted) throw options.signal.reason;
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const seen = new Seen(knownTaskId);
  const sequence = sources.sequenced ? new SequenceCheck() : undefined;
  /** Re-join attempts since the last event, and when the stream broke. */
  let attempts = 0;
  let brokeAt: number | undefined;
  let lastError: unknown;
  /** The connection open resumes after a sequence number (it starts with no snapshot). */
  let resumedFrom: number | undefined;
  const readTask = async function* (taskId: string): AsyncGenerator<StreamResponse, void, undefined> {
    const task = await sources.getTask(taskId, local.signal).catch((e: unknown) => {
      throw sources.mapError(e);
    });
    yield* seen.snapshot(task);
  };
  try {
    let source = sources.open(local.signal);
    for (;;) {
      let first = true;
      try {
        for await (const item of source) {
          sequence?.check(item, first && resumedFrom === undefined, seen.taskId);
          first = false;
          const fresh = seen.live(item.event);
          if (fresh.length > 0 || sequence) {
            attempts = 0;
            brokeAt = undefined;
          }
          for (const e of fresh) yield e;
          if (seen.resting) return;
        }
        lastError = new Error('the stream ended before the task reached a final or waiting state');
      } catch (err) {
        if (local.signal.aborted) throw options.signal?.reason ?? err;
        if (err instanceof StreamProtocolError) throw err;
        const mapped = sources.mapError(err);
        if (resumedFrom !== undefined && seen.taskId !== undefined && cannotResume(mapped)) {
          // Not a failure: the same task, from a snapshot, at once.
          options.onSnapshotResume?.({
            taskId: seen.taskId,
            lastSequence: resumedFrom,
            reason: mapped.reason ?? 'INVALID_PARAMS',
          });
          resumedFrom = undefined;
          source = sources.resubscribe(seen.taskId, local.signal);
          continue;
        }
        if (!isConnectionFailure(mapped) && !isRetryable(mapped)) {
          // The agent answered with an error. On a re-join, the task may rest already: read it instead.
          const rejoined = attempts > 0 || (options.follow === true && first);
          if (!rejoined || seen.taskId === undefined || !(mapped instanceof CleverAgentsError)) throw mapped;
          yield* readTask(seen.taskId);
          if (seen.resting) return;
          throw mapped;
        }
        lastError = mapped;
      }
      if (seen.resting) return;
      if (seen.taskId === undefined) {
        throw new StreamResumeError(
          `the stream broke before the agent named the task, so it cannot be re-joined: ${describe(lastError)}`,
          undefined,
          attempts,
          lastError,
        );
      }
      brokeAt ??= now();
      const elapsed = now() - brokeAt;
      if (attempts > 0 && elapsed >= windowMs) {
        throw new StreamResumeError(
          `the stream of task ${seen.taskId} broke and could not be re-joined within ${Math.round(windowMs / 1000)} s (${attempts} attempts): ${describe(lastError)}`,
          seen.taskId,
          attempts,
          lastError,
        );
      }
      attempts++;
      const backoff = Math.min(baseDelay * 2 ** (attempts - 1), maxDelay);
      const asked = lastError instanceof CleverAgentsError && lastError.retryAfter ? lastError.retryAfter * 1000 : 0;
      resumedFrom = sequence?.last;
      options.onRejoin?.({
        taskId: seen.taskId,
        attempt: attempts,
        error: lastError,
        ...(resumedFrom !== undefined ? { lastSequence: resumedFrom } : {}),
      });
      await delay(Math.max(0, Math.min(Math.max(backoff, asked), windowMs - elapsed)), local.signal);
      source = sources.resubscribe(seen.taskId, local.signal, resumedFrom);
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    // Stops whatever connection is still open (a generator left early, or a stream that outlived the rest).
    local.abort();
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
