import { Inject, Injectable } from '@nestjs/common';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { PushNotificationStore, ServerCallContext, StoredPushNotificationConfig } from '@a2a-js/sdk/server';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { PushConfigLimitError, TypeOrmPushNotificationStore } from '../database/typeorm-push-notification.store.js';
import { WebhookUrlGuard } from './webhook-url.guard.js';

/**
 * A PushNotificationStore that runs the webhook guard before saving, so a refused URL is never
 * stored (the caller gets -32602 instead), and answers a save past the per-task cap with -32602 too. Everything else goes to the inner store unchanged.
 */
@Injectable()
export class ValidatingPushNotificationStore implements PushNotificationStore {
  /** Present exactly when the inner store has it, so the sender keeps each config's wire version. */
  readonly loadWithMetadata?: (taskId: string, context: ServerCallContext) => Promise<StoredPushNotificationConfig[]>;

  constructor(
    @Inject(TypeOrmPushNotificationStore) private readonly inner: PushNotificationStore,
    private readonly guard: WebhookUrlGuard,
  ) {
    const loadWithMetadata = inner.loadWithMetadata?.bind(inner);
    if (loadWithMetadata) this.loadWithMetadata = (taskId, context) => loadWithMetadata(taskId, context);
  }

  async save(
    taskId: string,
    context: ServerCallContext,
    pushNotificationConfig: TaskPushNotificationConfig,
  ): Promise<void> {
    await this.guard.assertAllowed(pushNotificationConfig.url);
    try {
      // Same object: the inner store assigns a missing id in place, as the SDK contract requires.
      await this.inner.save(taskId, context, pushNotificationConfig);
    } catch (err) {
      if (!(err instanceof PushConfigLimitError)) throw err;
      throw new RequestMalformedError({
        message: `Invalid push notification config: task ${taskId} already holds ${err.limit} configs; delete one first`,
        metadata: { field: 'taskId', limit: String(err.limit), setting: 'CLEVERAGENTS_MAX_PUSH_CONFIGS_PER_TASK' },
      });
    }
  }

  load(taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return this.inner.load(taskId, context);
  }

  delete(taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
    return this.inner.delete(taskId, context, configId);
  }
}
