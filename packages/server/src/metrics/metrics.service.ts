import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The process's Prometheus registry: default Node.js process metrics plus the server's own series. */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of every series. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}

export type RpcTransport = 'http' | 'stdio';

/** Past this many distinct method labels, further names are counted as `other`. */
export const MAX_METHOD_LABELS = 256;
export const OTHER_METHOD_LABEL = 'other';

/** JSON-RPC call metrics (docs/protocol.md §2 `/metrics`). */
@Injectable()
export class RpcMetrics {
  private readonly requests: Counter<'method' | 'code' | 'transport'>;
  private readonly duration: Histogram<'method' | 'transport'>;
  private readonly streams: Gauge;
  private readonly methodLabels = new Set<string>();

  constructor(metrics: MetricsService) {
    const registers = [metrics.registry];
    this.requests = new Counter({
      name: 'cleveragents_rpc_requests_total',
      help: 'JSON-RPC calls answered, by method, outcome (`ok` or the JSON-RPC error code) and transport',
      labelNames: ['method', 'code', 'transport'],
      registers,
    });
    this.duration = new Histogram({
      name: 'cleveragents_rpc_duration_seconds',
      help: 'Time to answer a JSON-RPC call; for a streaming call, until its stream opened',
      labelNames: ['method', 'transport'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.streams = new Gauge({
      name: 'cleveragents_open_streams',
      help: 'Streaming responses (SSE or stdio) open now',
      registers,
    });
  }

  /**
   * Records one answered call. `method` must be a bounded label: a standard A2A method, a registered
   * `_cleveragents/*` name, or a fixed placeholder such as `unknown` for a name the server does not
   * serve; never a client's raw string. As a backstop, names beyond MAX_METHOD_LABELS count as `other`.
   */
  observe(method: string, code: number | 'ok', transport: RpcTransport, seconds: number): void {
    const label = this.methodLabel(method);
    this.requests.inc({ method: label, code: String(code), transport });
    this.duration.observe({ method: label, transport }, seconds);
  }

  /** Call `inc()` when a stream opens and `dec()` once when it ends, whatever ends it. */
  readonly openStreams = {
    inc: (): void => this.streams.inc(),
    dec: (): void => this.streams.dec(),
  };

  private methodLabel(method: string): string {
    if (this.methodLabels.has(method)) return method;
    if (this.methodLabels.size >= MAX_METHOD_LABELS) return OTHER_METHOD_LABEL;
    this.methodLabels.add(method);
    return method;
  }
}
