/**
 * A message stream that survives a dropped connection.
 *
 * `SendStreamingMessage` runs until the task rests: a terminal state (completed, failed, canceled,
 * rejected) or an interrupted one (input-required, auth-required), or until the agent answers with a
 * bare Message. If the stream ends or breaks before that, the task is re-joined with `SubscribeToTask`
 * (the SDK's `resubscribeTask`), with backoff, a few times; then a StreamResumeError is thrown.
 *
 * Nothing is yielded twice. A re-join starts with a snapshot of the task, which is not passed on as
 * it is: it is compared with what the caller has already seen and only the difference is yielded —
 *  - status: a status update is identified by (state, timestamp, message id); one equal to the last
 *    status yielded is dropped (live or from a snapshot), so the snapshot's status is yielded, as a
 *    status update, only when it is news;
 *  - artifacts: the parts yielded for each artifact are tracked as the caller would assemble them
 *    (append or replace). For each artifact of a snapshot: if what was yielded is a prefix of its parts,
 *    the missing parts come as one `append: true` update; if nothing was yielded, or the artifact was
 *    replaced, the whole artifact comes as `append: false`. Live chunks after a snapshot are new.
 *  - the task itself is yielded once, as the first event (a snapshot stands in for it if the first
 *    connection gave nothing before the task id was known — only possible when the caller named the task).
 * When the re-join is refused with a JSON-RPC error (a task that already rests may not be subscribed
 * to), the task is read with GetTask and its difference yielded the same way.
 */
import { TaskState, type Artifact, type StreamResponse, type Task, type TaskStatus } from '@a2a-js/sdk';
import { CleverAgentsError, LocalServerError, StreamResumeError, UnreachableError } from './errors.js';

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
  /** Re-join attempts in a row without an event before giving up (default 5). */
  attempts?: number;
  /** The first backoff delay, doubled each attempt up to 5 s (default 250 ms). */
  baseDelayMs?: number;
  /** Told before each re-join attempt. */
  onRejoin?: (info: { taskId: string; attempt: number; error: unknown }) => void;
}

export interface StreamSources {
  open(signal: AbortSignal): AsyncGenerator<StreamResponse, void, undefined>;
  resubscribe(taskId: string, signal: AbortSignal): AsyncGenerator<StreamResponse, void, undefined>;
  getTask(taskId: string, signal: AbortSignal): Promise<Task>;
  /** Maps what the SDK throws to the client's errors. */
  mapError(err: unknown): Error;
}

function statusKey(status: TaskStatus | undefined): string {
  if (!status) return '';
  return `${status.state}|${status.timestamp ?? ''}|${status.message?.messageId ?? ''}`;
}

function partKey(part: unknown): string {
  return JSON.stringify(part, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v));
}

/** Is this failure a broken connection (worth re-joining), rather than an answer or the caller's abort? */
export function isConnectionFailure(err: unknown): boolean {
  if (err instanceof CleverAgentsError) return false;
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
 * `knownTaskId`: the task the message continues, if it names one.
 */
export async function* resumableStream(
  sources: StreamSources,
  knownTaskId: string | undefined,
  options: ResumeOptions = {},
): AsyncGenerator<StreamResponse, void, undefined> {
  const maxAttempts = options.attempts ?? 5;
  const baseDelay = options.baseDelayMs ?? 250;
  const local = new AbortController();
  const onAbort = (): void => local.abort(options.signal?.reason);
  if (options.signal?.aborted) throw options.signal.reason;
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const seen = new Seen(knownTaskId);
  let failures = 0;
  let lastError: unknown;
  try {
    let source = sources.open(local.signal);
    for (;;) {
      try {
        for await (const event of source) {
          const fresh = seen.live(event);
          if (fresh.length > 0) failures = 0;
          for (const e of fresh) yield e;
          if (seen.resting) return;
        }
        lastError = new Error('the stream ended before the task reached a final or waiting state');
      } catch (err) {
        if (local.signal.aborted) throw options.signal?.reason ?? err;
        const mapped = sources.mapError(err);
        if (!isConnectionFailure(mapped)) {
          // The agent answered with an error. On a re-join, the task may rest already: read it instead.
          if (failures === 0 || seen.taskId === undefined || !(mapped instanceof CleverAgentsError)) throw mapped;
          const task = await sources.getTask(seen.taskId, local.signal).catch((e: unknown) => {
            throw sources.mapError(e);
          });
          for (const e of seen.snapshot(task)) yield e;
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
          failures,
          lastError,
        );
      }
      failures++;
      if (failures > maxAttempts) {
        throw new StreamResumeError(
          `the stream of task ${seen.taskId} broke and ${maxAttempts} attempts to re-join it failed: ${describe(lastError)}`,
          seen.taskId,
          maxAttempts,
          lastError,
        );
      }
      options.onRejoin?.({ taskId: seen.taskId, attempt: failures, error: lastError });
      await delay(Math.min(baseDelay * 2 ** (failures - 1), 5_000), local.signal);
      source = sources.resubscribe(seen.taskId, local.signal);
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
