import http from 'node:http';
import https from 'node:https';
import { Logger } from '@nestjs/common';
import { pinnedLookup } from '../common/outbound/outbound-url.policy.js';
import type { AppConfig } from '../config/app.config.js';
import type { VettedWebhook, WebhookUrlGuard } from './webhook-url.guard.js';

/** The back-off of retries (tests shorten it). */
export interface GuardedPushSenderOptions {
  /** First back-off delay; doubled on each retry (with jitter). Default 250 ms. */
  retryBaseDelayMs?: number;
  /** Upper bound of one back-off delay. Default 10 s. */
  maxRetryDelayMs?: number;
}

type Attempt = { ok: true; status: number } | { ok: false; retryable: boolean; reason: string; status?: number };

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
  ) {
    this.timeoutMs = config.pushTimeoutMs;
    this.retries = config.pushRetries;
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? 250;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 10_000;
  }

  /** Delivers `post`, or gives up on it; never rejects. */
  async post(post: WebhookPost): Promise<WebhookOutcome> {
    const { what, where } = post;
    let lastStatus: number | null = null;
    for (let attempt = 1; ; attempt++) {
      let target: VettedWebhook;
      try {
        target = await this.guard.vet(post.url);
      } catch (error) {
        const reason = `webhook URL not admissible: ${describe(error)}`;
        this.logger.warn({ msg: `${what} refused: webhook URL not admissible`, ...where, reason: describe(error) });
        return { delivered: false, status: lastStatus, attempts: attempt - 1, reason };
      }
      const result = await this.attempt(target, post.headers, post.body);
      if (result.ok) {
        this.logger.debug({ msg: `${what} delivered`, ...where, status: result.status, attempt });
        return { delivered: true, status: result.status, attempts: attempt };
      }
      lastStatus = result.status ?? null;
      if (!result.retryable || attempt > this.retries) {
        this.logger.warn({ msg: `${what} failed`, ...where, attempt, reason: result.reason });
        return { delivered: false, status: lastStatus, attempts: attempt, reason: result.reason };
      }
      this.logger.debug({ msg: `${what} attempt failed; retrying`, ...where, attempt, reason: result.reason });
      await delay(this.backoff(attempt));
    }
  }

  private attempt(target: VettedWebhook, headers: http.OutgoingHttpHeaders, body: string): Promise<Attempt> {
    const { url } = target;
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<Attempt>((resolve) => {
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
        resolve({ ok: false, retryable: false, reason: describe(error) });
        return;
      }
      const timer = setTimeout(
        () => request.destroy(new Error(`timed out after ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
      request.on('close', () => clearTimeout(timer));
      request.on('error', (error) => resolve({ ok: false, retryable: true, reason: describe(error) }));
      request.end(body);
    });
  }

  private backoff(attempt: number): number {
    const ceiling = Math.min(this.maxRetryDelayMs, this.retryBaseDelayMs * 2 ** (attempt - 1));
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }
}

function classify(status: number): Attempt {
  if (status >= 200 && status < 300) return { ok: true, status };
  if (status >= 300 && status < 400) {
    return { ok: false, retryable: false, status, reason: `HTTP ${status}: redirects are not followed` };
  }
  return { ok: false, retryable: status === 429 || status >= 500, status, reason: `HTTP ${status}` };
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
