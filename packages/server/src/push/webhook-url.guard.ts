import { Injectable, Logger } from '@nestjs/common';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { INPUT_LIMITS } from '../common/input-limits.js';
import { AppConfig } from '../config/app.config.js';
import {
  OutboundUrlPolicy,
  OutboundUrlRefusal,
  systemResolver,
  type VettedTarget,
} from '../common/outbound/outbound-url.policy.js';

const ALLOW_LIST_SETTING = 'CLEVERAGENTS_PUSH_ALLOWED_HOSTS';

/** A webhook URL that passed the guard, with the addresses it may be delivered to. */
export type VettedWebhook = VettedTarget;

/**
 * Refuses push-notification URLs that would let a client make the server call into its own network
 * (SSRF): loopback, private, link-local, metadata and other non-public addresses, unless the operator
 * admits the host name, the address or a CIDR block containing it in CLEVERAGENTS_PUSH_ALLOWED_HOSTS.
 * Refusals are the SDK's RequestMalformedError, i.e. A2A -32602 invalid params.
 */
@Injectable()
export class WebhookUrlGuard {
  private readonly logger = new Logger(WebhookUrlGuard.name);
  private readonly policy: OutboundUrlPolicy;

  constructor(config: AppConfig) {
    this.policy = new OutboundUrlPolicy(config.pushAllowedHosts, {
      publicHosts: true,
      resolve: (host) => this.resolveHost(host),
    });
  }

  /** Throws RequestMalformedError (-32602) naming `url` when the webhook URL is not admissible. */
  async assertAllowed(url: string): Promise<void> {
    await this.vet(url);
  }

  /** Checks the URL now (resolving its host) and returns the addresses it may be delivered to. */
  async vet(url: string): Promise<VettedWebhook> {
    if (url.length > INPUT_LIMITS.webhookUrl) {
      throw refusal(`url may be at most ${INPUT_LIMITS.webhookUrl} characters long`);
    }
    try {
      return await this.policy.vet(url);
    } catch (error) {
      if (!(error instanceof OutboundUrlRefusal)) throw error;
      // The client is told less than this (no resolved address); the operator reads it here.
      if (error.detail !== error.message) this.logger.warn(`Refused a webhook URL: ${error.detail}`);
      throw refusal(error.message);
    }
  }

  /** Every address the host name resolves to (the system resolver, as the HTTP client would use). */
  protected resolveHost(host: string): Promise<readonly { address: string; family: number }[]> {
    return systemResolver(host);
  }
}

function refusal(reason: string): RequestMalformedError {
  return new RequestMalformedError({
    message:
      `Invalid push notification config: ${reason}. Webhooks may not target loopback, private, ` +
      `link-local or metadata addresses unless the operator admits the host in ${ALLOW_LIST_SETTING}.`,
    metadata: { field: 'url', setting: ALLOW_LIST_SETTING },
  });
}
