import { randomUUID } from 'node:crypto';
import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { DataSource, type EntitySubscriberInterface, type QueryRunner } from 'typeorm';
import { AppConfig } from '../config/app.config.js';
import {
  DatabaseNotifications,
  listenerCount,
  notifyThrough,
  sessionSetting,
  type ChannelSubscription,
} from '../database/database-notifications.js';

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
/** `sync:<token>`: every replica that hears it answers `ack:<token>:<replica>` (see `awaitReplicas`). */
const SYNC_PREFIX = 'sync:';
const ACK_PREFIX = 'ack:';
/** How long a commit that changed an identity waits for every replica's acknowledgement. */
const ACK_TIMEOUT_MS = 2000;
/** Set (transaction-local) by the identity triggers, so a commit knows it changed an identity. */
const CHANGED_SETTING = 'cleveragents.identity_changed';

/** Entries kept at most; the least recently used goes first when full. */
export const MAX_IDENTITY_ENTRIES = 50_000;
/** Absences (unknown key ids) kept at most, apart from the entries so that a flood of them evicts no entry. */
export const MAX_IDENTITY_ABSENCES = 10_000;

/** A value as kept (boxed: a loaded value may be anything, `undefined` included). */
interface Entry {
  value: unknown;
  /** A credential refused since the value was loaded (see `markRefused`). */
  refused?: boolean;
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
 * How the identity services read what authentication needs on every request: through the cache below
 * in the server, straight from the database in a one-shot process (UncachedIdentityReads).
 */
export abstract class IdentityReads {
  /**
   * The value under `key`, loading it with `load` when it is not held. `keep` decides whether a loaded
   * value may be kept; `rememberAbsent` whether one it refuses is kept as an absence.
   */
  abstract get<T>(
    key: string,
    load: () => Promise<T>,
    keep?: (value: T) => boolean,
    options?: { rememberAbsent?: boolean },
  ): Promise<T>;

  /**
   * What `get` would answer for `key` from memory alone, without loading: undefined when nothing is
   * held for it (or nothing may be served from memory). Lets the commonest request skip the awaits.
   */
  abstract held<T>(key: string): { value: T } | undefined;

  /**
   * Marks the value held under `key` as one a credential was refused against: true the first time in the
   * value's life in memory (the caller then pays the database read a key seen for the first time costs),
   * false after, or when nothing is held.
   */
  abstract markRefused(key: string): boolean;
}

/** Keeps nothing: every read loads. For the admin CLI and other one-shot users of the services. */
export class UncachedIdentityReads implements IdentityReads {
  get<T>(_key: string, load: () => Promise<T>): Promise<T> {
    return load();
  }

  held(): undefined {
    return undefined;
  }

  markRefused(): boolean {
    return false;
  }
}

/**
 * API key records, memberships and namespace existence kept in memory, trusted only while this process
 * hears the identity notifications (docs/design-notes.md#identity-cache, docs/security.md#credential-cache).
 */
@Injectable()
export class IdentityCache implements IdentityReads, OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(IdentityCache.name);
  private readonly entries: LRUCache<string, Entry>;
  private readonly absent: LRUCache<string, Entry>;
  private subscription: ChannelSubscription | undefined;
  private live = false;
  /** Bumped by every notification and reset: a lookup that saw another generation is not stored. */
  private generation = 0;
  /** This process's name in acknowledgements. */
  private readonly replica = randomUUID();
  /** Barrier token → the replicas that acknowledged it, and a callback for each new one. */
  private readonly barriers = new Map<string, { acked: Set<string>; onAck: () => void }>();
  /** Query runners whose open transaction changed an identity (read just before their commit). */
  private readonly changing = new WeakSet<QueryRunner>();
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(
    private readonly config: AppConfig,
    private readonly notifications: DatabaseNotifications,
    private readonly dataSource: DataSource,
  ) {
    // Expired entries are dropped when read, not by timers: no timer per entry, and none left at shutdown.
    // ttlResolution 0: each read takes the clock itself, instead of the cache keeping a timer running
    // to refresh a remembered clock every millisecond (and an entry expires at its TTL, not up to 1 ms later).
    // The bound is a size of one per entry, not `max`: with `max` the cache allocates all its slots up
    // front (14–19 ms of every start for these two); with `maxSize` they grow as entries come, and the
    // least recently used entry still goes first when the bound is reached.
    const ttl = Math.max(config.authCacheTtlMs, 0);
    const options = { ttl, ttlAutopurge: false, ttlResolution: 0, sizeCalculation: () => 1 };
    this.entries = new LRUCache<string, Entry>({ maxSize: MAX_IDENTITY_ENTRIES, ...options });
    this.absent = new LRUCache<string, Entry>({ maxSize: MAX_IDENTITY_ABSENCES, ...options });
  }

  get enabled(): boolean {
    return this.config.authCacheTtlMs > 0;
  }

  /** Opened while the other modules start; the application starts once it listens (onApplicationBootstrap). */
  private listening: Promise<ChannelSubscription> | undefined;

  onModuleInit(): void {
    if (this.enabled) this.listening = this.listen();
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.enabled) return;
    this.subscription = await (this.listening ??= this.listen());
    if (!this.notifications.deliveredAtCommit) {
      const subscriber: EntitySubscriberInterface = {
        beforeTransactionCommit: (event) => this.noteChange(event.queryRunner),
        afterTransactionCommit: (event) => this.awaitReplicas(event.queryRunner),
      };
      this.dataSource.subscribers.push(subscriber);
    }
  }

  private listen(): Promise<ChannelSubscription> {
    return this.notifications.listen(IDENTITY_CHANNEL, {
      notify: (payload) => this.heard(payload),
      reset: (live, closed) => {
        this.live = live;
        this.generation += 1;
        this.entries.clear();
        this.absent.clear();
        // Closed at shutdown is no interruption; only a connection lost is.
        if (!live && !closed) {
          this.logger.warn('Identity notifications interrupted: credentials are read from the database');
        }
      },
    });
  }

  private heard(payload: string): void {
    if (payload.startsWith(SYNC_PREFIX)) {
      // Everything notified before this token has been handled: say so.
      const token = payload.slice(SYNC_PREFIX.length);
      void this.subscription?.notify(`${ACK_PREFIX}${token}:${this.replica}`).catch(() => undefined);
    } else if (payload.startsWith(ACK_PREFIX)) {
      const [token, replica] = payload.slice(ACK_PREFIX.length).split(':');
      const barrier = this.barriers.get(token);
      if (barrier && replica) {
        barrier.acked.add(replica);
        barrier.onAck();
      }
    } else {
      this.forget(payload);
    }
  }

  /** Before a commit: did this transaction change an API key, a membership or a namespace? */
  private async noteChange(runner: QueryRunner): Promise<void> {
    if (!this.live) return;
    if ((await sessionSetting(runner, CHANGED_SETTING)) === 'on') this.changing.add(runner);
  }

  /**
   * After the commit of a transaction that changed an identity: waits until every replica listening
   * on the database has acknowledged a barrier sent after it, so none of them can still serve the
   * old entry. Never fails the caller's committed write; a replica that does not answer in time is
   * logged, and this replica drops its own cache if it did not hear itself.
   */
  private async awaitReplicas(runner: QueryRunner): Promise<void> {
    if (runner.isTransactionActive || !this.changing.has(runner)) return;
    this.changing.delete(runner);
    const token = randomUUID();
    const barrier = { acked: new Set<string>(), onAck: () => undefined as void };
    this.barriers.set(token, barrier);
    let timer: NodeJS.Timeout | undefined;
    try {
      const expected = await listenerCount(runner, IDENTITY_CHANNEL);
      const allAcked = new Promise<void>((resolve) => {
        barrier.onAck = () => (barrier.acked.size >= expected ? resolve() : undefined);
        timer = setTimeout(resolve, ACK_TIMEOUT_MS);
      });
      await notifyThrough(runner, IDENTITY_CHANNEL, `${SYNC_PREFIX}${token}`);
      if (expected > 0) await allAcked;
      if (barrier.acked.size < expected) {
        this.logger.warn({
          msg: 'Not every replica acknowledged an identity change in time',
          expected,
          acknowledged: barrier.acked.size,
        });
        if (!barrier.acked.has(this.replica)) this.forget(EVERYTHING);
      }
    } catch (error) {
      // The transaction has committed: the caller's write stands; this replica forgets everything.
      this.logger.warn({ msg: 'Identity change barrier failed', error: (error as Error).message });
      this.forget(EVERYTHING);
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
   * value may be kept. One it refuses (a thing that does not exist) is kept apart as an absence only
   * with `rememberAbsent`, for keys whose creation the triggers announce too (API keys; not namespaces).
   */
  async get<T>(
    key: string,
    load: () => Promise<T>,
    keep: (value: T) => boolean = () => true,
    options: { rememberAbsent?: boolean } = {},
  ): Promise<T> {
    const held = this.held<T>(key);
    if (held) return held.value;
    if (!this.live) return load();
    this.misses += 1;
    const generation = this.generation;
    const value = await load();
    // `live` was true above; a reset, the only thing that changes it, also bumps the generation.
    if (this.generation === generation) {
      const kept = keep(value);
      if (kept || options.rememberAbsent) {
        this.entries.delete(key);
        this.absent.delete(key);
        (kept ? this.entries : this.absent).set(key, { value });
      }
    }
    return value;
  }

  held<T>(key: string): { value: T } | undefined {
    if (!this.live) return undefined;
    const held = this.entries.get(key) ?? this.absent.get(key);
    if (held) this.hits += 1;
    return held as { value: T } | undefined;
  }

  markRefused(key: string): boolean {
    if (!this.live) return false;
    const held = this.entries.peek(key) ?? this.absent.peek(key);
    if (!held || held.refused) return false;
    held.refused = true;
    return true;
  }

  /** Drops `key` (what a notification names, or what this process just changed); `*` drops everything. */
  forget(key: string): void {
    this.generation += 1;
    if (key === EVERYTHING) {
      this.evictions += this.entries.size;
      this.entries.clear();
      this.absent.clear();
    } else if (this.entries.delete(key)) {
      this.evictions += 1;
    } else {
      this.absent.delete(key);
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
