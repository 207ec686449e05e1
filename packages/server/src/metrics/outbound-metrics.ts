import { Injectable } from '@nestjs/common';
import type { Counter, Histogram } from '@opentelemetry/api';
import { MetricsService } from './metrics.service.js';

/** Whom an outbound call went to. */
export type OutboundTarget = 'langgraph' | 'a2a' | 'push';

/**
 * Why a call was made again: its connection failed or timed out, the peer answered 429, 5xx or another 4xx,
 * its stream ended before the run or task rested, or a re-join failed otherwise.
 */
export type RetryReason = 'network' | 'timeout' | 'http_429' | 'http_5xx' | 'http_4xx' | 'stream_ended' | 'error';

/** How one webhook delivery ended, after its retries. */
export type DeliveryOutcome = 'delivered' | 'http_error' | 'network_error' | 'refused' | 'invalid';

/** The retry reason of an HTTP status that failed. */
export function statusRetryReason(status: number): RetryReason {
  if (status === 429) return 'http_429';
  return status >= 500 ? 'http_5xx' : 'http_4xx';
}

/** Metrics of the server's calls to others (docs/operations.md, "Metrics"); every label is from a fixed set. */
@Injectable()
export class OutboundMetrics {
  private readonly retries: Counter;
  private readonly deliveries: Counter;
  private readonly deliveryDuration: Histogram;

  constructor(metrics: MetricsService) {
    const meter = metrics.meter;
    this.retries = meter.createCounter('cleveragents_outbound_retries', {
      description: 'Outbound calls made again, by target (langgraph, a2a, push) and reason',
    });
    this.deliveries = meter.createCounter('cleveragents_push_deliveries', {
      description: 'Webhook deliveries (push notifications) ended, by outcome, after their retries',
    });
    this.deliveryDuration = meter.createHistogram('cleveragents_push_delivery_duration_seconds', {
      description: 'Time from the first attempt of a webhook delivery to its outcome, retries included',
      unit: 's',
      advice: { explicitBucketBoundaries: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120] },
    });
  }

  retried(target: OutboundTarget, reason: RetryReason): void {
    this.retries.add(1, { target, reason });
  }

  delivered(outcome: DeliveryOutcome, seconds: number): void {
    this.deliveries.add(1, { outcome });
    this.deliveryDuration.record(seconds, { outcome });
  }
}
