import { Injectable } from '@nestjs/common';
import type { Counter, Histogram } from '@opentelemetry/api';
import { MetricsService } from '../metrics/metrics.service.js';
import {
  ERROR_TYPE,
  GEN_AI_OPERATION_NAME,
  GEN_AI_PROVIDER_NAME,
  GEN_AI_REQUEST_MODEL,
  GEN_AI_RESPONSE_MODEL,
  GEN_AI_TOKEN_TYPE,
  SERVER_ADDRESS,
  SERVER_PORT,
} from '../telemetry/attributes.js';
import type { ActorDefinition, ModelPricing } from './actor-turn.js';
import type { ModelCallRecord } from './orchestrator/telemetry.js';

/** The GenAI conventions' token-usage buckets (powers of 4, 1 to 4^13). */
const TOKEN_BUCKETS = Array.from({ length: 14 }, (_, i) => 4 ** i);
/** The GenAI conventions' operation-duration buckets, seconds. */
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];

/** The currency a price is in when it names none. */
export const DEFAULT_CURRENCY = 'USD';

/** What `tokens` cost at `pricing` (per million tokens, input and output), in its currency. */
export function costOf(pricing: ModelPricing, inputTokens: number, outputTokens: number): number {
  return (
    (inputTokens * (pricing.inputPerMillionTokens ?? 0) + outputTokens * (pricing.outputPerMillionTokens ?? 0)) / 1e6
  );
}

/**
 * What the model calls of the `local` backend use (docs/operations.md, "Metrics"): tokens by namespace, actor
 * and model, their cost when the actor's model has a price, and the GenAI conventions' client histograms.
 * Labels are registry names and model names only, never a task id or anything a person wrote.
 */
@Injectable()
export class ModelMetrics {
  private readonly tokens: Counter;
  private readonly cost: Counter;
  private readonly tokenUsage: Histogram;
  private readonly duration: Histogram;

  constructor(metrics: MetricsService) {
    const meter = metrics.meter;
    this.tokens = meter.createCounter('cleveragents_model_tokens', {
      description: 'Tokens of model calls, as the model reported them, by namespace, actor, model and direction',
    });
    this.cost = meter.createCounter('cleveragents_model_cost', {
      description: "What model calls cost at the actor's model price (registry `model.pricing`), by currency",
    });
    this.tokenUsage = meter.createHistogram('gen_ai.client.token.usage', {
      description: 'Tokens used per model call (GenAI semantic conventions)',
      unit: '{token}',
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    });
    this.duration = meter.createHistogram('gen_ai.client.operation.duration', {
      description: 'Duration of a model call (GenAI semantic conventions)',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
  }

  /** Records one model call of `actor` in `namespace`. */
  record(namespace: string, actor: ActorDefinition, call: ModelCallRecord): void {
    const { target } = call;
    const conventions = {
      [GEN_AI_OPERATION_NAME]: 'chat',
      [GEN_AI_PROVIDER_NAME]: target.provider,
      [GEN_AI_REQUEST_MODEL]: target.model,
      ...(call.responseModel ? { [GEN_AI_RESPONSE_MODEL]: call.responseModel } : {}),
      ...(target.serverAddress ? { [SERVER_ADDRESS]: target.serverAddress } : {}),
      ...(target.serverPort ? { [SERVER_PORT]: target.serverPort } : {}),
    };
    this.duration.record(call.durationSeconds, {
      ...conventions,
      ...(call.errorType ? { [ERROR_TYPE]: call.errorType } : {}),
    });
    const own = { namespace, actor: actor.name, model: target.model };
    const input = call.inputTokens ?? 0;
    const output = call.outputTokens ?? 0;
    if (call.inputTokens !== undefined) {
      this.tokens.add(input, { ...own, direction: 'input' });
      this.tokenUsage.record(input, { ...conventions, [GEN_AI_TOKEN_TYPE]: 'input' });
    }
    if (call.outputTokens !== undefined) {
      this.tokens.add(output, { ...own, direction: 'output' });
      this.tokenUsage.record(output, { ...conventions, [GEN_AI_TOKEN_TYPE]: 'output' });
    }
    const pricing = actor.model?.pricing;
    if (pricing && (input > 0 || output > 0)) {
      this.cost.add(costOf(pricing, input, output), { ...own, currency: pricing.currency ?? DEFAULT_CURRENCY });
    }
  }
}
