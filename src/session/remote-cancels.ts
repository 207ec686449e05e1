import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DatabaseNotifications, type ChannelSubscription } from '../database/database-notifications.js';
import type { SessionScope } from './session.service.js';
import { SessionWorkflow } from './session.workflow.js';
import { TaskRuns } from './task-runs.js';

/** The channel on which a replica asks the one running a task to cancel it. */
export const TASK_CANCEL_CHANNEL = 'cleveragents_task_cancel';

interface CancelRequest extends SessionScope {
  taskId: string;
  replica: string;
}

/**
 * CancelTask across replicas (SPEC.md §10): a CancelTask that reaches a replica not running the task
 * asks the replica holding the task's lease, through a database notification, to stop the turn; that
 * replica cancels it as if the call had reached it (its own stream stores the final `canceled`).
 */
@Injectable()
export class RemoteCancels implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RemoteCancels.name);
  private subscription: ChannelSubscription | undefined;

  constructor(
    private readonly notifications: DatabaseNotifications,
    private readonly workflow: SessionWorkflow,
    private readonly runs: TaskRuns,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = await this.notifications.listen(TASK_CANCEL_CHANNEL, {
      notify: (payload) => this.heard(payload),
      reset: () => undefined,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription?.close();
  }

  /**
   * Asks the replica running `taskId` to cancel it. False when no other live replica runs it (then the
   * caller cancels the task as it stands).
   */
  async requestElsewhere(scope: SessionScope, taskId: string): Promise<boolean> {
    const holder = await this.runs.holderOf(scope, taskId);
    if (!holder || holder === this.runs.replica || !this.subscription) return false;
    const request: CancelRequest = { ...scope, taskId, replica: holder };
    await this.subscription.notify(JSON.stringify(request));
    return true;
  }

  private heard(payload: string): void {
    let request: CancelRequest;
    try {
      request = JSON.parse(payload) as CancelRequest;
    } catch {
      return;
    }
    if (request.replica !== this.runs.replica) return;
    const scope = { namespace: request.namespace, owner: request.owner };
    if (this.workflow.cancelHere(scope, request.taskId)) {
      this.logger.log({ msg: 'task canceled at the request of another replica', taskId: request.taskId });
    }
  }
}
