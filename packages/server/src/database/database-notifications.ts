import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';
import { DataSource, type QueryRunner } from 'typeorm';
import { AppConfig } from '../config/app.config.js';
import { EmbeddedDataSource } from './data-source.factory.js';

/** What a subscriber to a notification channel hears. */
export interface ChannelListener {
  /** One NOTIFY payload on the channel, delivered once its transaction committed. */
  notify(payload: string): void;
  /**
   * The subscription went live (`true`) or was lost (`false`). Between a `false` and the next
   * `true` notifications may be missed, so anything kept on their strength must be dropped on both.
   * `closed` is true when the loss is the subscription's own close (shutdown), not a fault.
   */
  reset(live: boolean, closed?: boolean): void;
}

export interface ChannelSubscription {
  readonly live: boolean;
  /** Notifies the channel from this subscription's own connection (PostgreSQL; embedded: through PGlite). */
  notify(payload: string): Promise<void>;
  close(): Promise<void>;
}

/** How the PostgreSQL listener keeps its connection honest. */
export interface NotificationTimings {
  /** A `SELECT 1` on the listening connection this often; a silent half-open connection is noticed. */
  heartbeatMs: number;
  /** How long connecting or a heartbeat may take before the connection counts as lost. */
  timeoutMs: number;
  /** Reconnect back-off: first and longest wait. */
  retryMinMs: number;
  retryMaxMs: number;
}

const DEFAULT_TIMINGS: NotificationTimings = {
  heartbeatMs: 10_000,
  timeoutMs: 5_000,
  retryMinMs: 100,
  retryMaxMs: 5_000,
};
const CHANNEL_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/**
 * How a replica's connection listening on `channel` shows in `pg_stat_activity`: one name per
 * channel, so that counting a channel's listeners counts replicas.
 */
export function listenerApplicationName(channel: string): string {
  return `cleveragents-server:listen:${channel}`;
}

/**
 * How many connections listen on `channel` (replicas, see listenerApplicationName), asked through
 * `runner`: a commit hook asks on the connection that committed.
 */
export async function listenerCount(runner: QueryRunner, channel: string): Promise<number> {
  const rows = (await runner.query(
    `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
    [listenerApplicationName(channel)],
  )) as { n: string }[];
  return Number(rows.at(0)?.n ?? 0);
}

/** Notifies `payload` on `channel` through `runner`'s connection. */
export async function notifyThrough(runner: QueryRunner, channel: string, payload: string): Promise<void> {
  await runner.query('SELECT pg_notify($1, $2)', [channel, payload]);
}

/** The setting `name` of `runner`'s session or open transaction, null when it is not set. */
export async function sessionSetting(runner: QueryRunner, name: string): Promise<string | null> {
  const rows = (await runner.query('SELECT current_setting($1, true) AS value', [name])) as { value: string | null }[];
  return rows.at(0)?.value ?? null;
}

/** A notification payload's JSON object, or undefined when the payload is not one (then it is ignored). */
export function payloadObject<T>(payload: string): Partial<T> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return undefined;
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
}

/**
 * LISTEN/NOTIFY on the server's database, for in-process caches that must forget what another
 * replica changed. On PostgreSQL each channel has a dedicated connection outside the pool (a pooled
 * one would be handed to queries) that reconnects with back-off and sends a heartbeat; on the
 * embedded database PGlite delivers the notifications of its one connection itself, before the
 * committing query returns.
 */
@Injectable()
export class DatabaseNotifications implements OnApplicationShutdown {
  private readonly logger = new Logger(DatabaseNotifications.name);
  private readonly subscriptions = new Set<ChannelSubscription>();
  /** PostgreSQL's connection string (a listening connection is opened outside the pool); none when embedded. */
  private readonly connectionString: string | undefined;
  private readonly timings: NotificationTimings = DEFAULT_TIMINGS;

  constructor(
    private readonly dataSource: DataSource,
    config: AppConfig,
  ) {
    this.connectionString = config.database.kind === 'postgres' ? config.database.url : undefined;
  }

  /**
   * True on the embedded database, where a notification reaches its listeners before the committing
   * query returns; on PostgreSQL it travels on another connection and may arrive a moment later.
   */
  get deliveredAtCommit(): boolean {
    return this.dataSource instanceof EmbeddedDataSource;
  }

  /** Subscribes to `channel`; resolves once the first attempt to listen succeeded or failed. */
  async listen(channel: string, listener: ChannelListener): Promise<ChannelSubscription> {
    if (!CHANNEL_NAME.test(channel)) throw new Error(`Invalid notification channel name "${channel}"`);
    const subscription =
      this.dataSource instanceof EmbeddedDataSource
        ? await EmbeddedSubscription.open(this.dataSource, channel, listener)
        : await PostgresSubscription.open(this.connectionString, channel, listener, this.timings, this.logger);
    this.subscriptions.add(subscription);
    return subscription;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.subscriptions].map((subscription) => subscription.close()));
    this.subscriptions.clear();
  }
}

class EmbeddedSubscription implements ChannelSubscription {
  live = true;

  private constructor(
    private readonly dataSource: EmbeddedDataSource,
    private readonly channel: string,
    private readonly unlisten: () => Promise<void>,
    private readonly listener: ChannelListener,
  ) {}

  static async open(dataSource: EmbeddedDataSource, channel: string, listener: ChannelListener) {
    const unlisten = await dataSource.pglite.listen(channel, (payload) => listener.notify(payload));
    listener.reset(true);
    return new EmbeddedSubscription(dataSource, channel, unlisten, listener);
  }

  async notify(payload: string): Promise<void> {
    await this.dataSource.query('SELECT pg_notify($1, $2)', [this.channel, payload]);
  }

  async close(): Promise<void> {
    if (!this.live) return;
    this.live = false;
    this.listener.reset(false, true);
    await this.unlisten().catch(() => undefined);
  }
}

/** A channel's own connection to PostgreSQL: LISTEN, a heartbeat, NOTIFY, reconnecting with back-off. */
export class PostgresSubscription implements ChannelSubscription {
  live = false;
  private client: pg.Client | undefined;
  /** The connection's queries, one at a time (the heartbeat and notifications share it; pg 9 refuses a query sent while another runs). */
  private queries: Promise<unknown> = Promise.resolve();
  private closed = false;
  private retryMs: number;
  private retryTimer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;

  private constructor(
    private readonly connectionString: string,
    private readonly channel: string,
    private readonly listener: ChannelListener,
    private readonly timings: NotificationTimings,
    private readonly logger: Logger,
  ) {
    this.retryMs = timings.retryMinMs;
  }

  static async open(
    connectionString: string | undefined,
    channel: string,
    listener: ChannelListener,
    timings: NotificationTimings,
    logger: Logger,
  ): Promise<PostgresSubscription> {
    if (!connectionString) throw new Error('Listening on PostgreSQL needs its connection string');
    const subscription = new PostgresSubscription(connectionString, channel, listener, timings, logger);
    await subscription.connect();
    return subscription;
  }

  async notify(payload: string): Promise<void> {
    if (!this.client || !this.live) throw new Error(`Not listening on ${this.channel}`);
    await this.query(this.client, 'SELECT pg_notify($1, $2)', [this.channel, payload]);
  }

  async close(): Promise<void> {
    // Closed twice (by its owner, then at shutdown): the listener hears of it once.
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    await this.drop(undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.connectionString,
      application_name: listenerApplicationName(this.channel),
      connectionTimeoutMillis: this.timings.timeoutMs,
      keepAlive: true,
    });
    this.client = client;
    this.queries = Promise.resolve();
    client.on('notification', (message) => {
      if (message.channel === this.channel && this.client === client) this.listener.notify(message.payload ?? '');
    });
    client.on('error', (error) => void this.drop(client, error));
    client.on('end', () => void this.drop(client, new Error('connection ended')));
    try {
      await client.connect();
      await this.query(client, `LISTEN ${this.channel}`);
    } catch (error) {
      await this.drop(client, error as Error);
      return;
    }
    // close() meanwhile dropped the client, as did a failure: either way it is no longer the current one.
    if (this.client !== client) return;
    this.retryMs = this.timings.retryMinMs;
    this.live = true;
    this.listener.reset(true);
    this.heartbeat = setInterval(() => void this.beat(client), this.timings.heartbeatMs);
    this.heartbeat.unref();
  }

  private async beat(client: pg.Client): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('heartbeat timed out')), this.timings.timeoutMs);
    });
    try {
      await Promise.race([this.query(client, 'SELECT 1'), timeout]);
    } catch (error) {
      await this.drop(client, error as Error);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs `sql` on `client` once the connection's earlier queries have ended. */
  private query(client: pg.Client, sql: string, values?: unknown[]): Promise<pg.QueryResult> {
    const run = this.queries.then(() => client.query(sql, values));
    this.queries = run.catch(() => undefined);
    return run;
  }

  /** Forgets `client` (if it is still the current one), tells the listener, and plans a reconnect. */
  private async drop(client: pg.Client | undefined, error?: Error): Promise<void> {
    const current = this.client;
    if (client !== undefined && current !== client) return;
    this.client = undefined;
    clearInterval(this.heartbeat);
    const wasLive = this.live;
    this.live = false;
    if (wasLive || this.closed) this.listener.reset(false, this.closed);
    if (current) await current.end().catch(() => undefined);
    if (this.closed) return;
    this.logger.warn({
      msg: `Listening for ${this.channel} notifications failed; retrying`,
      error: error?.message,
      retryInMs: this.retryMs,
    });
    this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, this.timings.retryMaxMs);
  }
}
