import type { Message, Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';

/**
 * What `plan/execute` and `plan/cancel` do to tasks: start and cancel them through the A2A request
 * handler, as a client's call would (stored, streamed and relayed like any task). Declared here, where
 * turns run; the transport provides it (its request handler sits above the turns).
 */
export abstract class TaskControl {
  abstract start(message: Message, context: ServerCallContext): Promise<Task>;
  abstract cancel(taskId: string, context: ServerCallContext): Promise<Task>;
}
