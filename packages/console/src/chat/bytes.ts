/**
 * The A2A SDK's wire codec turns a file part's bytes into base64 (and back) with Node's `Buffer`, which a
 * browser lacks: without it, a message with an attachment cannot be sent and a stored one cannot be read.
 * This gives the SDK the little of `Buffer` it uses (`from` bytes or base64, `toString('base64')`,
 * `isBuffer`), in the browser only.
 */
class Bytes extends Uint8Array {
  override toString(encoding?: string): string {
    if (encoding !== 'base64') return new TextDecoder().decode(this);
    let binary = '';
    // In slices: String.fromCharCode takes its arguments on the stack.
    for (let at = 0; at < this.length; at += 0x8000) {
      binary += String.fromCharCode(...this.subarray(at, at + 0x8000));
    }
    return btoa(binary);
  }
}

const bytesCodec = {
  from(value: ArrayLike<number> | ArrayBufferLike | string, encoding?: string): Bytes {
    if (typeof value !== 'string') return new Bytes(value as ArrayLike<number>);
    if (encoding !== 'base64') return new Bytes(new TextEncoder().encode(value));
    const binary = atob(value);
    const bytes = new Bytes(binary.length);
    for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    return bytes;
  },
  isBuffer(value: unknown): boolean {
    return value instanceof Bytes;
  },
};

const scope = globalThis as { Buffer?: unknown };
scope.Buffer ??= bytesCodec;
