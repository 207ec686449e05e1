import { createHash } from 'node:crypto';
import type { AssembledContext, TurnInput } from '../actor-turn.js';

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

/** The text of a serialised LangChain message's content: a string, or the text blocks of a list. */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block: unknown) => {
      if (typeof block === 'string') return block;
      const { type, text } = (block ?? {}) as { type?: unknown; text?: unknown };
      return type === 'text' && typeof text === 'string' ? text : '';
    })
    .join('');
}

/** Serialised message types (`messages-tuple` chunks, thread state) as our roles. */
export function roleOf(type: unknown): AssembledContext['messages'][number]['role'] | undefined {
  switch (type) {
    case 'human':
    case 'HumanMessageChunk':
    case 'user':
      return 'user';
    case 'ai':
    case 'AIMessageChunk':
    case 'assistant':
      return 'assistant';
    case 'system':
    case 'SystemMessageChunk':
      return 'system';
    case 'tool':
    case 'ToolMessageChunk':
      return 'tool';
    default:
      return undefined;
  }
}

/** The question a client is shown for an interrupt value: the value's own words where it has them. */
export function interruptQuestion(value: unknown): string {
  if (typeof value === 'string' && value.trim() !== '') return value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const key of ['question', 'message', 'prompt', 'text', 'description']) {
      const candidate = (value as Record<string, unknown>)[key];
      if (typeof candidate === 'string' && candidate.trim() !== '') return candidate;
    }
  }
  return `The agent is waiting for input: ${JSON.stringify(value) ?? 'null'}`;
}

/** What answers an interrupt (`Command({resume})`): the client's first data part, else its text. */
export function resumeValue(input: TurnInput): unknown {
  return input.data.length > 0 ? input.data[0] : input.text;
}

/** Rough token count used for trimming: characters ÷ 4, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
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
