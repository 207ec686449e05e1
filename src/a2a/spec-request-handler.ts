import { DefaultRequestHandler, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import type { CancelTaskRequest, StreamResponse, SubscribeToTaskRequest, Task } from '@a2a-js/sdk';
import { TaskState } from '@a2a-js/sdk';
import { TaskNotCancelableError } from '@a2a-js/sdk/errors';

type HandlerArgs = ConstructorParameters<typeof DefaultRequestHandler>;

/** Asks the replica running a task to cancel it; false when no other replica runs it. */
export type RemoteCancel = (taskId: string, context: ServerCallContext) => Promise<boolean>;

/** The live events of a task running on another replica, relayed here (see RemoteTaskEvents). */
export interface RelayedEvents {
  events(): AsyncGenerator<StreamResponse, void, undefined>;
  close(): void;
}

/**
 * Relays the live events of a task that another replica runs, once that replica forwards them;
 * undefined when no other replica runs it (or it did not answer in time).
 */
export type RemoteEvents = (taskId: string, context: ServerCallContext) => Promise<RelayedEvents | undefined>;

/**
 * Told of a task the SDK canceled as it stood (no turn and no bus of it here, none elsewhere): `before`
 * is the task as it was, for what the executor would otherwise have done (count its wait, cancel its plan).
 */
export type CanceledAtRest = (before: Task, context: ServerCallContext) => Promise<void>;

/** How long a CancelTask relayed to another replica waits for the task to show `canceled`. */
const REMOTE_CANCEL_WAIT_MS = 15_000;

/**
 * The SDK's DefaultRequestHandler, with two changes:
 * - the one place where SDK 1.3.0 departs from the A2A spec put back: cancelling a task that is already
 *   canceled answers TaskNotCancelable (-32002), as A2A v1.0 §3.1.5 says ("already completed, failed, or
 *   canceled") and the TCK checks; the SDK returns the task;
 * - a CancelTask for a task running on another replica (no bus here) is relayed to that replica, which
 *   stops the run; the SDK alone would mark the task canceled here while it ran on there (SPEC.md §10);
 * - a SubscribeToTask for a task running on another replica gets that replica's live events, relayed,
 *   after the task as stored; the SDK alone would answer the task and end the stream (SPEC.md §10).
 */
export class SpecRequestHandler extends DefaultRequestHandler {
  private readonly store: TaskStore;
  private readonly buses: HandlerArgs[3];
  private remoteCancel: RemoteCancel | undefined;
  private remoteEvents: RemoteEvents | undefined;
  private canceledAtRest: CanceledAtRest | undefined;

  constructor(...args: HandlerArgs) {
    super(...args);
    this.store = args[1];
    this.buses = args[3];
  }

  relayCancels(remoteCancel: RemoteCancel): void {
    this.remoteCancel = remoteCancel;
  }

  onCanceledAtRest(listener: CanceledAtRest): void {
    this.canceledAtRest = listener;
  }

  relaySubscriptions(remoteEvents: RemoteEvents): void {
    this.remoteEvents = remoteEvents;
  }

  override async *resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    // As the SDK attaches its queue to a local bus before it reads the task, the relay is attached (the
    // running replica acknowledged it) before the SDK reads the task here: no event falls in between.
    // A call the SDK would refuse (no id, an id the database cannot hold) gets the SDK's answer.
    const relay =
      params.id && this.remoteEvents && this.buses?.getByTaskId(params.id, context) === undefined
        ? await this.remoteEvents(params.id, context).catch(() => undefined)
        : undefined;
    if (!relay) {
      yield* super.resubscribe(params, context);
      return;
    }
    try {
      // With no bus here, the SDK checks the call, yields the task as stored and ends (a final task: an error).
      yield* super.resubscribe(params, context);
      yield* relay.events();
    } finally {
      relay.close();
    }
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const task = params.id ? await this.store.load(params.id, context) : undefined;
    if (task?.status?.state === TaskState.TASK_STATE_CANCELED) {
      throw new TaskNotCancelableError(`Task not cancelable: ${params.id}`);
    }
    const atRest = task !== undefined && this.buses?.getByTaskId(task.id, context) === undefined;
    const elsewhere = atRest && this.remoteCancel !== undefined && (await this.remoteCancel(task.id, context));
    if (elsewhere) {
      const deadline = Date.now() + REMOTE_CANCEL_WAIT_MS;
      while (Date.now() < deadline) {
        const now = await this.store.load(task.id, context);
        const state = now?.status?.state;
        if (state === TaskState.TASK_STATE_CANCELED) return now!;
        // It ended otherwise, or waits for input there: the SDK answers as for any such task.
        if (state !== TaskState.TASK_STATE_WORKING && state !== TaskState.TASK_STATE_SUBMITTED) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    const canceled = await super.cancelTask(params, context);
    // With no bus here the SDK stored `canceled` without the executor (a task waiting for its client
    // after a restart, or one another replica watched): what the executor does for it is done here.
    if (atRest && !elsewhere && canceled.status?.state === TaskState.TASK_STATE_CANCELED) {
      await this.canceledAtRest?.(task, context);
    }
    return canceled;
  }
}
