import type { RateLimitSettings } from '../config/app.config.js';

/** The answer for one call: allowed, or refused with the seconds after which a call would pass. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * A token bucket per key (a principal's subject, or the client address for failed authentication):
 * `burst` calls at once, refilled continuously at `perMinute`. In-process: each replica limits on its
 * own, so the effective limit behind a load balancer is per replica. The map is bounded: when it is
 * full, buckets that have refilled completely (and so carry no state) are dropped first, then the
 * oldest.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;

  constructor(
    private readonly settings: RateLimitSettings,
    private readonly maxKeys = 100_000,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.perMs = settings.perMinute / 60_000;
  }

  get enabled(): boolean {
    return this.settings.perMinute > 0;
  }

  take(key: string): RateDecision {
    if (!this.enabled) return { allowed: true };
    const now = this.now();
    const burst = this.settings.burst;
    const bucket = this.buckets.get(key);
    const tokens = bucket ? Math.min(burst, bucket.tokens + (now - bucket.at) * this.perMs) : burst;
    if (tokens >= 1) {
      if (!bucket) this.evictIfFull(now);
      // Re-inserting keeps the map in least-recently-used order for eviction.
      this.buckets.delete(key);
      this.buckets.set(key, { tokens: tokens - 1, at: now });
      return { allowed: true };
    }
    this.buckets.set(key, { tokens, at: now });
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / this.perMs / 1000)) };
  }

  private evictIfFull(now: number): void {
    if (this.buckets.size < this.maxKeys) return;
    const full = this.settings.burst;
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * this.perMs >= full) this.buckets.delete(key);
    }
    if (this.buckets.size < this.maxKeys) return;
    const oldest = this.buckets.keys().next().value;
    if (oldest !== undefined) this.buckets.delete(oldest);
  }
}
