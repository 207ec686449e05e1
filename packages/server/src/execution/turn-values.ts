import type { AssembledContext, TurnInput } from './actor-turn.js';
import { APPROVAL_RESPONSE_TYPE, CLIENT_RESPONSE_TYPE } from './orchestrator/protocol.js';
import { requestQuestion } from './orchestrator/report.js';

/**
 * What both orchestrator backends read and write the same way: message text and roles, token estimates,
 * and how an interrupt is asked and answered. One definition, so that a client sees one behaviour
 * whichever backend runs its actor.
 */

type Role = AssembledContext['messages'][number]['role'];

/** Rough token count (AssembledContext's measure): characters ÷ 4, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The text of a LangChain message's content (live or serialised): a string, or the text blocks of a list. */
export function contentText(content: unknown): string {
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

/** A LangChain message type (a message's `type`, serialised `type`, or chunk class name) as our role. */
export function roleOfType(type: unknown): Role | undefined {
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
    case 'developer':
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
  const request = requestQuestion(value);
  if (request) return request;
  if (typeof value === 'string' && value.trim() !== '') return value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const key of ['question', 'message', 'prompt', 'text', 'description']) {
      const candidate = (value as Record<string, unknown>)[key];
      if (typeof candidate === 'string' && candidate.trim() !== '') return candidate;
    }
  }
  // JSON.stringify gives undefined (whatever its type says) for undefined, a function or a symbol.
  const json = JSON.stringify(value) as string | undefined;
  return `The agent is waiting for input: ${json ?? 'null'}`;
}

const RESPONSE_TYPES: readonly unknown[] = [APPROVAL_RESPONSE_TYPE, CLIENT_RESPONSE_TYPE];

/**
 * What answers an interrupt (`Command({resume})`): the client's approval- or client-response data part
 * when it sent one, else its first data part, else its text.
 */
export function resumeValue(input: TurnInput): unknown {
  const response = input.data.find((value) => RESPONSE_TYPES.includes(value.type));
  if (response) return response;
  return input.data.length > 0 ? input.data[0] : input.text;
}
