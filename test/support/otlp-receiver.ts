// An OTLP/HTTP receiver inside the test process: what a server or CLI in a child process exports with
// OTEL_EXPORTER_OTLP_ENDPOINT pointed here and OTEL_EXPORTER_OTLP_PROTOCOL=http/json (the OTLP JSON encoding,
// as the SDK's own exporter sends it). Traces and metrics are kept as received; a protobuf body is refused
// with 415, so a test that forgot the protocol fails loudly instead of seeing nothing.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as the OTLP JSON encoding carries it, with its resource's and scope's names beside it. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  status: { code?: number; message?: string };
  /** `service.name` of the resource that sent it. */
  service: string;
  scope: string;
}

/** One metric data point as received: the metric's name and the point's attributes and value. */
export interface ReceivedPoint {
  metric: string;
  service: string;
  attributes: Record<string, unknown>;
  /** A sum's or gauge's value; a histogram's count. */
  value: number;
  /** A histogram's sum. */
  sum?: number;
}

interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: OtlpAnyValue[] };
  kvlistValue?: { values?: OtlpKeyValue[] };
}
interface OtlpKeyValue {
  key: string;
  value?: OtlpAnyValue;
}

function valueOf(v: OtlpAnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  if (v.kvlistValue) return attributesOf(v.kvlistValue.values);
  return undefined;
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) out[kv.key] = valueOf(kv.value);
  return out;
}

function serviceOf(resource: OtlpKeyValue[] | undefined): string {
  const name = attributesOf(resource)['service.name'];
  return typeof name === 'string' ? name : '';
}

/** OTLP JSON ids are hex strings; base64 is accepted too (other exporters' JSON), turned into hex. */
function hexId(id: string | undefined): string | undefined {
  if (!id) return undefined;
  if (/^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16)) return id.toLowerCase();
  return Buffer.from(id, 'base64').toString('hex');
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export interface OtlpReceiver {
  /** The base URL for OTEL_EXPORTER_OTLP_ENDPOINT (the SDK appends /v1/traces, /v1/metrics). */
  readonly endpoint: string;
  /** What a child process needs to export here (http/json, every span sampled, short batching delays). */
  env(serviceName?: string): Record<string, string>;
  spans(): ReceivedSpan[];
  points(): ReceivedPoint[];
  /** Export requests received so far, of any signal (0 proves nothing was sent). */
  requests(): number;
  /** Resolves once `predicate` holds over the spans received, or rejects after `timeoutMs`. */
  waitForSpans(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  reset(): void;
  close(): Promise<void>;
}

interface TraceRequest {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        startTimeUnixNano: string;
        endTimeUnixNano: string;
        attributes?: OtlpKeyValue[];
        events?: { name: string; attributes?: OtlpKeyValue[] }[];
        links?: { traceId: string; spanId: string; attributes?: OtlpKeyValue[] }[];
        status?: { code?: number; message?: string };
      }[];
    }[];
  }[];
}

interface NumberPoint {
  attributes?: OtlpKeyValue[];
  asInt?: string | number;
  asDouble?: number;
  count?: string | number;
  sum?: number;
}
interface MetricsRequest {
  resourceMetrics?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeMetrics?: {
      metrics?: {
        name: string;
        sum?: { dataPoints?: NumberPoint[] };
        gauge?: { dataPoints?: NumberPoint[] };
        histogram?: { dataPoints?: NumberPoint[] };
      }[];
    }[];
  }[];
}

/** Starts a receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  let spans: ReceivedSpan[] = [];
  let points: ReceivedPoint[] = [];
  let requests = 0;
  const waiters = new Set<() => void>();

  const takeTraces = (body: TraceRequest): void => {
    for (const rs of body.resourceSpans ?? []) {
      const service = serviceOf(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          spans.push({
            traceId: hexId(s.traceId) ?? '',
            spanId: hexId(s.spanId) ?? '',
            parentSpanId: hexId(s.parentSpanId),
            name: s.name,
            kind: s.kind ?? 0,
            startTimeUnixNano: String(s.startTimeUnixNano),
            endTimeUnixNano: String(s.endTimeUnixNano),
            attributes: attributesOf(s.attributes),
            events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
            links: (s.links ?? []).map((l) => ({
              traceId: hexId(l.traceId) ?? '',
              spanId: hexId(l.spanId) ?? '',
              attributes: attributesOf(l.attributes),
            })),
            status: s.status ?? {},
            service,
            scope: ss.scope?.name ?? '',
          });
        }
      }
    }
  };

  const takeMetrics = (body: MetricsRequest): void => {
    for (const rm of body.resourceMetrics ?? []) {
      const service = serviceOf(rm.resource?.attributes);
      for (const sm of rm.scopeMetrics ?? []) {
        for (const m of sm.metrics ?? []) {
          for (const p of m.sum?.dataPoints ?? m.gauge?.dataPoints ?? []) {
            points.push({
              metric: m.name,
              service,
              attributes: attributesOf(p.attributes),
              value: Number(p.asInt ?? p.asDouble ?? 0),
            });
          }
          for (const p of m.histogram?.dataPoints ?? []) {
            points.push({
              metric: m.name,
              service,
              attributes: attributesOf(p.attributes),
              value: Number(p.count ?? 0),
              sum: p.sum,
            });
          }
        }
      }
    }
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const type = (req.headers['content-type'] ?? '').split(';')[0].trim();
      if (req.method !== 'POST') return void res.writeHead(405).end();
      if (type !== 'application/json') {
        res.writeHead(415, { 'content-type': 'text/plain' }).end('this test receiver takes OTLP JSON (http/json) only');
        return;
      }
      requests += 1;
      const parsed = JSON.parse(body.toString('utf8')) as TraceRequest & MetricsRequest;
      if (req.url === '/v1/traces') takeTraces(parsed);
      else if (req.url === '/v1/metrics') takeMetrics(parsed);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      for (const wake of [...waiters]) wake();
    })().catch(() => res.writeHead(400).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;

  return {
    endpoint,
    env: (serviceName) => ({
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_TRACES_SAMPLER: 'always_on',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_METRIC_EXPORT_INTERVAL: '500',
      ...(serviceName ? { OTEL_SERVICE_NAME: serviceName } : {}),
    }),
    spans: () => [...spans],
    points: () => [...points],
    requests: () => requests,
    waitForSpans: (predicate, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          if (!predicate(spans)) return false;
          clearTimeout(timer);
          waiters.delete(wake);
          resolve([...spans]);
          return true;
        };
        const wake = (): void => void check();
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(
            new Error(
              `OTLP receiver: spans not as expected after ${timeoutMs} ms; received: ${spans.map((s) => `${s.service}:${s.name}`).join(', ') || 'none'}`,
            ),
          );
        }, timeoutMs);
        waiters.add(wake);
        check();
      }),
    reset: () => {
      spans = [];
      points = [];
      requests = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
