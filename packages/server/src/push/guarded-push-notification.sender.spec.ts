import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger, type LoggerService } from '@nestjs/common';
import {
  Role,
  TaskState,
  type StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
  type TaskStatusUpdateEvent,
} from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { InMemoryPushNotificationStore, ServerCallContext, V1PushNotificationSerializer } from '@a2a-js/sdk/server';
import { createLegacyAwarePushNotificationSender, V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import { AppConfig } from '../config/app.config.js';
import { GuardedPushNotificationSender } from './guarded-push-notification.sender.js';
import { ValidatingPushNotificationStore } from './validating-push-notification.store.js';
import { WebhookUrlGuard } from './webhook-url.guard.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

type Reply = { status: number; headers?: Record<string, string>; delayMs?: number } | 'hang';

/** A real webhook receiver on loopback; `reply(n)` decides the answer to the n-th request (from 0). */
class Receiver {
  readonly received: Received[] = [];
  readonly answeredAt: number[] = [];
  private server!: http.Server;

  constructor(private readonly reply: (n: number) => Reply = () => ({ status: 200 })) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const n = this.received.length;
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString(), at: Date.now() });
        const reply = this.reply(n);
        if (reply === 'hang') return;
        setTimeout(() => {
          this.answeredAt[n] = Date.now();
          res.writeHead(reply.status, reply.headers).end();
        }, reply.delayMs ?? 0);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const logs: string[] = [];
const captureLogger: LoggerService = {
  log: (m: unknown) => logs.push(JSON.stringify(m)),
  error: (m: unknown) => logs.push(JSON.stringify(m)),
  warn: (m: unknown) => logs.push(JSON.stringify(m)),
  debug: (m: unknown) => logs.push(JSON.stringify(m)),
  verbose: (m: unknown) => logs.push(JSON.stringify(m)),
};

const configWith = (env: Record<string, string> = {}): AppConfig =>
  AppConfig.fromEnv({
    CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1',
    // Every receiver here answers at once but the one that hangs, whose test sets its own timeout: a
    // second-long limit timed out attempts on a loaded machine, and the retry counts came up short.
    CLEVERAGENTS_PUSH_TIMEOUT_MS: '10000',
    CLEVERAGENTS_PUSH_RETRIES: '2',
    ...env,
  });

const contextFor = (wireVersion: '1.0' | '0.3') => new ServerCallContext({ requestedVersion: wireVersion });

const TASK_ID = 'task-1';
const CONTEXT_ID = 'ctx-1';

function statusEvent(state: TaskState): StreamResponse {
  const value: TaskStatusUpdateEvent = {
    taskId: TASK_ID,
    contextId: CONTEXT_ID,
    status: {
      state,
      message: {
        messageId: 'm-1',
        contextId: CONTEXT_ID,
        taskId: TASK_ID,
        role: Role.ROLE_AGENT,
        parts: [
          { content: { $case: 'text', value: 'done' }, mediaType: 'text/plain', filename: '', metadata: undefined },
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      timestamp: '2025-01-02T03:04:05.000Z',
    },
    metadata: undefined,
  };
  return { payload: { $case: 'statusUpdate', value } };
}

const task: Task = {
  id: TASK_ID,
  contextId: CONTEXT_ID,
  status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: '2025-01-02T03:04:05.000Z' },
  artifacts: [],
  history: [],
  metadata: undefined,
};

function pushConfig(url: string, auth: Partial<Pick<TaskPushNotificationConfig, 'token' | 'authentication'>> = {}) {
  return { tenant: '', id: '', taskId: TASK_ID, url, token: '', authentication: undefined, ...auth };
}

describe('GuardedPushNotificationSender (against a real loopback webhook)', () => {
  let receivers: Receiver[];
  const receiver = async (reply?: (n: number) => Reply): Promise<Receiver> => {
    const r = await new Receiver(reply).start();
    receivers.push(r);
    return r;
  };

  beforeAll(() => Logger.overrideLogger(captureLogger));
  beforeEach(() => {
    receivers = [];
    logs.length = 0;
  });
  afterEach(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
  });

  function senderOver(config: AppConfig, inner = new InMemoryPushNotificationStore()) {
    const guard = new WebhookUrlGuard(config);
    const store = new ValidatingPushNotificationStore(inner, guard);
    const sender = new GuardedPushNotificationSender(store, guard, config, { retryBaseDelayMs: 20 });
    return { store, sender, inner };
  }

  it('posts the v1.0 StreamResponse JSON, as the SDK serializes it, with the Authorization credentials', async () => {
    const hook = await receiver();
    const { store, sender } = senderOver(configWith());
    await store.save(
      TASK_ID,
      contextFor('1.0'),
      pushConfig(hook.url('/v1?x=1'), { authentication: { scheme: 'Bearer', credentials: 's3cret' } }),
    );

    const event = statusEvent(TaskState.TASK_STATE_COMPLETED);
    await sender.send(event, contextFor('1.0'), task);

    expect(hook.received).toHaveLength(1);
    const [request] = hook.received;
    const expected = new V1PushNotificationSerializer().serialize(event, task);
    expect(request.headers['content-type']).toBe(expected.contentType);
    expect(request.headers['content-type']).toBe('application/a2a+json');
    expect(request.body).toBe(expected.body);
    expect(JSON.parse(request.body)).toMatchObject({
      statusUpdate: { taskId: TASK_ID, contextId: CONTEXT_ID, status: { state: 'TASK_STATE_COMPLETED' } },
    });
    expect(request.headers.authorization).toBe('Bearer s3cret');
    expect(request.headers['x-a2a-notification-token']).toBeUndefined();
  });

  it('posts the bare v0.3 event to a config registered over v0.3, with the legacy token header', async () => {
    const hook = await receiver();
    const { store, sender } = senderOver(configWith());
    await store.save(TASK_ID, contextFor('0.3'), pushConfig(hook.url(), { token: 'legacy-token' }));

    const event = statusEvent(TaskState.TASK_STATE_COMPLETED);
    // The triggering request's version does not matter: the config's registration version does.
    await sender.send(event, contextFor('1.0'), task);

    const [request] = hook.received;
    const expected = new V03PushNotificationSerializer().serialize(event, task);
    expect(request.headers['content-type']).toBe(expected.contentType);
    expect(request.body).toBe(expected.body);
    expect(JSON.parse(request.body)).toMatchObject({ kind: 'task', id: TASK_ID, status: { state: 'completed' } });
    expect(request.headers['x-a2a-notification-token']).toBe('legacy-token');
    expect(request.headers.authorization).toBeUndefined();
  });

  it.each([
    [
      '1.0',
      { authentication: { scheme: 'Basic', credentials: 'dXNlcjpwdw==' }, token: 'ignored-when-authentication-set' },
    ],
    ['0.3', { token: 'tok-123' }],
  ] as const)(
    'sends the same body and credential headers as the SDK DefaultPushNotificationSender (%s)',
    async (version, auth) => {
      const ours = await receiver();
      const sdks = await receiver();
      const { store, sender } = senderOver(configWith());
      const sdkStore = new InMemoryPushNotificationStore();
      await store.save(TASK_ID, contextFor(version), pushConfig(ours.url(), auth));
      await sdkStore.save(TASK_ID, contextFor(version), pushConfig(sdks.url(), auth));

      const event = statusEvent(TaskState.TASK_STATE_WORKING);
      await sender.send(event, contextFor(version), task);
      await createLegacyAwarePushNotificationSender(sdkStore).send(event, contextFor(version), task);

      const pick = (r: Received) => ({
        body: r.body,
        contentType: r.headers['content-type'],
        authorization: r.headers.authorization,
        token: r.headers['x-a2a-notification-token'],
      });
      expect(pick(ours.received[0])).toEqual(pick(sdks.received[0]));
    },
  );

  it('retries a 503 with back-off, then succeeds', async () => {
    const hook = await receiver((n) => ({ status: n === 0 ? 503 : 204 }));
    const { store, sender } = senderOver(configWith());
    await store.save(TASK_ID, contextFor('1.0'), pushConfig(hook.url()));

    await sender.send(statusEvent(TaskState.TASK_STATE_COMPLETED), contextFor('1.0'), task);

    expect(hook.received).toHaveLength(2);
    expect(hook.received[1].body).toBe(hook.received[0].body);
    expect(logs.join('\n')).toContain('push notification delivered');
  });

  it('retries 429 and 5xx at most CLEVERAGENTS_PUSH_RETRIES times, and does not retry other 4xx', async () => {
    const busy = await receiver(() => ({ status: 429 }));
    const broken = await receiver(() => ({ status: 500 }));
    const rejecting = await receiver(() => ({ status: 400 }));
    const { store, sender } = senderOver(configWith({ CLEVERAGENTS_PUSH_RETRIES: '2' }));
    for (const hook of [busy, broken, rejecting]) await store.save(TASK_ID, contextFor('1.0'), pushConfig(hook.url()));

    await sender.send(statusEvent(TaskState.TASK_STATE_COMPLETED), contextFor('1.0'), task);

    expect(busy.received).toHaveLength(3);
    expect(broken.received).toHaveLength(3);
    expect(rejecting.received).toHaveLength(1);
    expect(logs.filter((l) => l.includes('push notification failed'))).toHaveLength(3);
  });

  it('does not follow a redirect: a 302 to another loopback server is a failure, and is not retried', async () => {
    const elsewhere = await receiver();
    const redirecting = await receiver(() => ({ status: 302, headers: { Location: elsewhere.url() } }));
    const { store, sender } = senderOver(configWith());
    await store.save(TASK_ID, contextFor('1.0'), pushConfig(redirecting.url()));

    await sender.send(statusEvent(TaskState.TASK_STATE_COMPLETED), contextFor('1.0'), task);

    expect(redirecting.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(0);
    expect(logs.join('\n')).toMatch(/HTTP 302: redirects are not followed/);
  });

  it('gives up on an attempt after CLEVERAGENTS_PUSH_TIMEOUT_MS, and retries it', async () => {
    const silent = await receiver(() => 'hang');
    const { store, sender } = senderOver(
      configWith({ CLEVERAGENTS_PUSH_TIMEOUT_MS: '200', CLEVERAGENTS_PUSH_RETRIES: '1' }),
    );
    await store.save(TASK_ID, contextFor('1.0'), pushConfig(silent.url()));

    const started = Date.now();
    await sender.send(statusEvent(TaskState.TASK_STATE_COMPLETED), contextFor('1.0'), task);
    const elapsed = Date.now() - started;

    expect(silent.received).toHaveLength(2);
    expect(elapsed).toBeGreaterThanOrEqual(400);
    expect(elapsed).toBeLessThan(3000);
    expect(logs.join('\n')).toContain('timed out after 200 ms');
  });

  it('delivers the notifications of one task in order, one after the other', async () => {
    const slowFirst = await receiver((n) => ({ status: 200, delayMs: n === 0 ? 150 : 0 }));
    const { store, sender } = senderOver(configWith());
    await store.save(TASK_ID, contextFor('1.0'), pushConfig(slowFirst.url()));

    await Promise.all([
      sender.send(statusEvent(TaskState.TASK_STATE_WORKING), contextFor('1.0'), task),
      sender.send(statusEvent(TaskState.TASK_STATE_INPUT_REQUIRED), contextFor('1.0'), task),
      sender.send(statusEvent(TaskState.TASK_STATE_COMPLETED), contextFor('1.0'), task),
    ]);

    const states = slowFirst.received.map((r) => JSON.parse(r.body).statusUpdate.status.state);
    expect(states).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_COMPLETED']);
    expect(slowFirst.received[1].at).toBeGreaterThanOrEqual(slowFirst.answeredAt[0]);
  });

  it('delivers to an allow-listed host name through the address it vetted', async () => {
    const hook = await receiver();
    const { store, sender } = senderOver(configWith({ CLEVERAGENTS_PUSH_ALLOWED_HOSTS: 'localhost' }));
    await store.save(TASK_ID, contextFor('1.0'), pushConfig(`http://localhost:${hook.port}/named`));

    await sender.send(statusEvent(TaskState.TASK_STATE_COMPLETED), contextFor('1.0'), task);

    expect(hook.received).toHaveLength(1);
    expect(hook.received[0].headers.host).toBe(`localhost:${hook.port}`);
  });

  it('connects to the address the guard vetted, never to a fresh resolution of the name', async () => {
    const hook = await receiver();
    // A DNS answer only the guard sees: had the HTTP client resolved the name again (where a
    // rebinding attacker could answer differently), it would have failed with ENOTFOUND.
    class GuardWithOwnDns extends WebhookUrlGuard {
      readonly resolved: string[] = [];
      protected override resolveHost(host: string) {
        this.resolved.push(host);
        return Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
      }
    }
    const config = configWith({ CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1', CLEVERAGENTS_PUSH_RETRIES: '0' });
    const guard = new GuardWithOwnDns(config);
    const inner = new InMemoryPushNotificationStore();
    await inner.save(TASK_ID, contextFor('1.0'), pushConfig(`http://hooks.rebind.invalid:${hook.port}/hook`));
    const sender = new GuardedPushNotificationSender(inner, guard, config);

    await sender.send(statusEvent(TaskState.TASK_STATE_COMPLETED), contextFor('1.0'), task);

    expect(guard.resolved).toEqual(['hooks.rebind.invalid']);
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0].headers.host).toBe(`hooks.rebind.invalid:${hook.port}`);
  });

  it('sends nothing for a stand-alone message that belongs to no task', async () => {
    const hook = await receiver();
    const { store, sender } = senderOver(configWith());
    await store.save(TASK_ID, contextFor('1.0'), pushConfig(hook.url()));
    const message = (statusEvent(TaskState.TASK_STATE_COMPLETED).payload!.value as TaskStatusUpdateEvent).status!
      .message!;

    await sender.send({ payload: { $case: 'message', value: { ...message, taskId: '' } } }, contextFor('1.0'));

    expect(hook.received).toHaveLength(0);
  });

  it('never rejects on a stored credential Node refuses as a header, logs it, and still serves the other configs', async () => {
    const hook = await receiver();
    const { inner, sender } = senderOver(configWith());
    // Stored before registration refused CR/LF: straight into the inner store.
    await inner.save(
      TASK_ID,
      contextFor('1.0'),
      pushConfig(hook.url('/bad'), { authentication: { scheme: 'Bearer', credentials: 'a\r\nX-Injected: 1' } }),
    );
    await inner.save(TASK_ID, contextFor('1.0'), pushConfig(hook.url('/good'), { token: 'tok' }));

    await expect(sender.send(statusEvent(TaskState.TASK_STATE_COMPLETED), contextFor('1.0'), task)).resolves.toBe(
      undefined,
    );

    expect(hook.received).toHaveLength(1);
    expect(hook.received[0].headers['x-a2a-notification-token']).toBe('tok');
    expect(hook.received[0].headers['x-injected']).toBeUndefined();
    const failure = logs.find((line) => line.includes('push notification failed'));
    expect(failure).toContain('/bad');
    expect(logs.join('\n')).not.toContain('X-Injected');
  });

  describe('when the webhook is not allow-listed', () => {
    it('the validating store refuses to save it (-32602), so it is never stored', async () => {
      const hook = await receiver();
      const { store, inner } = senderOver(configWith({ CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '' }));

      await expect(store.save(TASK_ID, contextFor('1.0'), pushConfig(hook.url()))).rejects.toBeInstanceOf(
        RequestMalformedError,
      );
      expect(await inner.load(TASK_ID, contextFor('1.0'))).toEqual([]);
    });

    it('a config already stored is re-checked at send time: no request arrives, and no secret is logged', async () => {
      const hook = await receiver();
      const inner = new InMemoryPushNotificationStore();
      // Stored while the host was still admitted (or by another path); the operator has since removed it.
      await inner.save(
        TASK_ID,
        contextFor('1.0'),
        pushConfig(hook.url('/hook?sig=query-secret'), {
          authentication: { scheme: 'Bearer', credentials: 'never-log-me' },
        }),
      );
      const { sender } = senderOver(configWith({ CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '' }), inner);

      await sender.send(statusEvent(TaskState.TASK_STATE_COMPLETED), contextFor('1.0'), task);

      expect(hook.received).toHaveLength(0);
      const logged = logs.join('\n');
      expect(logged).toContain('webhook URL not admissible');
      expect(logged).not.toContain('never-log-me');
      expect(logged).not.toContain('query-secret');
    });
  });
});

describe('ValidatingPushNotificationStore', () => {
  const guard = new WebhookUrlGuard(configWith());
  const context = contextFor('1.0');

  it('saves an admitted config through the inner store, which assigns its id in place', async () => {
    const inner = new InMemoryPushNotificationStore();
    const store = new ValidatingPushNotificationStore(inner, guard);
    const config = pushConfig('http://127.0.0.1:1/hook');

    await store.save(TASK_ID, context, config);

    expect(config.id).not.toBe('');
    expect(await store.load(TASK_ID, context)).toEqual([config]);
    expect(await store.loadWithMetadata!(TASK_ID, context)).toEqual([{ config, wireVersion: '1.0' }]);
    await store.delete(TASK_ID, context, config.id);
    expect(await inner.load(TASK_ID, context)).toEqual([]);
  });

  it('offers loadWithMetadata only when the inner store has it', () => {
    const plain = {
      save: () => Promise.resolve(),
      load: () => Promise.resolve([]),
      delete: () => Promise.resolve(),
    };
    expect(new ValidatingPushNotificationStore(plain, guard).loadWithMetadata).toBeUndefined();
    expect(
      new ValidatingPushNotificationStore(new InMemoryPushNotificationStore(), guard).loadWithMetadata,
    ).toBeInstanceOf(Function);
  });
});
