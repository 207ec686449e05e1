import { Injectable } from '@nestjs/common';
import { Task, type StreamResponse } from '@a2a-js/sdk';
import { TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { EventsExpiredError, ValidationError } from '../common/domain.errors.js';
import { LAST_SEQUENCE_PARAM, SEQUENCE_KEY } from '@cleveragents/contract';
import { isFinishedState } from '../database/finished-task.cache.js';
import { ownerCallContext, type StoreScope } from '../database/store-scope.js';
import { TaskEventLog, type TaskRef } from '../database/task-event-log.js';
import { TypeOrmTaskStore } from '../database/typeorm-task.store.js';
import { SessionEventBuses } from '../turn/session-event-buses.js';
import {
  endsAfter,
  endsStream,
  followCommitted,
  recordedOf,
  withSequence,
  type TaskRecording,
} from '../turn/task-recording.js';
import type { TaskEventRelay } from './event-relay.js';
import { RemoteTaskEvents } from './remote-task-events.js';

/** The sequence number a stream event carries (docs/protocol.md §10.1), if any. */
function sequenceOf(response: StreamResponse): number | undefined {
  const seq: unknown = response.payload?.value.metadata?.[SEQUENCE_KEY];
  return typeof seq === 'number' ? seq : undefined;
}

/**
 * SubscribeToTask wherever the task runs (docs/protocol.md §10, §10.1): from its recording here, from the log
 * and another replica's relayed events, or from `lastSequence` on; every event once, in order, numbered.
 */
@Injectable()
export class TaskSubscriptions {
  constructor(
    private readonly buses: SessionEventBuses,
    private readonly log: TaskEventLog,
    private readonly tasks: TypeOrmTaskStore,
    private readonly remoteEvents: RemoteTaskEvents,
  ) {}

  /**
   * A task whose recording is here: the task as last committed, carrying the number of the last event it
   * includes, then the events after it. A task that has ended is refused, as the SDK does.
   */
  async *here(recording: TaskRecording, id: string): AsyncGenerator<StreamResponse, void, undefined> {
    await recording.settled();
    const held = recording.task;
    const at = recording.position;
    const { task, last } =
      held && at !== undefined ? { task: held, last: at } : await this.storedSnapshot(recording.ref, id);
    refuseFinished(task);
    yield withSequence({ payload: { $case: 'task', value: task } }, last);
    for await (const event of followCommitted(recording, last)) yield event.response;
  }

  /**
   * A task with no recording here: as stored, then (running on another replica) its relayed events. As the SDK
   * attaches its queue to a local bus before it reads the task, the relay is attached (the running replica
   * acknowledged it) before the task is read here; what falls between is in the log.
   */
  async *elsewhere(scope: StoreScope, taskId: string): AsyncGenerator<StreamResponse, void, undefined> {
    const ref = { namespace: scope.namespace, owner: scope.owner, id: taskId };
    const relay = await this.openRelay(scope, taskId);
    try {
      const { task, last } = await this.storedSnapshot(ref, taskId);
      refuseFinished(task);
      yield withSequence({ payload: { $case: 'task', value: task } }, last);
      if (relay) yield* this.relayed(ref, relay, last);
    } finally {
      relay?.close();
    }
  }

  /**
   * SubscribeToTask with `lastSequence` (or `Last-Event-ID`): the stored events after it, then the live ones,
   * each once, no snapshot. A task that rests and whose last event the client saw ends at once; events no
   * longer stored are refused with EVENTS_EXPIRED, never skipped.
   */
  async *resume(scope: StoreScope, taskId: string, after: number): AsyncGenerator<StreamResponse, void, undefined> {
    const ref = { namespace: scope.namespace, owner: scope.owner, id: taskId };
    const bounds = await this.log.bounds(ref);
    if (!bounds) throw new TaskNotFoundError(`Task not found: ${taskId}`);
    if (after > bounds.last) {
      throw new ValidationError([
        { field: LAST_SEQUENCE_PARAM, description: `is past the last event of task ${taskId} (${bounds.last})` },
      ]);
    }
    if (after < bounds.last && (bounds.oldest === undefined || bounds.oldest > after + 1)) {
      throw new EventsExpiredError(taskId, after, bounds.oldest ?? bounds.last + 1);
    }
    let seen = after;
    const mark = (seq: number): void => {
      seen = seq;
    };
    // The stored events first, until the log is read to its end as it stood.
    if (seen < bounds.last && (yield* this.storedAfter(ref, seen, mark, bounds.last))) return;
    const recording = this.buses.recordingOf(scope, taskId);
    if (recording) {
      for await (const event of followCommitted(recording, seen)) yield event.response;
      return;
    }
    // Not running here: as stored, then (on another replica) relayed, each event once.
    const task = await this.tasks.load(taskId, ownerCallContext(scope));
    const relay = task && !endsStream(task.status?.state) ? await this.openRelay(scope, taskId) : undefined;
    if (relay) yield* this.relayed(ref, relay, seen);
    else yield* this.storedAfter(ref, seen);
  }

  private openRelay(scope: StoreScope, taskId: string): Promise<TaskEventRelay | undefined> {
    const context = ownerCallContext(scope);
    return this.remoteEvents.open(scope, taskId, () => this.tasks.load(taskId, context)).catch(() => undefined);
  }

  /** The task as stored with the number of the last event it includes: what a subscription starts with. */
  private async storedSnapshot(ref: TaskRef, id: string): Promise<{ task: Task; last: number }> {
    const stored = await this.log.snapshot(ref);
    if (!stored) throw new TaskNotFoundError(`Task not found: ${id}`);
    return { task: Task.fromJSON(stored.task), last: stored.last };
  }

  /**
   * The events of a task another replica runs, after `after`: first what the log holds, then the relayed
   * events, each once and in order. A relayed event beyond the next number has the ones between filled from
   * the log; a relay's own snapshot or end is replaced by what the log holds, so every event carries its number.
   */
  private async *relayed(
    ref: TaskRef,
    relay: TaskEventRelay,
    after: number,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    let seen = after;
    const mark = (seq: number): void => {
      seen = seq;
    };
    try {
      if (yield* this.storedAfter(ref, seen, mark)) return;
      for await (const response of relay.events()) {
        const seq = sequenceOf(response);
        if (seq === undefined) {
          if ((yield* this.storedAfter(ref, seen, mark)) || endsAfter(response)) return;
          continue;
        }
        if (seq <= seen) continue;
        if (seq > seen + 1 && (yield* this.storedAfter(ref, seen, mark, seq - 1))) return;
        seen = seq;
        yield response;
        if (endsAfter(response)) return;
      }
    } finally {
      relay.close();
    }
  }

  /**
   * The stored events of `ref` after `after` (up to `until`), each as a stream sends it, each number told to
   * `seen`. True when one of them ends the stream.
   */
  private async *storedAfter(
    ref: TaskRef,
    after: number,
    seen?: (seq: number) => void,
    until = Number.MAX_SAFE_INTEGER,
  ): AsyncGenerator<StreamResponse, boolean, undefined> {
    let last = after;
    for (;;) {
      const page = (await this.log.after(ref, last)).filter((stored) => stored.seq <= until);
      if (page.length === 0) return false;
      for (const stored of page) {
        const event = recordedOf(stored);
        yield event.response;
        last = stored.seq;
        seen?.(last);
        if (endsAfter(event.response)) return true;
      }
    }
  }
}

/** A subscription without `lastSequence` to a task that ended is refused, as the SDK does. */
function refuseFinished(task: Task): void {
  if (isFinishedState(task.status?.state)) {
    throw new UnsupportedOperationError(
      `Task ${task.id} is in a terminal state (${task.status?.state}) and cannot be subscribed to.`,
    );
  }
}
