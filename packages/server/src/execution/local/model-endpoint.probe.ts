import { causeOfType } from '../../common/causes.js';
import type { Clock } from '../../common/clock.js';
import { OutboundUrlRefusal } from '../../common/outbound/outbound-url.policy.js';
import type { ActorBackendReadiness } from '../actor-turn.js';
import { errorCode } from './chat-model.factory.js';

/** How long an answer of the probe stands: /readyz is asked every few seconds by each load balancer. */
export const MODEL_PROBE_CACHE_MS = 30_000;
/** How long the probe waits for the endpoint: a probe of /readyz must not hang on it. */
export const MODEL_PROBE_TIMEOUT_MS = 2_000;

/** The configured endpoint of the `local` backend, complete. */
export interface ProbedModel {
  baseUrl: string;
  model: string;
  apiKey: string | undefined;
}

/**
 * Whether the model endpoint answers, for /readyz: one shared, cached `GET {baseUrl}/models`
 * (docs/design-notes.md#model-endpoint-probe).
 */
export class ModelEndpointProbe {
  private last: { at: number; readiness: ActorBackendReadiness } | undefined;
  private running: Promise<ActorBackendReadiness> | undefined;
  private readonly url: URL;
  private readonly where: string;

  constructor(
    private readonly endpoint: ProbedModel,
    private readonly fetcher: typeof fetch,
    private readonly clock: Clock,
    private readonly options: { cacheMs: number; timeoutMs: number } = {
      cacheMs: MODEL_PROBE_CACHE_MS,
      timeoutMs: MODEL_PROBE_TIMEOUT_MS,
    },
  ) {
    this.url = new URL(`${endpoint.baseUrl.replace(/\/+$/, '')}/models`);
    this.where = `model ${endpoint.model} at ${this.url.host}`;
  }

  /** The endpoint's readiness: the answer of the last period, else of a probe (one at a time). */
  check(): Promise<ActorBackendReadiness> {
    const last = this.last;
    if (last && this.clock.now() - last.at < this.options.cacheMs) return Promise.resolve(last.readiness);
    this.running ??= this.probe()
      .then((readiness) => {
        this.last = { at: this.clock.now(), readiness };
        return readiness;
      })
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  private async probe(): Promise<ActorBackendReadiness> {
    const request = `GET ${this.url.pathname}`;
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const response = await this.fetcher(this.url.href, {
        headers: this.endpoint.apiKey ? { authorization: `Bearer ${this.endpoint.apiKey}` } : {},
        signal,
      });
      await response.body?.cancel();
      const { status } = response;
      if (status === 401 || status === 403) {
        return {
          ready: false,
          detail: `${this.where}: ${request} answered HTTP ${status}: check CLEVERAGENTS_MODEL_API_KEY`,
        };
      }
      if (status >= 500) {
        return {
          ready: false,
          detail: `${this.where}: ${request} answered HTTP ${status}: the model server is failing`,
        };
      }
      return { ready: true, detail: `${this.where}: reachable (${request} answered HTTP ${status})` };
    } catch (error) {
      return { ready: false, detail: `${this.where}: unreachable (${this.reason(error, signal)})` };
    }
  }

  /** Why the request failed, in words an operator acts on; never the provider's text (it may echo the key). */
  private reason(error: unknown, signal: AbortSignal): string {
    const refusal = causeOfType(error, OutboundUrlRefusal);
    if (refusal) return `refused: ${refusal.message}`;
    if (signal.aborted) return `no answer within ${this.options.timeoutMs} ms`;
    const errno = errorCode(error);
    return `${errno ?? 'connection failed'}: check CLEVERAGENTS_MODEL_BASE_URL`;
  }
}
