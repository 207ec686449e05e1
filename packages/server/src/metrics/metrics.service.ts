import { Inject, Injectable, Optional, type OnApplicationShutdown } from '@nestjs/common';
import type { Counter, Histogram, Meter } from '@opentelemetry/api';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import {
  detectResources,
  resourceAttributesEnvDetector,
  resourceFromAttributes,
  serviceNameEnvDetector,
} from '@opentelemetry/resources';
import { MeterProvider, type IMetricReader } from '@opentelemetry/sdk-metrics';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { SERVER_VERSION } from '../common/server-info.js';

export const METER_NAME = '@cleveragents/server';

/** The push readers the OTEL_* variables ask for (telemetry/metric-readers.ts); none by default. */
export const METRIC_EXPORT_READERS = Symbol('METRIC_EXPORT_READERS');

/**
 * The application's metrics (docs/operations.md, "Metrics"). Its own series are OpenTelemetry instruments
 * on one meter provider per application: served at /metrics in the Prometheus text format and, when the
 * OTEL_* variables ask (telemetry/metric-readers.ts), pushed by the readers given. The Node.js process
 * series (CPU, heap, event loop) come from prom-client's default collectors, as before.
 */
@Injectable()
export class MetricsService implements OnApplicationShutdown {
  /** prom-client's registry: the default process series only. */
  readonly registry = new Registry();
  /** Where the server's own instruments are made. */
  readonly meter: Meter;
  private readonly provider: MeterProvider;
  private readonly prometheus = new PrometheusExporter({ preventServerStart: true });
  // No timestamps, no otel_scope_* labels on every series, no target_info: the series read as before.
  private readonly serializer = new PrometheusSerializer('', false, undefined, true, true);

  constructor(@Optional() @Inject(METRIC_EXPORT_READERS) exportReaders: readonly IMetricReader[] | null = []) {
    collectDefaultMetrics({ register: this.registry });
    this.provider = new MeterProvider({
      // The server's name and version, unless OTEL_RESOURCE_ATTRIBUTES or OTEL_SERVICE_NAME say otherwise.
      resource: resourceFromAttributes({
        'service.name': 'cleveragents-server',
        'service.version': SERVER_VERSION,
      }).merge(detectResources({ detectors: [resourceAttributesEnvDetector, serviceNameEnvDetector] })),
      readers: [this.prometheus, ...(exportReaders ?? [])],
    });
    this.meter = this.provider.getMeter(METER_NAME, SERVER_VERSION);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of every series: the process's, then the server's instruments. */
  async render(): Promise<string> {
    const [processSeries, collected] = await Promise.all([this.registry.metrics(), this.prometheus.collect()]);
    const own = this.serializer.serialize(collected.resourceMetrics);
    return `${processSeries.trimEnd()}\n${own}`;
  }

  /** Pushes what the export readers have not sent yet, then stops them. */
  async onApplicationShutdown(): Promise<void> {
    await this.provider.shutdown().catch(() => undefined);
  }
}

export type RpcTransport = 'http' | 'stdio';

/** Past this many distinct method labels, further names are counted as `other`. */
export const MAX_METHOD_LABELS = 256;
export const OTHER_METHOD_LABEL = 'other';

/** JSON-RPC call metrics (docs/operations.md, "Metrics"). */
@Injectable()
export class RpcMetrics {
  private readonly requests: Counter;
  private readonly duration: Histogram;
  private streamsOpen = 0;
  private readonly methodLabels = new Set<string>();

  constructor(metrics: MetricsService) {
    const meter = metrics.meter;
    this.requests = meter.createCounter('cleveragents_rpc_requests', {
      description: 'JSON-RPC calls answered, by method, outcome (`ok` or the JSON-RPC error code) and transport',
    });
    this.duration = meter.createHistogram('cleveragents_rpc_duration_seconds', {
      description: 'Time to answer a JSON-RPC call; for a streaming call, until its stream opened',
      unit: 's',
      advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300] },
    });
    // Observed at each collection, so that the series reads 0 before the first stream rather than being absent.
    meter
      .createObservableGauge('cleveragents_open_streams', {
        description: 'Streaming responses (SSE or stdio) open now',
      })
      .addCallback((result) => result.observe(this.streamsOpen));
  }

  /**
   * Records one answered call. `method` must be a bounded label: a standard A2A method, a registered
   * `_cleveragents/*` name, or a fixed placeholder such as `unknown` for a name the server does not
   * serve; never a client's raw string. As a backstop, names beyond MAX_METHOD_LABELS count as `other`.
   */
  observe(method: string, code: number | 'ok', transport: RpcTransport, seconds: number): void {
    const label = this.methodLabel(method);
    this.requests.add(1, { method: label, code: String(code), transport });
    this.duration.record(seconds, { method: label, transport });
  }

  /** Call `inc()` when a stream opens and `dec()` once when it ends, whatever ends it. */
  readonly openStreams = {
    inc: (): void => {
      this.streamsOpen += 1;
    },
    dec: (): void => {
      this.streamsOpen -= 1;
    },
  };

  private methodLabel(method: string): string {
    if (this.methodLabels.has(method)) return method;
    if (this.methodLabels.size >= MAX_METHOD_LABELS) return OTHER_METHOD_LABEL;
    this.methodLabels.add(method);
    return method;
  }
}
