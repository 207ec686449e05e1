import { Module } from '@nestjs/common';
import { WebhookUrlGuard } from './webhook-url.guard.js';

/**
 * Push-notification webhooks (SPEC.md §8). Exports the guard; the a2a wiring composes
 * `new ValidatingPushNotificationStore(inner, guard)` and
 * `new GuardedPushNotificationSender(store, guard, config)` around its own store.
 */
@Module({
  providers: [WebhookUrlGuard],
  exports: [WebhookUrlGuard],
})
export class PushModule {}
