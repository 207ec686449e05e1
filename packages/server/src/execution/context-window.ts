import { SystemMessage, type BaseMessage } from '@langchain/core/messages';
import type { AssembledContext } from './actor-turn.js';
import { contentText, estimateTokens, roleOfType } from './turn-values.js';

/** The system prompt of an actor that defines none. */
export const DEFAULT_SYSTEM_PROMPT =
  'You are CleverAgents, a helpful assistant. Answer the user clearly and concisely; say so when you do not know.';

/** The conversation budget of a model call when the caller names none (prompt side, not the answer). */
export const DEFAULT_CONTEXT_TOKENS = 16_000;

type Role = AssembledContext['messages'][number]['role'];

/** The text of a message: its string content, or its text blocks joined. */
export function messageText(message: BaseMessage): string {
  return contentText(message.content);
}

/** A message's role; anything unknown counts as the user's. */
export function roleOf(message: BaseMessage): Role {
  return roleOfType(message.type) ?? 'user';
}

/** What one model call is given: the system prompt, then the newest messages that fit. */
export interface ContextWindow {
  messages: BaseMessage[];
  estimatedTokens: number;
  omittedMessages: number;
}

/**
 * The model input for `conversation` under a budget of `maxTokens`: the system prompt, then the
 * longest suffix of the conversation that fits with it. The newest message is always kept, even alone
 * over budget, so that the model sees what it is asked. A kept slice never starts with a tool result
 * whose call was cut off.
 */
export function fitContext(
  systemPrompt: string,
  conversation: readonly BaseMessage[],
  maxTokens: number,
): ContextWindow {
  let total = estimateTokens(systemPrompt);
  let start = conversation.length;
  while (start > 0) {
    const cost = estimateTokens(messageText(conversation[start - 1]));
    if (start < conversation.length && total + cost > maxTokens) break;
    total += cost;
    start -= 1;
  }
  while (start < conversation.length - 1 && conversation[start].type === 'tool') {
    total -= estimateTokens(messageText(conversation[start]));
    start += 1;
  }
  return {
    messages: [new SystemMessage(systemPrompt), ...conversation.slice(start)],
    estimatedTokens: total,
    omittedMessages: start,
  };
}
