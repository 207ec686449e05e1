import { DefaultRequestHandler, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import type { CancelTaskRequest, Task } from '@a2a-js/sdk';
import { TaskState } from '@a2a-js/sdk';
import { TaskNotCancelableError } from '@a2a-js/sdk/errors';

type HandlerArgs = ConstructorParameters<typeof DefaultRequestHandler>;

/** Asks the replica running a task to cancel it; false when no other replica runs it. */
export type RemoteCancel = (taskId: string, context: ServerCallContext) => Promise<boolean>;

/** How long a CancelTask relayed to another replica waits for the task to show `canceled`. */
const REMOTE_CANCEL_WAIT_MS = 15_000;

/**
 * The SDK's DefaultRequestHandler, with two changes:
 * - the one place where SDK 1.3.0 departs from the A2A spec put back: cancelling a task that is already
 *   canceled answers TaskNotCancelable (-32002), as A2A v1.0 §3.1.5 says ("already completed, failed, or
 *   canceled") and the TCK checks; the SDK returns the task;
 * - a CancelTask for a task running on another replica (no bus here) is relayed to that replica, which
 *   stops the run; the SDK alone would mark the task canceled here while it ran on there (SPEC.md §10).
 */
export class SpecRequestHandler extends DefaultRequestHandler {
  private readonly store: TaskStore;
  private readonly buses: HandlerArgs[3];
  private remoteCancel: RemoteCancel | undefined;

  constructor(...args: HandlerArgs) {
    super(...args);
    this.store = args[1];
    this.buses = args[3];
  }

  relayCancels(remoteCancel: RemoteCancel): void {
    this.remoteCancel = remoteCancel;
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const task = params.id ? await this.store.load(params.id, context) : undefined;
    if (task?.status?.state === TaskState.TASK_STATE_CANCELED) {
      throw new TaskNotCancelableError(`Task not cancelable: ${params.id}`);
    }
    const elsewhere =
      task !== undefined &&
      this.remoteCancel !== undefined &&
      this.buses?.getByTaskId(task.id, context) === undefined &&
      (await this.remoteCancel(task.id, context));
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
    return super.cancelTask(params, context);
  }
}
