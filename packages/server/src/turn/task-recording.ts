import { StreamResponse, Task, TaskState, taskStateToJSON, type Message } from '@a2a-js/sdk';
import {
  ResultManager,
  type AgentExecutionEvent,
  type ExecutionEventBus,
  type ServerCallContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { DatabaseUnavailableError, TaskHandoverPendingError } from '../common/domain.errors.js';
import { SEQUENCE_KEY } from '@cleveragents/contract';
import { isTransientDatabaseError } from '../database/database-retry.js';
import type { EventCommit, EventWrite, StoredEvent, TaskRef, WriteSource } from '../database/task-event-log.js';
import { NO_TIMESTAMP, toSqlTimestamp } from '../database/task-list.query.js';

/** One event as a stream gives it out: its sequence number (none for a bare Message, which no log holds). */
export interface RecordedEvent {
  seq: number | undefined;
  response: StreamResponse;
}

/** What a recording needs of the rest of the server. */
export interface RecordingPorts {
  /**
   * Stores a commit's events and task, waiting out an outage up to its bound; undefined when fenced off. The
   * write is taken from `take` when the statement carrying it is built; a retry takes the same write again.
   */
  commit(take: WriteSource): Promise<EventCommit | undefined>;
  /** The stored events of the task after `after`, for a follower behind what the recording still holds. */
  read(task: TaskRef, after: number): Promise<StoredEvent[]>;
  /**
   * Events were committed with `write` (the task as they left it, its state): their push notifications, the
   * finished-task cache.
   */
  committed(events: RecordedEvent[], write: EventWrite, hasPush: boolean): void;
  /** The recording could not store its events (an outage past its bound, another replica's take-over). */
  lost(recording: TaskRecording, error: unknown): void;
}

/** The recorded events a recording keeps for live followers; older ones are read back from the log. */
const KEPT_EVENTS = 2_000;

/** A task state after which a stream ends: final, or waiting for its client (as the SDK's queue ends). */
export function endsStream(state: TaskState | undefined): boolean {
  return (
    state === TaskState.TASK_STATE_COMPLETED ||
    state === TaskState.TASK_STATE_FAILED ||
    state === TaskState.TASK_STATE_CANCELED ||
    state === TaskState.TASK_STATE_REJECTED ||
    state === TaskState.TASK_STATE_INPUT_REQUIRED
  );
}

/** Whether a stream following a task ends after this event. */
export function endsAfter(response: StreamResponse): boolean {
  const payload = response.payload;
  if (payload?.$case === 'message') return true;
  return payload?.$case === 'statusUpdate' && endsStream(payload.value.status?.state);
}

/** The event as a stream sends it: its sequence number in its metadata (docs/protocol.md, resumable streams). */
export function withSequence(response: StreamResponse, seq: number | undefined): StreamResponse {
  const payload = response.payload;
  if (seq === undefined || !payload) return response;
  const value = { ...payload.value, metadata: { ...(payload.value.metadata ?? {}), [SEQUENCE_KEY]: seq } };
  return { payload: { ...payload, value } as typeof payload };
}

/** A stored event (its `StreamResponse` JSON) as a stream sends it. */
export function recordedOf(stored: StoredEvent): RecordedEvent {
  return { seq: stored.seq, response: withSequence(StreamResponse.fromJSON(stored.event), stored.seq) };
}

interface Pending {
  response: StreamResponse;
  /** The event's JSON for the log; undefined for a bare Message. */
  json: string | undefined;
}

/**
 * The recorder of one task's events (docs/execution.md, "The event log"): applies each event as the SDK would,
 * commits it numbered with the task, and lets streams follow only what is committed; lost past an outage.
 */
export class TaskRecording {
  private current: Task | undefined;
  private readonly results: ResultManager;
  private processing: Promise<void> = Promise.resolve();
  private readonly pending: Pending[] = [];
  /** Events taken from the bus and not yet applied (ResultManager) and queued to commit. */
  private applying = 0;
  private writing = false;
  /** Committed events of this recording, the latest KEPT_EVENTS. */
  private readonly kept: RecordedEvent[] = [];
  private wakers = new Set<() => void>();
  private stopped = false;
  private failure: Error | undefined;
  /** The number of the last committed event, and the task as it left it (0 and undefined before any). */
  private last = 0;
  /** The number of the first event this recording committed (or showed, mirroring). */
  private firstSeq: number | undefined;
  /** Followers iterating now, and whether the last commit left the task resting (final, or waiting for input). */
  private followers = 0;
  private resting = false;
  private committedJson: string | undefined;
  private readonly onEvent = (event: AgentExecutionEvent): void => this.take(event);
  private readonly onFinished = (): void => this.stop();

  constructor(
    readonly ref: TaskRef,
    context: ServerCallContext,
    readonly bus: ExecutionEventBus,
    private readonly ports: RecordingPorts,
  ) {
    // The SDK's reducer over a store holding the one task in memory: it mutates the task it loads, then saves it.
    const memory: TaskStore = {
      load: () => Promise.resolve(this.current),
      save: (task) => {
        this.current = task;
        return Promise.resolve();
      },
      list: () => Promise.reject(new Error('a recording lists no tasks')),
    };
    this.results = new ResultManager(memory, context);
    bus.on('event', this.onEvent);
    bus.on('finished', this.onFinished);
  }

  /** The user message of the call about to run the executor: the task's history holds it, as the SDK ensures. */
  expect(message: Message): void {
    this.results.setContext(message);
  }

  /**
   * Where a follower starting now begins: after the last committed event, or undefined when this recording
   * committed none yet (its first event comes next, whatever number the log gives it).
   */
  get position(): number | undefined {
    return this.last > 0 ? this.last : undefined;
  }

  /** The task as stored, for a recording opened on a task no call is running (an event at rest). */
  seed(task: Task): void {
    this.current ??= task;
  }

  /** The task as the last committed event left it, if this recording committed one. */
  get task(): Task | undefined {
    return this.committedJson === undefined ? undefined : Task.fromJSON(JSON.parse(this.committedJson));
  }

  /** Resolves once every event published so far is committed (or the recording was lost). */
  async settled(): Promise<void> {
    await this.processing;
    while (!this.failure && this.busy) await this.nextChange();
  }

  /** Why the recording was lost, once it was. */
  get lostWith(): Error | undefined {
    return this.failure;
  }

  /**
   * The committed events after `after` (undefined: from the next one this recording commits), then the live
   * ones as they commit, until an event that ends a stream (a final or input-required status, a Message), the
   * recording stops with nothing left, or the caller returns. Events older than what the recording keeps are
   * read from the log. Throws the recording's failure once it is lost.
   */
  async *follow(after: number | undefined): AsyncGenerator<RecordedEvent, void, undefined> {
    this.followers += 1;
    try {
      yield* this.events(after);
    } finally {
      this.followers -= 1;
      this.release();
    }
  }

  /**
   * A task that rests (waiting for its client, its bus kept) holds nothing in memory once nobody follows it:
   * a later follower reads what it missed from the log.
   */
  private release(): void {
    if (this.resting && this.followers === 0) this.kept.length = 0;
  }

  private async *events(after: number | undefined): AsyncGenerator<RecordedEvent, void, undefined> {
    if (after === undefined && this.last > 0) after = this.last;
    if (after === undefined) {
      // Nothing committed yet: from the first numbered event this recording commits. A bare Message before
      // any (an answer with no task) is the whole stream.
      const start = this.kept.length;
      for (;;) {
        if (this.firstSeq !== undefined) {
          yield* this.events(this.firstSeq - 1);
          return;
        }
        const message = this.kept.at(start);
        if (message) {
          yield message;
          return;
        }
        if (this.failure) throw this.failure;
        if (this.stopped && !this.busy) return;
        await this.nextChange();
      }
    }
    let next = after + 1;
    for (;;) {
      const lowest = this.kept.find((event) => event.seq !== undefined)?.seq;
      if (next <= this.last && (lowest === undefined || lowest > next)) {
        // Behind what is kept here: from the log, up to the first event kept.
        const stored = await this.ports.read(this.ref, next - 1);
        const missing = stored.filter((event) => lowest === undefined || event.seq < lowest);
        if (missing.length === 0) throw new Error(`event ${next} of task ${this.ref.id} is no longer stored`);
        for (const event of missing) {
          const recorded = recordedOf(event);
          yield recorded;
          next = event.seq + 1;
          if (endsAfter(recorded.response)) return;
        }
        continue;
      }
      let gaveOut = false;
      for (const event of this.kept.slice(this.indexAfter(next - 1))) {
        gaveOut = true;
        yield event;
        if (event.seq !== undefined) next = event.seq + 1;
        if (endsAfter(event.response)) return;
      }
      if (gaveOut) continue;
      if (this.failure) throw this.failure;
      if (this.stopped && !this.busy) return;
      await this.nextChange();
    }
  }

  /** Whether events taken are still being applied or committed. */
  private get busy(): boolean {
    return this.applying > 0 || this.writing || this.pending.length > 0;
  }

  /** Where in `kept` the events after sequence `after` begin (a bare Message counts as after its predecessor). */
  private indexAfter(after: number): number {
    let index = this.kept.length;
    while (index > 0) {
      const seq = this.kept[index - 1].seq;
      if (seq !== undefined && seq <= after) break;
      index -= 1;
    }
    return index;
  }

  /**
   * Shows followers here an event another replica stored (it runs the task's turn now): nothing is stored
   * again. Events it skipped are read from the log first; one already shown is passed over.
   */
  async mirror(response: StreamResponse): Promise<void> {
    const seq: unknown = response.payload?.value.metadata?.[SEQUENCE_KEY];
    if (typeof seq !== 'number') return;
    if (seq <= this.last) return;
    if (this.last > 0 && seq > this.last + 1) await this.catchUp(seq - 1);
    this.kept.push({ seq, response });
    this.firstSeq ??= seq;
    this.last = seq;
    // The task as it stands is the store's now, not this recording's.
    this.committedJson = undefined;
    this.wake();
  }

  /** Shows followers here the stored events after the last one shown (up to `until`), as `mirror` does. */
  async catchUp(until = Number.MAX_SAFE_INTEGER): Promise<void> {
    if (this.last === 0) return;
    for (;;) {
      const stored = (await this.ports.read(this.ref, this.last)).filter((event) => event.seq <= until);
      if (stored.length === 0) return;
      for (const event of stored) {
        this.kept.push(recordedOf(event));
        this.firstSeq ??= event.seq;
        this.last = event.seq;
      }
      this.committedJson = undefined;
      this.wake();
    }
  }

  /** Stops taking events (the bus finished); what was taken is still committed. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.bus.off('event', this.onEvent);
    this.bus.off('finished', this.onFinished);
    this.wake();
  }

  private take(event: AgentExecutionEvent): void {
    if (this.stopped || this.failure) return;
    if (!this.concerns(event)) return;
    this.applying += 1;
    this.processing = this.processing
      .then(() => this.process(event))
      .catch((error: unknown) => this.lose(error))
      .finally(() => {
        this.applying -= 1;
        this.wake();
      });
  }

  private concerns(event: AgentExecutionEvent): boolean {
    switch (event.kind) {
      case 'task':
        return event.data.id === this.ref.id;
      case 'statusUpdate':
      case 'artifactUpdate':
        return event.data.taskId === this.ref.id;
      default:
        return true;
    }
  }

  private async process(event: AgentExecutionEvent): Promise<void> {
    await this.results.processEvent(event);
    if (this.failure) return;
    let response: StreamResponse;
    switch (event.kind) {
      case 'message':
        this.pending.push({ response: { payload: { $case: 'message', value: event.data } }, json: undefined });
        this.write();
        return;
      case 'task':
        // The task as the event left it, merged with what was stored (the SDK sends the same).
        if (!this.current) return;
        response = { payload: { $case: 'task', value: structuredClone(this.current) } };
        break;
      case 'statusUpdate':
        response = { payload: { $case: 'statusUpdate', value: event.data } };
        break;
      case 'artifactUpdate':
        response = { payload: { $case: 'artifactUpdate', value: event.data } };
        break;
      default:
        return;
    }
    this.pending.push({ response, json: JSON.stringify(StreamResponse.toJSON(response)) });
    this.write();
  }

  private write(): void {
    if (this.writing) return;
    this.writing = true;
    void this.writeAll().finally(() => {
      this.writing = false;
      // An event queued after the last round looked, before this ran: its own round.
      if (this.pending.length > 0 && !this.failure) this.write();
      this.wake();
    });
  }

  /**
   * Commits what is pending, round after round. A round's events are taken when the statement carrying them
   * is built (the log's batch goes at the next turn of the event loop): the events a turn publishes together,
   * and those published while an earlier commit is under way, go in one commit.
   */
  private async writeAll(): Promise<void> {
    while (this.pending.length > 0 && !this.failure) {
      let batch: Pending[] | undefined;
      let write: EventWrite | undefined;
      let commit: EventCommit | undefined;
      if (this.current && this.pending.some((p) => p.json !== undefined)) {
        const take = (): EventWrite => {
          if (!batch) {
            batch = this.pending.splice(0);
            write = this.writeOf(batch);
          }
          return write!;
        };
        try {
          commit = await this.ports.commit(take);
        } catch (error) {
          this.lose(error);
          return;
        }
        if (!commit) {
          this.lose(new TakenOverError(this.ref.id));
          return;
        }
      } else {
        batch = this.pending.splice(0);
      }
      // A commit stores the write it took: with none taken it stored nothing of these events.
      if (!batch) {
        this.lose(new Error(`the log answered a commit of task ${this.ref.id} without taking its events`));
        return;
      }
      this.committedRound(batch, write, commit);
    }
  }

  /** The write of a round: the task as its events left it, and their JSON. */
  private writeOf(batch: readonly Pending[]): EventWrite {
    const task = this.current!;
    return {
      ...this.ref,
      contextId: task.contextId,
      state: taskStateToJSON(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED),
      statusTimestamp: toSqlTimestamp(task.status?.timestamp) ?? NO_TIMESTAMP,
      json: JSON.stringify(Task.toJSON(task)),
      events: batch.flatMap((p) => (p.json === undefined ? [] : [p.json])),
    };
  }

  /** Hands a round's events to followers, numbered as its commit stored them (a bare Message unnumbered). */
  private committedRound(batch: readonly Pending[], write: EventWrite | undefined, commit: EventCommit | undefined) {
    const numbered = write?.events.length ?? 0;
    let seq = commit ? commit.last - numbered : this.last;
    const recorded = batch.map((item): RecordedEvent =>
      item.json === undefined || !commit
        ? { seq: undefined, response: item.response }
        : { seq: ++seq, response: withSequence(item.response, seq) },
    );
    this.kept.push(...recorded);
    if (this.kept.length > KEPT_EVENTS) this.kept.splice(0, this.kept.length - KEPT_EVENTS);
    if (commit && write) {
      this.firstSeq ??= commit.last - numbered + 1;
      this.last = commit.last;
      this.committedJson = write.json;
      this.ports.committed(
        recorded.filter((event) => event.seq !== undefined),
        write,
        commit.hasPush,
      );
    }
    const latest = recorded.at(-1);
    if (commit && latest?.seq !== undefined) this.resting = endsAfter(latest.response);
    this.release();
    this.wake();
  }

  private lose(error: unknown): void {
    if (this.failure) return;
    this.failure = error instanceof Error ? error : new Error(`the recording was lost: ${String(error)}`);
    this.pending.length = 0;
    this.stop();
    this.ports.lost(this, this.failure);
  }

  private nextChange(): Promise<void> {
    return new Promise<void>((resolve) => this.wakers.add(resolve));
  }

  private wake(): void {
    const wakers = this.wakers;
    this.wakers = new Set();
    for (const wake of wakers) wake();
  }
}

/** A recording's commit refused: another replica holds the task's run now. */
export class TakenOverError extends Error {
  constructor(taskId: string) {
    super(`task ${taskId} was taken over by another replica`);
    this.name = 'TakenOverError';
  }
}

/**
 * A recording's events after `from`, its loss told as the retryable error a client resumes after: the
 * database away past the turn's wait, or the task taken over by another replica.
 */
export async function* followCommitted(
  recording: TaskRecording,
  from: number | undefined,
): AsyncGenerator<RecordedEvent, void, undefined> {
  try {
    yield* recording.follow(from);
  } catch (err) {
    if (err instanceof TakenOverError) throw new TaskHandoverPendingError(recording.ref.id, 0);
    if (isTransientDatabaseError(err)) throw new DatabaseUnavailableError(err);
    throw err;
  }
}
