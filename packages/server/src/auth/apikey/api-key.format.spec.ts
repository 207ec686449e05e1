import { describe, expect, it } from '@jest/globals';
import {
  apiKeyPrefix,
  hashSecret,
  isApiKeyId,
  looksLikeApiKey,
  mintApiKey,
  parseApiKey,
  secretMatches,
} from './api-key.format.js';

describe('API key format', () => {
  it('mints ca_<lowercase ulid>_<43 base64url characters>, each key different', () => {
    const a = mintApiKey();
    const b = mintApiKey();
    expect(a.key).toMatch(/^ca_[0-9a-hjkmnp-tv-z]{26}_[A-Za-z0-9_-]{43}$/);
    expect(a.key).toHaveLength(73);
    expect(a.key.slice(3, 29)).toBe(a.id.toLowerCase());
    expect(a.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(b.key).not.toBe(a.key);
    expect(b.id).not.toBe(a.id);
    expect(Buffer.from(a.key.slice(30), 'base64url')).toHaveLength(32);
  });

  it('parses what it minted, and the stored hash matches only its secret', () => {
    const minted = mintApiKey();
    const parsed = parseApiKey(minted.key);
    expect(parsed?.id).toBe(minted.id);
    expect(secretMatches(parsed!.secret, minted.secretHash)).toBe(true);
    expect(minted.secretHash).toBe(hashSecret(parsed!.secret));
    expect(minted.secretHash).toMatch(/^[0-9a-f]{64}$/);
    expect(minted.key).not.toContain(minted.secretHash);
    const other = mintApiKey();
    expect(secretMatches(parseApiKey(other.key)!.secret, minted.secretHash)).toBe(false);
    expect(secretMatches(parsed!.secret, 'not-hex')).toBe(false);
  });

  it('recognises the shape only', () => {
    const { key } = mintApiKey();
    expect(looksLikeApiKey(key)).toBe(true);
    for (const other of [
      '',
      key.slice(0, -1),
      `${key}A`,
      key.toUpperCase(),
      key.replace('ca_', 'cb_'),
      `Bearer ${key}`,
      'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln',
      `ca_${'i'.repeat(26)}_${'a'.repeat(43)}`, // I is not a Crockford digit
    ]) {
      expect(looksLikeApiKey(other)).toBe(false);
      expect(parseApiKey(other)).toBeUndefined();
    }
  });

  it('shows a prefix that names the key without its secret', () => {
    const minted = mintApiKey();
    expect(apiKeyPrefix(minted.id)).toBe(`ca_${minted.id.toLowerCase()}_…`);
    expect(minted.key.startsWith(apiKeyPrefix(minted.id).slice(0, -1))).toBe(true);
  });

  it('tells ids from other strings', () => {
    const { id } = mintApiKey();
    expect(isApiKeyId(id)).toBe(true);
    expect(isApiKeyId(id.toLowerCase())).toBe(true);
    expect(isApiKeyId(id.slice(1))).toBe(false);
    expect(isApiKeyId('x'.repeat(26).replace('x', 'U'))).toBe(false);
  });
});
