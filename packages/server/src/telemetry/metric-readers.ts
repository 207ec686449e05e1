// The readers that push an application's metrics out when OTEL_METRICS_EXPORTER (or an OTLP endpoint) asks
// for it (settings.ts); each exporter package is imported only then. /metrics (Prometheus) is always served
// from the same instruments and needs no reader here.
import { diag } from '@opentelemetry/api';
import {
  ConsoleMetricExporter,
  PeriodicExportingMetricReader,
  type IMetricReader,
  type PushMetricExporter,
} from '@opentelemetry/sdk-metrics';
import { exportersFor, otlpProtocol } from './settings.js';

/** A positive integer from an OTEL_* variable, else the default (as the SDK reads them). */
function millis(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = Number(env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

async function otlpExporter(env: NodeJS.ProcessEnv): Promise<PushMetricExporter | undefined> {
  const protocol = otlpProtocol('metrics', env);
  switch (protocol) {
    case 'http/protobuf':
      return new (await import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter();
    case 'http/json':
      return new (await import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter();
    case 'grpc':
      return new (await import('@opentelemetry/exporter-metrics-otlp-grpc')).OTLPMetricExporter();
    default:
      diag.warn(`unsupported OTLP protocol for metrics "${protocol}": use http/protobuf, http/json or grpc`);
      return undefined;
  }
}

/** The push readers the environment asks for: [] by default. */
export async function metricExportReaders(env: NodeJS.ProcessEnv = process.env): Promise<IMetricReader[]> {
  const readers: IMetricReader[] = [];
  const exportIntervalMillis = millis(env, 'OTEL_METRIC_EXPORT_INTERVAL', 60_000);
  const exportTimeoutMillis = Math.min(millis(env, 'OTEL_METRIC_EXPORT_TIMEOUT', 30_000), exportIntervalMillis);
  for (const name of exportersFor('metrics', env)) {
    let exporter: PushMetricExporter | undefined;
    if (name === 'otlp') exporter = await otlpExporter(env);
    else if (name === 'console') exporter = new ConsoleMetricExporter();
    else if (name !== 'prometheus') {
      diag.warn(`unsupported OTEL_METRICS_EXPORTER "${name}": use otlp, console or prometheus`);
    }
    if (exporter) {
      readers.push(new PeriodicExportingMetricReader({ exporter, exportIntervalMillis, exportTimeoutMillis }));
    }
  }
  return readers;
}
