import type http from 'node:http';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { A2A_PROTOCOL_VERSION, type StreamResponse, type Task, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import {
  V1PushNotificationSerializer,
  type PushNotificationSender,
  type PushNotificationSerializer,
  type PushNotificationStore,
  type ServerCallContext,
  type StoredPushNotificationConfig,
} from '@a2a-js/sdk/server';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import { context as otel, type Context } from '@opentelemetry/api';
import { AppConfig } from '../config/app.config.js';
import { OutboundMetrics } from '../metrics/outbound-metrics.js';
import { CA_TASK_ID } from '../telemetry/attributes.js';
import { WebhookUrlGuard } from './webhook-url.guard.js';
import { GuardedWebhookPoster, redactUrl, type GuardedPushSenderOptions } from './guarded-webhook.poster.js';
import { ValidatingPushNotificationStore } from './validating-push-notification.store.js';

const LEGACY_PROTOCOL_VERSION = '0.3';
/** The SDK's DefaultPushNotificationSender default for the legacy token header. */
const TOKEN_HEADER = 'X-A2A-Notification-Token';

export type { GuardedPushSenderOptions };

/** Provider token of the sender's options (tests shorten its back-off); absent in the server: the defaults. */
export const GUARDED_PUSH_SENDER_OPTIONS = Symbol('GUARDED_PUSH_SENDER_OPTIONS');

/**
 * The SDK's PushNotificationSender, serialised as the SDK's, delivered through an SSRF-proof client with
 * retries, in order per task (docs/design-notes.md#guarded-push-sender).
 */
@Injectable()
export class GuardedPushNotificationSender implements PushNotificationSender {
  private readonly logger = new Logger(GuardedPushNotificationSender.name);
  private readonly chains = new Map<string, Promise<void>>();
  private readonly serializers = new Map<string, PushNotificationSerializer>([
    [A2A_PROTOCOL_VERSION, new V1PushNotificationSerializer()],
    [LEGACY_PROTOCOL_VERSION, new V03PushNotificationSerializer()],
  ]);
  private readonly warnedVersions = new Set<string>();
  private readonly poster: GuardedWebhookPoster;

  constructor(
    @Inject(ValidatingPushNotificationStore) private readonly store: PushNotificationStore,
    guard: WebhookUrlGuard,
    config: AppConfig,
    @Optional() @Inject(GUARDED_PUSH_SENDER_OPTIONS) options: GuardedPushSenderOptions = {},
    @Optional() metrics?: OutboundMetrics,
  ) {
    this.poster = new GuardedWebhookPoster(guard, config, options, this.logger, metrics);
  }

  /**
   * Resolves once this notification has been delivered (or given up on); never rejects. Called for an event
   * once it is stored (TaskRecording), and only for a task that has push configs as of that commit.
   */
  send(streamResponse: StreamResponse, context: ServerCallContext, task?: Task): Promise<void> {
    const taskId = taskIdOf(streamResponse);
    if (!taskId) return Promise.resolve();
    // Snapshot now: the handler keeps mutating its objects while earlier sends are still queued.
    const event = structuredClone(streamResponse);
    const snapshot = task ? structuredClone(task) : undefined;
    // Delivered after the call that published the event may have returned: its spans stay in that one's trace.
    const parent = otel.active();
    const previous = this.chains.get(taskId) ?? Promise.resolve();
    // Whatever goes wrong is logged here: a rejection would end as a bare stack trace on stderr.
    const current = previous
      .then(() => this.dispatch(taskId, event, context, parent, snapshot))
      .catch((error: unknown) =>
        this.logger.error({ msg: 'push notification could not be sent', taskId, error: describe(error) }),
      );
    this.chains.set(taskId, current);
    return current.finally(() => {
      if (this.chains.get(taskId) === current) this.chains.delete(taskId);
    });
  }

  /**
   * Resolves true once no notification is being sent (those queued meanwhile included), false when
   * `timeoutMs` passes first: a shutdown lets them read their configs before the database closes.
   */
  async drained(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const settled = async (): Promise<true> => {
      while (this.chains.size > 0) await Promise.all(this.chains.values());
      return true;
    };
    try {
      return await Promise.race([settled(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async dispatch(
    taskId: string,
    event: StreamResponse,
    context: ServerCallContext,
    parent: Context,
    task?: Task,
  ): Promise<void> {
    let configs: StoredPushNotificationConfig[];
    try {
      configs = await this.loadConfigs(taskId, context);
    } catch (error) {
      this.logger.error({ msg: 'push notification configs could not be loaded', taskId, error: describe(error) });
      return;
    }
    await Promise.all(configs.map((stored) => this.deliver(taskId, stored, event, parent, task)));
  }

  private async loadConfigs(taskId: string, context: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    if (this.store.loadWithMetadata) return this.store.loadWithMetadata(taskId, context);
    // As the SDK does: a store without wire versions gets the triggering request's version.
    const wireVersion = context.requestedVersion || LEGACY_PROTOCOL_VERSION;
    return (await this.store.load(taskId, context)).map((config) => ({ config, wireVersion }));
  }

  private async deliver(
    taskId: string,
    stored: StoredPushNotificationConfig,
    event: StreamResponse,
    parent: Context,
    task?: Task,
  ): Promise<void> {
    const { config, wireVersion } = stored;
    const where = { taskId, configId: config.id, url: redactUrl(config.url), wireVersion };
    let body: string;
    let contentType: string;
    try {
      ({ body, contentType } = this.serializerFor(wireVersion).serialize(event, task));
    } catch (error) {
      this.logger.error({ msg: 'push notification could not be serialized', ...where, error: describe(error) });
      return;
    }
    const headers: http.OutgoingHttpHeaders = {
      'Content-Type': contentType,
      'Content-Length': Buffer.byteLength(body),
      ...authHeaders(config),
    };
    await this.poster.post({
      url: config.url,
      headers,
      body,
      what: 'push notification',
      where,
      event: eventOf(event),
      parent,
      attributes: { [CA_TASK_ID]: taskId },
    });
  }

  private serializerFor(wireVersion: string): PushNotificationSerializer {
    const serializer = this.serializers.get(wireVersion);
    if (serializer) return serializer;
    if (!this.warnedVersions.has(wireVersion)) {
      this.warnedVersions.add(wireVersion);
      this.logger.warn({
        msg: `no push notification serializer for wire version; using ${A2A_PROTOCOL_VERSION}`,
        wireVersion,
      });
    }
    return this.serializers.get(A2A_PROTOCOL_VERSION)!;
  }
}

function taskIdOf(streamResponse: StreamResponse): string {
  const payload = streamResponse.payload;
  switch (payload?.$case) {
    case 'task':
      return payload.value.id;
    case 'message':
    case 'statusUpdate':
    case 'artifactUpdate':
      return payload.value.taskId;
    case undefined:
      return '';
    default: {
      const unhandled: never = payload;
      throw new Error(`Unknown stream response ${JSON.stringify(unhandled)}`);
    }
  }
}

/** The kind of event a notification carries, as its span names it. */
function eventOf(streamResponse: StreamResponse): string {
  switch (streamResponse.payload?.$case) {
    case 'task':
      return 'task';
    case 'message':
      return 'message';
    case 'statusUpdate':
      return 'status-update';
    case 'artifactUpdate':
      return 'artifact-update';
    case undefined:
      return 'webhook';
  }
}

/** The same credentials, in the same headers, as the SDK's DefaultPushNotificationSender. */
function authHeaders(config: TaskPushNotificationConfig): Record<string, string> {
  if (config.authentication?.scheme && config.authentication.credentials) {
    return { Authorization: `${config.authentication.scheme} ${config.authentication.credentials}` };
  }
  if (config.token) return { [TOKEN_HEADER]: config.token };
  return {};
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
