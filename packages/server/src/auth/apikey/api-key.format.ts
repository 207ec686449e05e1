import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { monotonicFactory } from '../../common/ulid.js';

/**
 * The API key format: `ca_<id>_<secret>`. `id` is the key's ULID in lower case (its public prefix, a
 * primary-key lookup); `secret` is 32 random bytes in unpadded base64url (43 characters).
 */
const KEY_PATTERN = /^ca_([0-9a-hjkmnp-tv-z]{26})_([A-Za-z0-9_-]{43})$/;
const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const SECRET_BYTES = 32;
/** Keys minted in one millisecond by one process still list in the order they were made. */
const nextId = monotonicFactory();

export interface MintedApiKey {
  /** The key's id, a ULID in upper case as stored. */
  id: string;
  /** The whole key, shown to its owner once. */
  key: string;
  /** What is stored instead of the secret. */
  secretHash: string;
}

/** True when `value` has the shape of one of our keys (says nothing of its validity). */
export function looksLikeApiKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/** The id (upper case) and secret of a key, or undefined when `value` is no key of ours. */
export function parseApiKey(value: string): { id: string; secret: string } | undefined {
  const match = KEY_PATTERN.exec(value);
  return match ? { id: match[1].toUpperCase(), secret: match[2] } : undefined;
}

/** A new key with a fresh id and secret. */
export function mintApiKey(now: number = Date.now()): MintedApiKey {
  const id = nextId(now);
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  return { id, key: `ca_${id.toLowerCase()}_${secret}`, secretHash: hashSecret(secret) };
}

/**
 * sha256 of the secret, hex. The secret is 32 random bytes, far beyond guessing, so a slow KDF
 * (bcrypt, scrypt, argon2) would add cost to every request and no protection: those exist for
 * low-entropy passwords. The text is hashed, not its decoded bytes, so exactly one string verifies.
 * `crypto.hash` is the one-shot form of createHash/update/digest (the same digest, without a Hash
 * object per call): this runs on every request that carries a key.
 */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}

/** What a key list shows of a key: enough to recognise it, nothing to use it. */
export function apiKeyPrefix(id: string): string {
  return `ca_${id.toLowerCase()}_…`;
}

/** True for a ULID in either case. */
export function isApiKeyId(value: string): boolean {
  return ULID_PATTERN.test(value.toUpperCase());
}
