import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Role, TaskState, type StreamResponse } from '@a2a-js/sdk';
import { InMemoryPushNotificationStore, ServerCallContext } from '@a2a-js/sdk/server';
import { SpanKind, SpanStatusCode, type SpanContext } from '@opentelemetry/api';
import { parentSpanId, startTestTracing, type TestTracing } from '../../../../test/support/tracing.js';
import { AppConfig } from '../config/app.config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { OutboundMetrics } from '../metrics/outbound-metrics.js';
import { serverTracer } from '../telemetry/tracing.js';
import { GuardedPushNotificationSender } from './guarded-push-notification.sender.js';
import { ValidatingPushNotificationStore } from './validating-push-notification.store.js';
import { WebhookUrlGuard } from './webhook-url.guard.js';

/*
 * Push notifications as outbound calls (docs/operations.md, "Traces" and "Metrics"): each delivery attempt is a
 * CLIENT span `push <event>` in the trace of the call that published the event, and the webhook POST carries
 * that span's traceparent, so that the receiving system can continue the trace. Real SDK spans, a real receiver.
 */

/** A webhook receiver on loopback; `status(n)` is its answer to the n-th request (from 0). */
class Receiver {
  readonly received: http.IncomingHttpHeaders[] = [];
  private readonly server: http.Server;

  constructor(status: (n: number) => number) {
    this.server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const n = this.received.push(req.headers) - 1;
        res.writeHead(status(n)).end();
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const TASK_ID = 'task-traced';
const callContext = new ServerCallContext({ requestedVersion: '1.0' });

const completed: StreamResponse = {
  payload: {
    $case: 'statusUpdate',
    value: {
      taskId: TASK_ID,
      contextId: 'ctx-traced',
      status: {
        state: TaskState.TASK_STATE_COMPLETED,
        message: {
          messageId: 'm-1',
          contextId: 'ctx-traced',
          taskId: TASK_ID,
          role: Role.ROLE_AGENT,
          parts: [],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
        timestamp: undefined,
      },
      metadata: undefined,
    },
  },
};

const traceparentOf = (span: SpanContext): string => `00-${span.traceId}-${span.spanId}-01`;

describe('push notification deliveries, traced and counted', () => {
  let tracing: TestTracing;
  let metrics: MetricsService;
  let receiver: Receiver | undefined;

  beforeAll(() => {
    tracing = startTestTracing();
  });
  afterAll(async () => {
    await tracing.stop();
  });
  beforeEach(() => {
    tracing.reset();
    metrics = new MetricsService();
  });
  afterEach(async () => {
    await receiver?.stop();
    await metrics.onApplicationShutdown();
  });

  /** A sender whose config for the task posts to `url`, with a short back-off. */
  async function senderTo(url: string): Promise<GuardedPushNotificationSender> {
    const config = AppConfig.fromEnv({
      CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1',
      CLEVERAGENTS_PUSH_TIMEOUT_MS: '10000',
      CLEVERAGENTS_PUSH_RETRIES: '2',
    });
    const guard = new WebhookUrlGuard(config);
    const store = new ValidatingPushNotificationStore(new InMemoryPushNotificationStore(), guard);
    await store.save(TASK_ID, callContext, {
      tenant: '',
      id: '',
      taskId: TASK_ID,
      url,
      token: 'push-token-not-in-spans',
      authentication: undefined,
    });
    const options = { retryBaseDelayMs: 5, maxRetryDelayMs: 10 };
    return new GuardedPushNotificationSender(store, guard, config, options, new OutboundMetrics(metrics));
  }

  /** Publishes the event inside a span standing for the turn's, which ends before the delivery does. */
  async function publishInSpan(sender: GuardedPushNotificationSender): Promise<SpanContext> {
    let delivery: Promise<void> = Promise.resolve();
    const parent = serverTracer().startActiveSpan('turn under test', (span) => {
      delivery = sender.send(completed, callContext, undefined);
      span.end();
      return span.spanContext();
    });
    await delivery;
    return parent;
  }

  it('each attempt is a CLIENT span under the publishing span, its POST carrying it; retries and outcome counted', async () => {
    receiver = await new Receiver((n) => (n === 0 ? 503 : 204)).start();
    const sender = await senderTo(`http://user:pw@127.0.0.1:${receiver.port}/hook/T0/secret-path?token=secret-query`);
    const parent = await publishInSpan(sender);

    const attempts = tracing.named('push status-update');
    expect(attempts).toHaveLength(2);
    for (const span of attempts) {
      expect(span.kind).toBe(SpanKind.CLIENT);
      expect(span.spanContext().traceId).toBe(parent.traceId);
      expect(parentSpanId(span)).toBe(parent.spanId);
    }
    const [first, second] = attempts;
    const common = {
      'http.request.method': 'POST',
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'server.port': receiver.port,
      'cleveragents.webhook.event': 'status-update',
      'cleveragents.task.id': TASK_ID,
    };
    expect(first.attributes).toEqual({ ...common, 'http.response.status_code': 503, 'error.type': '503' });
    expect(first.status).toEqual({ code: SpanStatusCode.ERROR, message: '503' });
    expect(second.attributes).toEqual({ ...common, 'http.response.status_code': 204, 'http.request.resend_count': 1 });
    expect(second.status.code).toBe(SpanStatusCode.UNSET);
    expect(JSON.stringify(attempts.map((span) => span.attributes))).not.toMatch(
      /secret-query|secret-path|push-token|pw@/,
    );

    // The receiver can continue the trace: each POST names its own attempt's span.
    expect(receiver.received.map((headers) => headers.traceparent)).toEqual(
      attempts.map((span) => traceparentOf(span.spanContext())),
    );
    expect(receiver.received.every((headers) => headers.baggage === undefined)).toBe(true);

    const text = await metrics.render();
    expect(text).toMatch(/^cleveragents_push_deliveries_total\{outcome="delivered"\} 1$/m);
    expect(text).toMatch(/^cleveragents_push_delivery_duration_seconds_count\{outcome="delivered"\} 1$/m);
    expect(text).toMatch(/^cleveragents_outbound_retries_total\{target="push",reason="http_5xx"\} 1$/m);
  });

  it('a delivery that fails after its retries is counted as http_error, each attempt a failed span', async () => {
    receiver = await new Receiver(() => 429).start();
    const sender = await senderTo(`http://127.0.0.1:${receiver.port}/hook`);
    await publishInSpan(sender);

    expect(tracing.named('push status-update').map((span) => span.attributes['error.type'])).toEqual([
      '429',
      '429',
      '429',
    ]);
    const text = await metrics.render();
    expect(text).toMatch(/^cleveragents_push_deliveries_total\{outcome="http_error"\} 1$/m);
    expect(text).toMatch(/^cleveragents_outbound_retries_total\{target="push",reason="http_429"\} 2$/m);
  });

  it('a webhook nobody listens on fails as network_error', async () => {
    receiver = await new Receiver(() => 204).start();
    const port = receiver.port;
    await receiver.stop();
    receiver = undefined;
    const sender = await senderTo(`http://127.0.0.1:${port}/hook`);
    await publishInSpan(sender);

    expect(tracing.named('push status-update').map((span) => span.attributes['error.type'])).toEqual([
      'network',
      'network',
      'network',
    ]);
    const text = await metrics.render();
    expect(text).toMatch(/^cleveragents_push_deliveries_total\{outcome="network_error"\} 1$/m);
    expect(text).toMatch(/^cleveragents_outbound_retries_total\{target="push",reason="network"\} 2$/m);
  });
});
