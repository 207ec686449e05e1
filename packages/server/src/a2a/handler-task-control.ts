import { Injectable } from '@nestjs/common';
import type { Message, Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { TaskControl } from '../turn/task-control.js';
import { SpecRequestHandler } from './spec-request-handler.js';

/** Plans start and cancel their tasks, and approvals answer theirs, as a client would: through the request handler. */
@Injectable()
export class HandlerTaskControl implements TaskControl {
  constructor(private readonly handler: SpecRequestHandler) {}

  async start(message: Message, context: ServerCallContext): Promise<Task> {
    const result = await this.handler.sendMessage(
      {
        tenant: context.tenant ?? '',
        message,
        configuration: {
          acceptedOutputModes: [],
          taskPushNotificationConfig: undefined,
          returnImmediately: true,
        },
        metadata: undefined,
      },
      context,
    );
    if (!('status' in result)) throw new Error('The A2A handler answered with a message, not a task');
    return result;
  }

  /** An answer continues its task as a message of the client's would: admitted, recorded, run. */
  answer(message: Message, context: ServerCallContext): Promise<Task> {
    return this.start(message, context);
  }

  cancel(taskId: string, context: ServerCallContext): Promise<Task> {
    return this.handler.cancelTask({ tenant: context.tenant ?? '', id: taskId, metadata: undefined }, context);
  }
}
