import { randomUUID } from 'node:crypto';
import type { A2aVersion } from './protocol-version.js';

const V03_MESSAGE_METHODS = new Set(['message/send', 'message/stream']);

/**
 * A v0.3 message as people write it by hand — `{ "role": "user", "parts": [{ "text": "…" }] }`, the shape
 * docs/protocol.md §3 shows — lacks what the v0.3 schema requires but the server can supply without
 * guessing: the message's `messageId` (a new one is assigned), its `kind` ("message"), and each part's
 * `kind` when exactly one of `text`, `file` or `data` says which it is. Anything else stays as sent and
 * is checked as before. v1.0 messages are left untouched: v1.0 clients send their ids.
 */
export function completeV03Message(method: string, version: A2aVersion, params: unknown): void {
  if (version !== '0.3' || !V03_MESSAGE_METHODS.has(method) || !isObject(params)) return;
  const message = params.message;
  if (!isObject(message)) return;
  if (message.messageId === undefined) message.messageId = randomUUID();
  if (message.kind === undefined) message.kind = 'message';
  if (!Array.isArray(message.parts)) return;
  for (const part of message.parts as unknown[]) {
    if (!isObject(part) || part.kind !== undefined) continue;
    const kinds = [
      typeof part.text === 'string' ? 'text' : undefined,
      isObject(part.file) ? 'file' : undefined,
      isObject(part.data) ? 'data' : undefined,
    ].filter((kind) => kind !== undefined);
    if (kinds.length === 1) part.kind = kinds[0];
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
