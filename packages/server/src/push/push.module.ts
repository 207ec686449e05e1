import { Module } from '@nestjs/common';
import { GuardedPushNotificationSender } from './guarded-push-notification.sender.js';
import { ValidatingPushNotificationStore } from './validating-push-notification.store.js';
import { WebhookUrlGuard } from './webhook-url.guard.js';

/**
 * Push-notification webhooks (docs/protocol.md §8): the webhook guard, the push-config store that runs it before
 * saving (around the database's store), and the guarded sender that delivers notifications through it.
 * One sender per process, so that the notifications of a task go out in order whoever sends them.
 */
@Module({
  providers: [WebhookUrlGuard, ValidatingPushNotificationStore, GuardedPushNotificationSender],
  exports: [WebhookUrlGuard, ValidatingPushNotificationStore, GuardedPushNotificationSender],
})
export class PushModule {}
