import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource, type EntitySubscriberInterface, type QueryRunner } from 'typeorm';
import { AppConfig } from '../config/app.config.js';
import { DatabaseNotifications, type ChannelSubscription } from '../database/database-notifications.js';

/**
 * The channel the database's triggers (migration IdentityChangeNotifications) notify on when an API
 * key, a membership or a namespace changes; the payload is the cache key of what changed.
 */
export const IDENTITY_CHANNEL = 'cleveragents_identity';

/** Cache keys, exactly as the triggers spell them in their payloads. */
export const identityKey = {
  apiKey: (id: string) => `apikey:${id}`,
  member: (subject: string) => `member:${subject}`,
  namespace: (slug: string) => `namespace:${slug}`,
};

/** The payload of a TRUNCATE of an identity table. */
const EVERYTHING = '*';
/** Payloads a replica sends itself to learn that its listener has caught up (see `catchUp`). */
const BARRIER_PREFIX = 'sync:';
/** How long a commit waits for its barrier before the cache is dropped as unreliable. */
const BARRIER_TIMEOUT_MS = 1000;

/** Entries kept at most; the oldest goes first when full. */
const MAX_ENTRIES = 50_000;

interface Entry {
  value: unknown;
  expiresAt: number;
}

export interface IdentityCacheStats {
  enabled: boolean;
  live: boolean;
  size: number;
  hits: number;
  misses: number;
  evictions: number;
}

/**
 * What authentication reads on every request — an API key's stored record, a subject's memberships,
 * whether a namespace exists — kept in memory so that a known credential costs no database round trip.
 *
 * It is only trusted while this process listens to the database's identity notifications: triggers
 * on `api_keys`, `namespace_members` and `namespaces` notify every replica when a row changes, at the
 * commit, and the entry is dropped before the next request reads it. While the listening connection
 * is down nothing is served from memory (every lookup goes to the database) and everything is
 * dropped when it comes back, since notifications may have been missed in between. A lookup that was
 * under way when any notification arrived is not stored (it may have read the row before the change).
 * Entries also expire after CLEVERAGENTS_AUTH_CACHE_TTL_SECONDS.
 *
 * On PostgreSQL a notification travels on the listening connection and can arrive a moment after the
 * writer saw its commit. So that a change made through this replica (revoking a key, removing a
 * member, deleting a namespace) holds for the very next request, every transaction this replica
 * commits is followed by a barrier: it notifies the channel itself and waits until its own listener
 * hears that, which PostgreSQL delivers after every notification committed before it — by then the
 * other replicas' listeners have been sent the change too. On the embedded database notifications
 * are delivered before the commit returns and no barrier is needed.
 */
@Injectable()
export class IdentityCache implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(IdentityCache.name);
  private readonly entries = new Map<string, Entry>();
  private subscription: ChannelSubscription | undefined;
  private live = false;
  /** Bumped by every notification and reset: a lookup that saw another generation is not stored. */
  private generation = 0;
  private readonly barriers = new Map<string, () => void>();
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(
    private readonly config: AppConfig,
    private readonly notifications: DatabaseNotifications,
    private readonly dataSource: DataSource,
  ) {}

  /** A cache that keeps nothing: for the admin CLI and other one-shot users of the services. */
  static passThrough(): IdentityCache {
    return new IdentityCache(
      { authCacheTtlMs: 0 } as AppConfig,
      undefined as unknown as DatabaseNotifications,
      undefined as unknown as DataSource,
    );
  }

  get enabled(): boolean {
    return this.config.authCacheTtlMs > 0;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.enabled) return;
    this.subscription = await this.notifications.listen(IDENTITY_CHANNEL, {
      notify: (payload) => (payload.startsWith(BARRIER_PREFIX) ? this.barriers.get(payload)?.() : this.forget(payload)),
      reset: (live) => {
        this.live = live;
        this.generation += 1;
        this.entries.clear();
        if (!live) this.logger.warn('Identity notifications interrupted: credentials are read from the database');
      },
    });
    if (!this.notifications.deliveredAtCommit) {
      const subscriber: EntitySubscriberInterface = {
        afterTransactionCommit: (event) => this.catchUp(event.queryRunner),
      };
      this.dataSource.subscribers.push(subscriber);
    }
  }

  /**
   * After a commit on PostgreSQL: waits until this replica's listener has heard every notification
   * committed so far (a barrier it sends itself on the committing connection). Inner savepoints and
   * a cache that is not live need none; a barrier not heard in time drops the whole cache.
   */
  private async catchUp(runner: QueryRunner): Promise<void> {
    if (!this.live || runner.isTransactionActive) return;
    const token = `${BARRIER_PREFIX}${randomUUID()}`;
    let timer: NodeJS.Timeout | undefined;
    const heard = new Promise<boolean>((resolve) => {
      this.barriers.set(token, () => resolve(true));
      timer = setTimeout(() => resolve(false), BARRIER_TIMEOUT_MS);
    });
    try {
      // The transaction has committed: whatever happens here must not fail the caller's write.
      const sent = await runner.query('SELECT pg_notify($1, $2)', [IDENTITY_CHANNEL, token]).then(
        () => true,
        () => false,
      );
      if (!sent || !(await heard)) {
        this.logger.warn('Identity notifications lag: the credential cache is dropped');
        this.forget(EVERYTHING);
      }
    } finally {
      clearTimeout(timer);
      this.barriers.delete(token);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription?.close();
  }

  /**
   * The value under `key`, loading it with `load` when it is not held. `keep` decides whether a loaded
   * value may be kept (a key that does not exist is not: nothing would announce its creation).
   */
  async get<T>(key: string, load: () => Promise<T>, keep: (value: T) => boolean = () => true): Promise<T> {
    if (!this.live) return load();
    const now = Date.now();
    const held = this.entries.get(key);
    if (held && held.expiresAt > now) {
      this.hits += 1;
      return held.value as T;
    }
    this.misses += 1;
    const generation = this.generation;
    const value = await load();
    if (this.live && this.generation === generation && keep(value)) {
      if (held) this.entries.delete(key);
      if (this.entries.size >= MAX_ENTRIES) {
        const oldest = this.entries.keys().next().value;
        if (oldest !== undefined) this.entries.delete(oldest);
      }
      this.entries.set(key, { value, expiresAt: now + this.config.authCacheTtlMs });
    }
    return value;
  }

  /** Drops `key` (what a notification names, or what this process just changed); `*` drops everything. */
  forget(key: string): void {
    this.generation += 1;
    if (key === EVERYTHING) {
      this.evictions += this.entries.size;
      this.entries.clear();
    } else if (this.entries.delete(key)) {
      this.evictions += 1;
    }
  }

  stats(): IdentityCacheStats {
    return {
      enabled: this.enabled,
      live: this.live,
      size: this.entries.size,
      hits: this.hits,
      misses: this.misses,
      evictions: this.evictions,
    };
  }
}
