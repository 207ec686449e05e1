import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { PushNotificationStore, ServerCallContext, StoredPushNotificationConfig } from '@a2a-js/sdk/server';
import type { WebhookUrlGuard } from './webhook-url.guard.js';

/**
 * A PushNotificationStore that runs the webhook guard before saving, so a refused URL is never
 * stored (the caller gets -32602 instead). Everything else goes to the inner store unchanged.
 */
export class ValidatingPushNotificationStore implements PushNotificationStore {
  /** Present exactly when the inner store has it, so the sender keeps each config's wire version. */
  readonly loadWithMetadata?: (taskId: string, context: ServerCallContext) => Promise<StoredPushNotificationConfig[]>;

  constructor(
    private readonly inner: PushNotificationStore,
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
    // Same object: the inner store assigns a missing id in place, as the SDK contract requires.
    await this.inner.save(taskId, context, pushNotificationConfig);
  }

  load(taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return this.inner.load(taskId, context);
  }

  delete(taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
    return this.inner.delete(taskId, context, configId);
  }
}
