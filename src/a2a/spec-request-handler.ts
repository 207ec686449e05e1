import { DefaultRequestHandler, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import type { CancelTaskRequest, Task } from '@a2a-js/sdk';
import { TaskState } from '@a2a-js/sdk';
import { TaskNotCancelableError } from '@a2a-js/sdk/errors';

type HandlerArgs = ConstructorParameters<typeof DefaultRequestHandler>;

/**
 * The SDK's DefaultRequestHandler, with the one place where SDK 1.3.0 departs from the A2A spec put
 * back: cancelling a task that is already canceled answers TaskNotCancelable (-32002), as A2A v1.0
 * §3.1.5 says ("already completed, failed, or canceled") and the TCK checks; the SDK returns the task.
 */
export class SpecRequestHandler extends DefaultRequestHandler {
  private readonly store: TaskStore;

  constructor(...args: HandlerArgs) {
    super(...args);
    this.store = args[1];
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const task = params.id ? await this.store.load(params.id, context) : undefined;
    if (task?.status?.state === TaskState.TASK_STATE_CANCELED) {
      throw new TaskNotCancelableError(`Task not cancelable: ${params.id}`);
    }
    return super.cancelTask(params, context);
  }
}
