import type { Message, Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';

/**
 * What `plan/execute`, `plan/cancel` and `approval/answer` do to tasks: start, cancel and answer them
 * through the A2A request handler, as a client's call would (stored, streamed and relayed like any task). Declared here, where
 * turns run; the transport provides it (its request handler sits above the turns).
 */
export abstract class TaskControl {
  abstract start(message: Message, context: ServerCallContext): Promise<Task>;
  abstract cancel(taskId: string, context: ServerCallContext): Promise<Task>;
  /** Sends `message` to the waiting task it names (an approval's answer), as a client's SendMessage would. */
  abstract answer(message: Message, context: ServerCallContext): Promise<Task>;
}
