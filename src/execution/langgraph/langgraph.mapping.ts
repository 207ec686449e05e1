import { createHash } from 'node:crypto';
import type { AssembledContext } from '../actor-turn.js';
import { estimateTokens } from '../turn-values.js';

/** Fixed namespace of our thread ids, so that they never collide with ids minted by others. */
const THREAD_NAMESPACE = Buffer.from('5b0f4c8e2d7a4e6b9c1f0a3d6e8b7c21', 'hex');

/**
 * The LangGraph thread of a session: a version-5-style UUID of (namespace, owner, contextId), so the
 * mapping needs no storage and two owners of the same contextId never share a thread.
 */
export function langGraphThreadId(namespace: string, owner: string, contextId: string): string {
  const name = JSON.stringify([namespace, owner, contextId]);
  const bytes = createHash('sha1').update(THREAD_NAMESPACE).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Keeps the newest messages that fit `maxTokens` (all when unset), oldest first. */
export function trimToTokens(
  messages: AssembledContext['messages'],
  maxTokens: number | undefined,
): Pick<AssembledContext, 'messages' | 'estimatedTokens' | 'omittedMessages'> {
  let kept = 0;
  let tokens = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const cost = estimateTokens(messages[i].content);
    if (maxTokens !== undefined && tokens + cost > maxTokens) break;
    tokens += cost;
    kept += 1;
  }
  const start = messages.length - kept;
  return { messages: messages.slice(start), estimatedTokens: tokens, omittedMessages: start };
}
