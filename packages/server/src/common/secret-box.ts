import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

/** AES-256: every key is exactly this many bytes. */
export const SECRET_KEY_BYTES = 32;

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[0-9a-f]{8}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;
const HEX_KEY = new RegExp(`^[0-9a-fA-F]{${SECRET_KEY_BYTES * 2}}$`);

/** A sealed value that cannot be opened: altered, not an envelope, or sealed with another key. */
export class SecretBoxError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SecretBoxError';
  }
}

/**
 * A 32-byte key written as 64 hex characters or as base64 (standard or URL-safe, padding optional),
 * e.g. the output of `openssl rand -base64 32`; undefined when the text is neither.
 */
export function parseSecretKey(text: string): Buffer | undefined {
  const value = text.trim();
  if (HEX_KEY.test(value)) return Buffer.from(value, 'hex');
  if (!BASE64.test(value) && !BASE64URL.test(value)) return undefined;
  const key = Buffer.from(value, BASE64.test(value) ? 'base64' : 'base64url');
  return key.length === SECRET_KEY_BYTES ? key : undefined;
}

/** A short, public name of a key: the first 4 bytes of a SHA-256 over it, in hex. Says nothing of the key. */
export function secretKeyId(key: Buffer): string {
  return createHash('sha256')
    .update('cleveragents-secret-box-key-id\0')
    .update(key)
    .digest()
    .subarray(0, 4)
    .toString('hex');
}

/**
 * Authenticated encryption of small secrets (AES-256-GCM, a random 12-byte IV per value). A sealed
 * value is self-describing: `v1:<key id>:<base64 of iv | tag | ciphertext>`. Keys rotate: the first
 * key seals, any key opens the values sealed with it, found by the key id. An optional `context`
 * (associated data) binds a value to where it belongs: it opens only with the same context.
 */
export class SecretBox {
  private readonly keys: readonly { id: string; key: Buffer }[];

  constructor(keys: readonly Buffer[]) {
    if (keys.length === 0) throw new Error('SecretBox needs at least one key');
    for (const key of keys) {
      if (key.length !== SECRET_KEY_BYTES) throw new Error(`SecretBox keys are ${SECRET_KEY_BYTES} bytes long`);
    }
    this.keys = keys.map((key) => ({ id: secretKeyId(key), key: Buffer.from(key) }));
  }

  /** Signatures with these keys (docs/security.md#approval-webhooks). */
  get signer(): SecretBoxSigner {
    return new SecretBoxSigner(this.keys);
  }

  /** Id of the key that seals. */
  get sealingKeyId(): string {
    return this.keys[0].id;
  }

  seal(plaintext: string, context = ''): string {
    const { id, key } = this.keys[0];
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(associatedData(id, context));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const data = Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
    return `${VERSION}:${id}:${data}`;
  }

  /** The plaintext of a value `seal` returned; throws SecretBoxError when it cannot be opened. */
  open(sealed: string, context = ''): string {
    const parts = sealed.split(':');
    const [version] = parts;
    const id = parts.at(1) ?? '';
    const data = parts.at(2) ?? '';
    if (version !== VERSION || parts.length > 3 || !KEY_ID.test(id) || !BASE64.test(data)) {
      throw new SecretBoxError(`Not a sealed value (expected "${VERSION}:<key id>:<base64>")`);
    }
    const bytes = Buffer.from(data, 'base64');
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError('Sealed value is truncated');
    const candidates = this.keys.filter((k) => k.id === id);
    if (candidates.length === 0) {
      throw new SecretBoxError(
        `Sealed with key ${id}, which is not among the configured keys (${this.keys.map((k) => k.id).join(', ')})`,
      );
    }
    const iv = bytes.subarray(0, IV_BYTES);
    const tag = bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
    const ciphertext = bytes.subarray(IV_BYTES + TAG_BYTES);
    for (const { key } of candidates) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(associatedData(id, context));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
      } catch {
        // Authentication failed with this key: try the next one with the same id, if any.
      }
    }
    throw new SecretBoxError(
      `Sealed value failed authentication with key ${id}: it was altered, or sealed for another context`,
    );
  }
}

/**
 * Signing with the same keys: `sign(purpose, data)` is `<key id>.<base64url HMAC-SHA256>`, keyed by a key derived
 * (HKDF-SHA256) from the sealing key for `purpose` alone, so that no two purposes (nor sealing) share a key.
 * `verify` accepts a signature made with any configured key: signatures survive a key rotation as sealed values do.
 */
export class SecretBoxSigner {
  constructor(private readonly keys: readonly { id: string; key: Buffer }[]) {}

  sign(purpose: string, data: string): string {
    const { id, key } = this.keys[0];
    return `${id}.${mac(key, purpose, data)}`;
  }

  verify(purpose: string, data: string, signature: string): boolean {
    const [id = '', given = '', ...rest] = signature.split('.');
    if (rest.length > 0 || !KEY_ID.test(id) || given === '' || !BASE64URL.test(given)) return false;
    const received = Buffer.from(given, 'base64url');
    return this.keys
      .filter((k) => k.id === id)
      .some(({ key }) => {
        const expected = Buffer.from(mac(key, purpose, data), 'base64url');
        return expected.length === received.length && timingSafeEqual(expected, received);
      });
  }
}

function mac(key: Buffer, purpose: string, data: string): string {
  const derived = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `cleveragents-signing\0${purpose}`, 32));
  return createHmac('sha256', derived).update(data, 'utf8').digest('base64url');
}

/** The envelope header and the caller's context, authenticated with the ciphertext. */
function associatedData(keyId: string, context: string): Buffer {
  return Buffer.from(`${VERSION}:${keyId}:${context}`, 'utf8');
}
