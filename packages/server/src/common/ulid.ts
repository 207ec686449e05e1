import { randomFillSync } from 'node:crypto';
import { monotonicFactory as ulidMonotonicFactory, ulid as ulidOf } from 'ulid';

/**
 * ULIDs drawing their randomness from a pooled buffer of crypto bytes. The `ulid` package's default
 * source calls getRandomValues once per character (16 per id) and makes its source anew per call;
 * this one fills 4 KiB at a time, as crypto.randomUUID pools its bytes.
 */
const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let next = POOL_BYTES;

/** A fraction in [0, 1) from the next pooled random byte (a multiple of 1/256: ulid takes 5 bits of it). */
export function pooledRandom(): number {
  if (next === POOL_BYTES) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++] / 256;
}

/** A new ULID. */
export function ulid(): string {
  return ulidOf(undefined, pooledRandom);
}

/** ULIDs that keep increasing within one millisecond of one process; `seedTime` defaults to now. */
export function monotonicFactory(): (seedTime?: number) => string {
  return ulidMonotonicFactory(pooledRandom);
}
