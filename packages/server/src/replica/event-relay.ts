import { StreamResponse, TaskState, type Task } from '@a2a-js/sdk';
import { TaskHandoverPendingError } from '../common/domain.errors.js';
import { isFinishedState } from '../database/finished-task.cache.js';
import type { Inbox } from './event-inbox.js';

/** How long a replica waits for the holder to acknowledge a watch before it serves the task as stored. */
export const ACK_WAIT_MS = 5000;
/** The pause between looks for the replica that takes a task over (its bus may not be open yet). */
const REATTACH_PAUSE_MS = 500;

/** A task state after which the SDK's own subscriber stops (ExecutionEventQueue): final, or waiting for input. */
export function endsSubscription(state: TaskState | undefined): boolean {
  return isFinishedState(state) || state === TaskState.TASK_STATE_INPUT_REQUIRED;
}

/** The stored task's status, as the stream event a relay yields. */
export function statusOf(task: Task): StreamResponse {
  return {
    payload: {
      $case: 'statusUpdate',
      value: { taskId: task.id, contextId: task.contextId, status: task.status, metadata: undefined },
    },
  };
}

/** A watch acknowledged by the replica holding the task. */
export interface Attachment {
  holder: string;
  inbox: Inbox;
  detach(): void;
}

/** The live events of a task running on another replica, relayed to this one. */
export interface TaskEventRelay {
  /**
   * The events after the moment the holder attached the watch, in order, as the SDK's subscriber yields
   * them (status, artifact and task events; the stream ends after a final or input-required status).
   * Should the holder go away, the task as stored (`load`) tells what comes next.
   */
  events(): AsyncGenerator<StreamResponse, void, undefined>;
  /** Stops the relay (the subscriber went away): the holder is asked to stop forwarding. */
  close(): void;
}

/** How a relay finds out where its task stands. */
export interface RelaySources {
  /** The task as stored. */
  load(): Promise<Task | undefined>;
  /** The live replica holding the task's lease. */
  holder(): Promise<string | undefined>;
  /** A new watch on `holder`, once acknowledged. */
  attach(holder: string): Promise<Attachment | undefined>;
}

/**
 * One subscription's relay: the events of its current attachment, and what to do when that one fails.
 * With no first attachment (its holder died), it begins by waiting for the replica that takes over.
 */
export class Relay implements TaskEventRelay {
  private current: Attachment | undefined;

  constructor(
    private readonly taskId: string,
    first: Attachment | undefined,
    private readonly leaseMs: number,
    private readonly sources: RelaySources,
  ) {
    this.current = first;
  }

  close(): void {
    this.current?.detach();
    this.current = undefined;
  }

  async *events(): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      if (!this.current && !(yield* this.moved())) return;
      while (this.current) {
        const attachment: Attachment = this.current;
        const item = await attachment.inbox.next(this.leaseMs);
        if (this.current !== attachment) return; // closed meanwhile
        if (item?.type === 'event') {
          const payload = item.response.payload;
          switch (payload?.$case) {
            case 'statusUpdate':
              if (payload.value.taskId !== this.taskId) break;
              yield item.response;
              if (endsSubscription(payload.value.status?.state)) return;
              break;
            case 'artifactUpdate':
              if (payload.value.taskId === this.taskId) yield item.response;
              break;
            case 'task':
              if (payload.value.id === this.taskId) yield item.response;
              break;
            case 'message':
              return;
            default:
              break;
          }
          continue;
        }
        if (item === undefined) {
          // Quiet for a lease period: fine while the same replica holds a task still running.
          if ((await this.sources.holder()) === attachment.holder) {
            const task = await this.sources.load();
            if (!task) return;
            if (!endsSubscription(task.status?.state)) continue;
          }
        }
        // The holder stopped forwarding (`end`), pieces were lost, or the task moved or ended.
        if (!(yield* this.moved())) return;
      }
    } finally {
      this.close();
    }
  }

  /**
   * Where the task went once its holder fell silent or stopped: its final (or input-required) status
   * once it ended, else a watch on the replica that took it over (true). A holder that died is taken over
   * within two lease periods (lease expiry, then a sweep); past three and an acknowledgement's wait, the
   * subscription ends with a retryable error rather than on a status that is not final.
   */
  private async *moved(): AsyncGenerator<StreamResponse, boolean, undefined> {
    this.close();
    const started = Date.now();
    const deadline = started + 3 * this.leaseMs + ACK_WAIT_MS;
    for (;;) {
      const task = await this.sources.load();
      if (!task) return false;
      if (endsSubscription(task.status?.state)) {
        yield statusOf(task);
        return false;
      }
      const holder = await this.sources.holder();
      const next = holder ? await this.sources.attach(holder) : undefined;
      if (next) {
        this.current = next;
        // As on a first subscription: the task as stored once the new holder forwards, then its events.
        const now = await this.sources.load();
        if (!now) return false;
        if (endsSubscription(now.status?.state)) {
          yield statusOf(now);
          return false;
        }
        yield { payload: { $case: 'task', value: now } };
        return true;
      }
      if (Date.now() >= deadline) throw new TaskHandoverPendingError(this.taskId, Date.now() - started);
      await new Promise((resolve) => setTimeout(resolve, REATTACH_PAUSE_MS));
    }
  }
}
