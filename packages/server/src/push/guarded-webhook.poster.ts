import http from 'node:http';
import https from 'node:https';
import { Logger } from '@nestjs/common';
import type { Attributes, Context, Span } from '@opentelemetry/api';
import { pinnedLookup } from '../common/outbound/outbound-url.policy.js';
import type { AppConfig } from '../config/app.config.js';
import {
  statusRetryReason,
  type DeliveryOutcome,
  type OutboundMetrics,
  type RetryReason,
} from '../metrics/outbound-metrics.js';
import {
  CA_WEBHOOK_EVENT,
  HTTP_REQUEST_METHOD,
  HTTP_REQUEST_RESEND_COUNT,
  HTTP_RESPONSE_STATUS_CODE,
  URL_SCHEME,
} from '../telemetry/attributes.js';
import {
  failOutbound,
  inClientSpan,
  outgoingTraceHeaders,
  serverAttributes,
  spanUrlScheme,
} from '../telemetry/outbound.js';
import type { VettedWebhook, WebhookUrlGuard } from './webhook-url.guard.js';

/** The back-off of retries (tests shorten it). */
export interface GuardedPushSenderOptions {
  /** First back-off delay; doubled on each retry (with jitter). Default 250 ms. */
  retryBaseDelayMs?: number;
  /** Upper bound of one back-off delay. Default 10 s. */
  maxRetryDelayMs?: number;
}

/** How one attempt failed: an HTTP status, the connection (or its timeout), a request Node refused to make. */
type Failure = 'status' | 'network' | 'timeout' | 'invalid';

/** What one POST came to. */
type Sent =
  { ok: true; status: number } | { ok: false; retryable: boolean; reason: string; status?: number; failure: Failure };

/** One attempt: a POST made, or its URL refused before it. */
type Attempt = Sent | { ok: false; refused: string };

/** How one delivery ended, after its retries. */
export type WebhookOutcome =
  | { delivered: true; status: number; attempts: number }
  | { delivered: false; status: number | null; attempts: number; reason: string };

/** One webhook call: what to post, where, and what to log it as (`what`, and fields naming it; never a secret). */
export interface WebhookPost {
  url: string;
  headers: http.OutgoingHttpHeaders;
  body: string;
  /** How log lines name the kind of call: `push notification`, `approval webhook`. */
  what: string;
  where: Record<string, unknown>;
  /** The event it carries, a label from a fixed set (span `push <event>`); `webhook` unless given. */
  event?: string;
  /** The context its spans are children of (the task's, captured when the event was published); the active one unless given. */
  parent?: Context;
  /** More attributes of its spans (our own ids, never the receiver's). */
  attributes?: Attributes;
}

/**
 * One POST to a webhook through the SSRF guard, retried with back-off: the URL is vetted again before every
 * attempt and the connection made to the address it vetted (no second resolution a rebinding DNS could answer
 * differently), redirects are not followed, 429 and 5xx and network errors are retried at most
 * CLEVERAGENTS_PUSH_RETRIES times, each attempt bounded by CLEVERAGENTS_PUSH_TIMEOUT_MS. Task push notifications
 * and approval webhooks are delivered through it alike.
 */
export class GuardedWebhookPoster {
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly retryBaseDelayMs: number;
  private readonly maxRetryDelayMs: number;

  constructor(
    private readonly guard: WebhookUrlGuard,
    config: Pick<AppConfig, 'pushTimeoutMs' | 'pushRetries'>,
    options: GuardedPushSenderOptions = {},
    private readonly logger: Logger = new Logger(GuardedWebhookPoster.name),
    /** cleveragents_push_deliveries, _delivery_duration_seconds and the retries; none when not given. */
    private readonly metrics?: OutboundMetrics,
  ) {
    this.timeoutMs = config.pushTimeoutMs;
    this.retries = config.pushRetries;
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? 250;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 10_000;
  }

  /**
   * Delivers `post`, or gives up on it; never rejects. Each attempt is a CLIENT span `push <event>` whose
   * context the request carries (W3C traceparent), so that the receiver can continue the trace.
   */
  async post(post: WebhookPost): Promise<WebhookOutcome> {
    const started = performance.now();
    const [outcome, kind] = await this.deliver(post);
    this.metrics?.delivered(kind, (performance.now() - started) / 1000);
    return outcome;
  }

  private async deliver(post: WebhookPost): Promise<[WebhookOutcome, DeliveryOutcome]> {
    const { what, where } = post;
    const event = post.event ?? 'webhook';
    const scheme = spanUrlScheme(post.url);
    const attributes: Attributes = {
      [HTTP_REQUEST_METHOD]: 'POST',
      ...(scheme === undefined ? {} : { [URL_SCHEME]: scheme }),
      ...serverAttributes(post.url),
      [CA_WEBHOOK_EVENT]: event,
      ...post.attributes,
    };
    let lastStatus: number | null = null;
    for (let attempt = 1; ; attempt++) {
      const spanAttributes = attempt > 1 ? { ...attributes, [HTTP_REQUEST_RESEND_COUNT]: attempt - 1 } : attributes;
      const result = await inClientSpan(`push ${event}`, spanAttributes, (span) => this.once(post, span), {
        parent: post.parent,
      });
      if ('refused' in result) {
        const reason = `webhook URL not admissible: ${result.refused}`;
        this.logger.warn({ msg: `${what} refused: webhook URL not admissible`, ...where, reason: result.refused });
        return [{ delivered: false, status: lastStatus, attempts: attempt - 1, reason }, 'refused'];
      }
      if (result.ok) {
        this.logger.debug({ msg: `${what} delivered`, ...where, status: result.status, attempt });
        return [{ delivered: true, status: result.status, attempts: attempt }, 'delivered'];
      }
      lastStatus = result.status ?? null;
      if (!result.retryable || attempt > this.retries) {
        this.logger.warn({ msg: `${what} failed`, ...where, attempt, reason: result.reason });
        const kind =
          result.failure === 'status' ? 'http_error' : result.failure === 'invalid' ? 'invalid' : 'network_error';
        return [{ delivered: false, status: lastStatus, attempts: attempt, reason: result.reason }, kind];
      }
      this.logger.debug({ msg: `${what} attempt failed; retrying`, ...where, attempt, reason: result.reason });
      this.metrics?.retried('push', retryReason(result.failure, result.status));
      await delay(this.backoff(attempt));
    }
  }

  /** One attempt inside its span: the URL vetted again, then the POST carrying the span's trace context. */
  private async once(post: WebhookPost, span: Span): Promise<Attempt> {
    let target: VettedWebhook;
    try {
      target = await this.guard.vet(post.url);
    } catch (error) {
      failOutbound(span, 'url_refused');
      return { ok: false, refused: describe(error) };
    }
    const result = await this.attempt(target, { ...post.headers, ...outgoingTraceHeaders() }, post.body);
    if (result.ok) {
      span.setAttribute(HTTP_RESPONSE_STATUS_CODE, result.status);
    } else if (result.status === undefined) {
      failOutbound(span, result.failure);
    } else {
      span.setAttribute(HTTP_RESPONSE_STATUS_CODE, result.status);
      failOutbound(span, String(result.status));
    }
    return result;
  }

  private attempt(target: VettedWebhook, headers: http.OutgoingHttpHeaders, body: string): Promise<Sent> {
    const { url } = target;
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<Sent>((resolve) => {
      let request: http.ClientRequest;
      try {
        request = client.request(
          {
            method: 'POST',
            protocol: url.protocol,
            hostname: target.host,
            port: url.port || undefined,
            path: `${url.pathname}${url.search}`,
            headers,
            agent: false,
            // Connect to the address the guard just vetted, never to a fresh resolution of the name.
            lookup: pinnedLookup(target),
          },
          (response) => {
            response.resume();
            resolve(classify(response.statusCode ?? 0));
          },
        );
      } catch (error) {
        // e.g. a header value Node refuses (a stored credential with CR/LF): retrying cannot help.
        resolve({ ok: false, retryable: false, reason: describe(error), failure: 'invalid' });
        return;
      }
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        request.destroy(new Error(`timed out after ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      request.on('close', () => clearTimeout(timer));
      request.on('error', (error) =>
        resolve({ ok: false, retryable: true, reason: describe(error), failure: timedOut ? 'timeout' : 'network' }),
      );
      request.end(body);
    });
  }

  private backoff(attempt: number): number {
    const ceiling = Math.min(this.maxRetryDelayMs, this.retryBaseDelayMs * 2 ** (attempt - 1));
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }
}

function classify(status: number): Sent {
  if (status >= 200 && status < 300) return { ok: true, status };
  if (status >= 300 && status < 400) {
    return {
      ok: false,
      retryable: false,
      status,
      reason: `HTTP ${status}: redirects are not followed`,
      failure: 'status',
    };
  }
  return { ok: false, retryable: status === 429 || status >= 500, status, reason: `HTTP ${status}`, failure: 'status' };
}

function retryReason(failure: Failure, status: number | undefined): RetryReason {
  if (failure === 'status' && status !== undefined) return statusRetryReason(status);
  return failure === 'timeout' ? 'timeout' : 'network';
}

/** The URL as it may be logged: no user info, query or fragment (they can carry secrets). */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '<invalid url>';
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
