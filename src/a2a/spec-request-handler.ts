import { DefaultRequestHandler, type ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import type { CancelTaskRequest, Message, SendMessageRequest, Task } from '@a2a-js/sdk';
import { TaskState } from '@a2a-js/sdk';
import { TaskNotCancelableError } from '@a2a-js/sdk/errors';

type HandlerArgs = ConstructorParameters<typeof DefaultRequestHandler>;

/**
 * Decides the context of a message that starts a task, before the SDK creates it: returns the
 * contextId to use (a new session's, or the one named), or throws a domain error (a closed session).
 */
export type MessageAdmission = (message: Message, context: ServerCallContext) => Promise<string>;

/**
 * The SDK's DefaultRequestHandler with two additions:
 * - cancelling a task that is already canceled answers TaskNotCancelable (-32002), as A2A v1.0
 *   §3.1.5 says ("already completed, failed, or canceled") and the TCK checks; the SDK returns the task;
 * - a message that starts a task is admitted first (sessions: SPEC.md §6.4), so that a closed session
 *   answers with an error instead of a task, and a new context gets its session and a ULID.
 */
export class SpecRequestHandler extends DefaultRequestHandler {
  private readonly store: TaskStore;
  private admission: MessageAdmission | undefined;

  constructor(...args: HandlerArgs) {
    super(...args);
    this.store = args[1];
  }

  admitMessages(admission: MessageAdmission): void {
    this.admission = admission;
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const task = params.id ? await this.store.load(params.id, context) : undefined;
    if (task?.status?.state === TaskState.TASK_STATE_CANCELED) {
      throw new TaskNotCancelableError(`Task not cancelable: ${params.id}`);
    }
    return super.cancelTask(params, context);
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext) {
    return super.sendMessage(await this.admit(params, context), context);
  }

  override async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext) {
    yield* super.sendMessageStream(await this.admit(params, context), context);
  }

  private async admit(params: SendMessageRequest, context: ServerCallContext): Promise<SendMessageRequest> {
    const message = params.message;
    // A follow-up names its task, whose context is settled; the SDK checks the rest.
    if (!this.admission || !message || message.taskId || !message.messageId) return params;
    const contextId = await this.admission(message, context);
    return contextId === message.contextId ? params : { ...params, message: { ...message, contextId } };
  }
}
