import { createHmac, randomBytes } from 'node:crypto';
import type http from 'node:http';
import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { DataSource } from 'typeorm';
import type {
  ApprovalView,
  ApprovalWebhookDelivery,
  ApprovalWebhookView,
  CreatedApprovalWebhook,
} from '@cleveragents/contract';
import { AuditLog } from '../audit/audit-log.service.js';
import type { Acting } from '../common/actor.js';
import { ValidationError } from '../common/domain.errors.js';
import { ulid } from '../common/ulid.js';
import { AppConfig } from '../config/app.config.js';
import {
  GUARDED_PUSH_SENDER_OPTIONS,
  type GuardedPushSenderOptions,
} from '../push/guarded-push-notification.sender.js';
import { GuardedWebhookPoster } from '../push/guarded-webhook.poster.js';
import { OutboundMetrics } from '../metrics/outbound-metrics.js';
import { WebhookUrlGuard } from '../push/webhook-url.guard.js';
import { ApprovalEvents } from '../approval-store/approval-events.js';
import { ApprovalLinks } from './approval-links.js';
import { webhookNotFound } from './approval-webhook.errors.js';
import { approvalRequestedPayload } from './approval-webhook.payload.js';
import { ApprovalWebhookRepository, type OpenedWebhook } from './approval-webhook.repository.js';

/** The header a delivery's signature travels in: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const SIGNATURE_HEADER = 'X-CleverAgents-Signature';
/** The same for every attempt of one delivery (the webhook's id and the approval's): receivers dedupe on it. */
export const DELIVERY_HEADER = 'X-CleverAgents-Delivery';
const CAP_SETTING = 'CLEVERAGENTS_MAX_APPROVAL_WEBHOOKS_PER_NAMESPACE';
const GUARD_PREFIX = /^Invalid push notification config: /;

/** The signature header's value for `body`, signed with `secret` at `at`. */
export function signatureOf(secret: string, body: string, at: Date): string {
  const t = Math.floor(at.getTime() / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest('hex');
  return `t=${t},v1=${v1}`;
}

/**
 * A namespace's approval webhooks (docs/plans.md#approval-webhooks): registered by its admins and owners through
 * the task push guard, sealed at rest, capped; every approval newly asked in the namespace is posted to each,
 * after the approval is committed and without the gate waiting, retried as task push notifications are.
 */
@Injectable()
export class ApprovalWebhooks implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown {
  private readonly logger = new Logger(ApprovalWebhooks.name);
  private readonly poster: GuardedWebhookPoster;
  private readonly inFlight = new Set<Promise<void>>();
  private stopListening?: () => void;

  constructor(
    private readonly dataSource: DataSource,
    private readonly webhooks: ApprovalWebhookRepository,
    private readonly guard: WebhookUrlGuard,
    private readonly links: ApprovalLinks,
    private readonly events: ApprovalEvents,
    private readonly audit: AuditLog,
    @Inject(AppConfig) private readonly config: AppConfig,
    metrics: OutboundMetrics,
    @Optional() @Inject(GUARDED_PUSH_SENDER_OPTIONS) options: GuardedPushSenderOptions = {},
  ) {
    // Counted with the push deliveries (cleveragents_push_deliveries{outcome}, the push retries).
    this.poster = new GuardedWebhookPoster(guard, config, options, this.logger, metrics);
  }

  onModuleInit(): void {
    this.stopListening = this.events.onRequested((approval) => this.track(this.deliver(approval)));
  }

  onModuleDestroy(): void {
    this.stopListening?.();
  }

  /** Lets deliveries under way finish (within the shutdown grace) before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.drained(this.config.shutdownGraceMs);
  }

  /** Registers a webhook: its URL vetted now (and again at each delivery), its secret made, shown once. */
  async create(namespace: string, url: string, by: Acting): Promise<CreatedApprovalWebhook> {
    let origin: string;
    try {
      origin = (await this.guard.vet(url)).url.origin;
    } catch (error) {
      const description = (error instanceof Error ? error.message : String(error)).replace(GUARD_PREFIX, '');
      throw new ValidationError([{ field: 'url', description }]);
    }
    const secret = `whsec_${randomBytes(32).toString('base64url')}`;
    const limit = this.config.maxApprovalWebhooksPerNamespace;
    const view = await this.dataSource.transaction(async (manager) => {
      await this.webhooks.lockNamespace(manager, namespace);
      if ((await this.webhooks.count(manager, namespace)) >= limit) {
        throw new ValidationError([
          {
            field: 'namespace',
            description: `namespace ${namespace} holds at most ${limit} approval webhooks (${CAP_SETTING}); delete one first`,
          },
        ]);
      }
      const created = await this.webhooks.insert(manager, {
        id: ulid(),
        namespace,
        origin,
        url,
        secret,
        createdBy: by.actor.subject,
      });
      await this.audit.record(manager, {
        namespace,
        actor: by.actor.subject,
        action: 'approval.webhook.create',
        target: created.id,
        details: { origin },
        requestId: by.requestId,
      });
      return created;
    });
    return { ...view, secret };
  }

  list(namespace: string): Promise<ApprovalWebhookView[]> {
    return this.webhooks.list(namespace);
  }

  /** Deletes a webhook of the namespace: -32001 WEBHOOK_NOT_FOUND when it holds none of that id. */
  delete(namespace: string, id: string, by: Acting): Promise<ApprovalWebhookView> {
    return this.dataSource.transaction(async (manager) => {
      const deleted = await this.webhooks.delete(manager, namespace, id.toUpperCase());
      if (!deleted) throw webhookNotFound(namespace, id);
      await this.audit.record(manager, {
        namespace,
        actor: by.actor.subject,
        action: 'approval.webhook.delete',
        target: deleted.id,
        details: { origin: deleted.origin },
        requestId: by.requestId,
      });
      return deleted;
    });
  }

  /**
   * Resolves true once no delivery is under way (those started meanwhile included), false when `timeoutMs`
   * passes first.
   */
  async drained(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const settled = async (): Promise<true> => {
      while (this.inFlight.size > 0) await Promise.all(this.inFlight);
      return true;
    };
    try {
      return await Promise.race([settled(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private track(delivery: Promise<void>): void {
    this.inFlight.add(delivery);
    void delivery.finally(() => this.inFlight.delete(delivery));
  }

  /** Posts `approval` to each webhook of its namespace; never rejects (what fails is logged and recorded). */
  private async deliver(approval: ApprovalView): Promise<void> {
    let webhooks: OpenedWebhook[];
    try {
      webhooks = await this.webhooks.opened(approval.namespace);
    } catch (error) {
      this.logger.error({
        msg: 'approval webhooks could not be loaded',
        namespace: approval.namespace,
        approvalId: approval.approvalId,
        error: error instanceof Error ? error.message : String(error),
      });
      return;
    }
    if (webhooks.length === 0) return;
    const body = JSON.stringify(
      approvalRequestedPayload(approval, this.links.linkTo(approval.namespace, approval.approvalId)),
    );
    await Promise.all(webhooks.map((webhook) => this.deliverTo(webhook, approval, body)));
  }

  private async deliverTo(webhook: OpenedWebhook, approval: ApprovalView, body: string): Promise<void> {
    const { id, namespace, origin } = webhook.view;
    const headers: http.OutgoingHttpHeaders = {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      'User-Agent': 'CleverAgents-Webhook',
      [SIGNATURE_HEADER]: signatureOf(webhook.secret, body, new Date()),
      [DELIVERY_HEADER]: `${id}.${approval.approvalId}`,
    };
    const outcome = await this.poster.post({
      url: webhook.url,
      headers,
      body,
      what: 'approval webhook',
      event: 'approval-requested',
      where: { namespace, webhookId: id, origin, approvalId: approval.approvalId },
    });
    const delivery: ApprovalWebhookDelivery = {
      at: new Date().toISOString(),
      ok: outcome.delivered,
      approvalId: approval.approvalId,
      attempts: outcome.attempts,
      status: outcome.status,
      error: outcome.delivered ? null : outcome.reason,
    };
    try {
      await this.webhooks.recordDelivery(namespace, id, delivery);
    } catch (error) {
      this.logger.warn({
        msg: 'approval webhook delivery could not be recorded',
        namespace,
        webhookId: id,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}
