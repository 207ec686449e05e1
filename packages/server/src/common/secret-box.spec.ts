import { describe, expect, it } from '@jest/globals';
import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { parseSecretKey, SecretBox, SecretBoxError, secretKeyId } from './secret-box.js';

const keyA = randomBytes(32);
const keyB = randomBytes(32);

/** The sealed value with its decoded bytes changed by `edit`, re-encoded. */
function withBytes(sealed: string, edit: (bytes: Buffer) => Buffer): string {
  const [version, id, data] = sealed.split(':');
  return `${version}:${id}:${edit(Buffer.from(data, 'base64')).toString('base64')}`;
}

function flipBit(at: number): (bytes: Buffer) => Buffer {
  return (bytes) => {
    const copy = Buffer.from(bytes);
    copy[at] ^= 0x01;
    return copy;
  };
}

describe('SecretBox', () => {
  it('opens what it sealed, the empty string and non-ASCII text included', () => {
    const box = new SecretBox([keyA]);
    for (const plaintext of ['s3cret', '', 'ünïcödé 🔑', 'x'.repeat(10_000)]) {
      expect(box.open(box.seal(plaintext))).toBe(plaintext);
    }
  });

  it('writes a versioned envelope naming the key, with a fresh IV every time', () => {
    const box = new SecretBox([keyA]);
    const first = box.seal('same');
    const second = box.seal('same');
    expect(first).toMatch(new RegExp(`^v1:${secretKeyId(keyA)}:[A-Za-z0-9+/]+=*$`));
    expect(first).not.toBe(second);
    expect(Buffer.from(first.split(':')[2], 'base64').subarray(0, 12)).not.toEqual(
      Buffer.from(second.split(':')[2], 'base64').subarray(0, 12),
    );
    expect(first).not.toContain('same');
    // 12 bytes of IV + 16 of tag + the ciphertext, as long as the plaintext.
    expect(Buffer.from(first.split(':')[2], 'base64')).toHaveLength(12 + 16 + 4);
  });

  it('detects tampering with the IV, the tag, the ciphertext or the key id', () => {
    const box = new SecretBox([keyA]);
    const sealed = box.seal('do not touch');
    for (const at of [0, 11, 12, 27, 28, 28 + 11]) {
      expect(() => box.open(withBytes(sealed, flipBit(at)))).toThrow(SecretBoxError);
    }
    expect(() => box.open(withBytes(sealed, (bytes) => bytes.subarray(0, bytes.length - 1)))).toThrow(SecretBoxError);
    expect(() => box.open(withBytes(sealed, (bytes) => Buffer.concat([bytes, Buffer.from([0])])))).toThrow(
      SecretBoxError,
    );
    expect(() => box.open(withBytes(sealed, (bytes) => bytes.subarray(0, 20)))).toThrow(/truncated/);
    const [, , data] = sealed.split(':');
    expect(() => box.open(`v1:00000000:${data}`)).toThrow(/not among the configured keys/);
  });

  it('refuses what is no envelope', () => {
    const box = new SecretBox([keyA]);
    const sealed = box.seal('x');
    for (const bad of [
      '',
      'plaintext',
      sealed.replace(/^v1/, 'v2'),
      `${sealed}:extra`,
      'v1:zz:AAAA',
      'v1:0a0b0c0d:%%%',
    ]) {
      expect(() => box.open(bad)).toThrow(SecretBoxError);
    }
  });

  it('fails with a clear error, not garbage, under another key', () => {
    const sealed = new SecretBox([keyA]).seal('for A only');
    expect(() => new SecretBox([keyB]).open(sealed)).toThrow(SecretBoxError);
    expect(() => new SecretBox([keyB]).open(sealed)).toThrow(
      `Sealed with key ${secretKeyId(keyA)}, which is not among the configured keys (${secretKeyId(keyB)})`,
    );
  });

  it('opens only in the context it sealed for', () => {
    const box = new SecretBox([keyA]);
    const sealed = box.seal('bound', 'row-1');
    expect(box.open(sealed, 'row-1')).toBe('bound');
    expect(() => box.open(sealed, 'row-2')).toThrow(/failed authentication/);
    expect(() => box.open(sealed)).toThrow(SecretBoxError);
  });

  it('rotates keys: the first seals, any opens', () => {
    const old = new SecretBox([keyA]);
    const rotated = new SecretBox([keyB, keyA]);
    const sealedBefore = old.seal('before rotation');
    expect(rotated.open(sealedBefore)).toBe('before rotation');
    const sealedAfter = rotated.seal('after rotation');
    expect(rotated.sealingKeyId).toBe(secretKeyId(keyB));
    expect(sealedAfter.split(':')[1]).toBe(secretKeyId(keyB));
    expect(() => old.open(sealedAfter)).toThrow(SecretBoxError);
    expect(new SecretBox([keyB]).open(sealedAfter)).toBe('after rotation');
  });

  it('takes 32-byte keys only, at least one', () => {
    expect(() => new SecretBox([])).toThrow();
    expect(() => new SecretBox([randomBytes(16)])).toThrow();
    expect(() => new SecretBox([keyA, randomBytes(31)])).toThrow();
  });

  it('does not keep a reference to the caller key buffer', () => {
    const key = Buffer.from(keyA);
    const box = new SecretBox([key]);
    const sealed = box.seal('x');
    key.fill(0);
    expect(box.open(sealed)).toBe('x');
  });
});

describe('parseSecretKey', () => {
  it('reads 32 bytes as base64 (padded or not, standard or URL-safe) or as 64 hex characters', () => {
    expect(parseSecretKey(keyA.toString('base64'))).toEqual(keyA);
    expect(parseSecretKey(keyA.toString('base64').replace(/=+$/, ''))).toEqual(keyA);
    expect(parseSecretKey(keyA.toString('base64url'))).toEqual(keyA);
    expect(parseSecretKey(keyA.toString('hex'))).toEqual(keyA);
    expect(parseSecretKey(keyA.toString('hex').toUpperCase())).toEqual(keyA);
    expect(parseSecretKey(`  ${keyA.toString('base64')}\n`)).toEqual(keyA);
  });

  it('refuses anything else', () => {
    for (const bad of [
      '',
      'password',
      randomBytes(16).toString('base64'),
      randomBytes(33).toString('base64'),
      randomBytes(31).toString('hex'),
      `${keyA.toString('base64')}!`,
      'é'.repeat(44),
    ]) {
      expect(parseSecretKey(bad)).toBeUndefined();
    }
  });

  it('gives a key id that is short, stable and different per key', () => {
    expect(secretKeyId(keyA)).toMatch(/^[0-9a-f]{8}$/);
    expect(secretKeyId(Buffer.from(keyA))).toBe(secretKeyId(keyA));
    expect(secretKeyId(keyB)).not.toBe(secretKeyId(keyA));
  });
});

describe('SecretBox signer', () => {
  it('signs as HMAC-SHA256 under a key derived for the purpose, prefixed with the key id', () => {
    const signature = new SecretBox([keyA]).signer.sign('approval-link', 'data');
    const derived = Buffer.from(hkdfSync('sha256', keyA, Buffer.alloc(0), 'cleveragents-signing\0approval-link', 32));
    const expected = createHmac('sha256', derived).update('data').digest('base64url');
    expect(signature).toBe(`${secretKeyId(keyA)}.${expected}`);
  });

  it('verifies its own signatures, and no other data, purpose, key or altered signature', () => {
    const signer = new SecretBox([keyA]).signer;
    const signature = signer.sign('p', 'data');
    expect(signer.verify('p', 'data', signature)).toBe(true);
    expect(signer.verify('p', 'datb', signature)).toBe(false);
    expect(signer.verify('q', 'data', signature)).toBe(false);
    expect(new SecretBox([keyB]).signer.verify('p', 'data', signature)).toBe(false);
    const [id, mac] = signature.split('.');
    const altered = `${id}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
    expect(signer.verify('p', 'data', altered)).toBe(false);
    for (const bad of ['', 'x', `${id}.`, `${id}.${mac}.x`, `zzzzzzzz.${mac}`, `${id}.${mac}=`]) {
      expect(signer.verify('p', 'data', bad)).toBe(false);
    }
  });

  it('keeps verifying signatures of a rotated-out key while it is still configured', () => {
    const signature = new SecretBox([keyA]).signer.sign('p', 'data');
    expect(new SecretBox([keyB, keyA]).signer.verify('p', 'data', signature)).toBe(true);
    expect(new SecretBox([keyB, keyA]).signer.sign('p', 'data').startsWith(secretKeyId(keyB))).toBe(true);
  });
});
