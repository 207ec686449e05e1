import { describe, expect, it } from '@jest/globals';
import { Message } from '@a2a-js/sdk';
import { langGraphThreadId, trimToTokens } from './langgraph.mapping.js';
import { contentText, interruptQuestion, resumeValue, roleOfType } from '../turn-values.js';

describe('langGraphThreadId', () => {
  it('is a stable version-5-style UUID of namespace, owner and context', () => {
    const id = langGraphThreadId('acme', 'ada', 'ctx-1');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(langGraphThreadId('acme', 'ada', 'ctx-1')).toBe(id);
  });

  it('differs when any part differs, including parts that would concatenate alike', () => {
    const ids = new Set([
      langGraphThreadId('acme', 'ada', 'ctx-1'),
      langGraphThreadId('acme', 'grace', 'ctx-1'),
      langGraphThreadId('other', 'ada', 'ctx-1'),
      langGraphThreadId('acme', 'ada', 'ctx-2'),
      langGraphThreadId('acme', 'a', 'da/ctx-1'),
      langGraphThreadId('acme/a', 'da', 'ctx-1'),
    ]);
    expect(ids.size).toBe(6);
  });
});

describe('contentText and roleOfType', () => {
  it('reads string content and the text blocks of list content', () => {
    expect(contentText('hi')).toBe('hi');
    expect(
      contentText([
        { type: 'text', text: 'a' },
        { type: 'image_url', image_url: 'x' },
        'b',
        { type: 'text', text: 'c' },
      ]),
    ).toBe('abc');
    expect(contentText(undefined)).toBe('');
  });

  it('maps serialised message types to roles, and nothing else', () => {
    expect([
      roleOfType('human'),
      roleOfType('ai'),
      roleOfType('AIMessageChunk'),
      roleOfType('system'),
      roleOfType('tool'),
    ]).toEqual(['user', 'assistant', 'assistant', 'system', 'tool']);
    expect(roleOfType('remove')).toBeUndefined();
  });
});

describe('interruptQuestion', () => {
  it("takes the value's own words: a string, or its question/message/prompt", () => {
    expect(interruptQuestion('Proceed?')).toBe('Proceed?');
    expect(interruptQuestion({ question: 'Which file?', options: ['a'] })).toBe('Which file?');
    expect(interruptQuestion({ message: 'Approve the plan' })).toBe('Approve the plan');
  });

  it('shows the value itself when it has no words', () => {
    expect(interruptQuestion({ step: 3 })).toBe('The agent is waiting for input: {"step":3}');
    expect(interruptQuestion(undefined)).toBe('The agent is waiting for input: null');
  });
});

describe('resumeValue', () => {
  const message = Message.fromJSON({ messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'yes' }] });

  it('answers with the first data part, else the text', () => {
    expect(resumeValue({ text: 'yes', data: [{ decision: 'approve' }, { other: 1 }], message })).toEqual({
      decision: 'approve',
    });
    expect(resumeValue({ text: 'yes', data: [], message })).toBe('yes');
  });
});

describe('trimToTokens', () => {
  const messages = [
    { role: 'user' as const, content: 'a'.repeat(8) },
    { role: 'assistant' as const, content: 'b'.repeat(8) },
    { role: 'user' as const, content: 'c'.repeat(5) },
  ];

  it('keeps everything without a limit, counting characters ÷ 4 rounded up per message', () => {
    expect(trimToTokens(messages, undefined)).toEqual({ messages, estimatedTokens: 2 + 2 + 2, omittedMessages: 0 });
  });

  it('keeps the newest messages that fit', () => {
    expect(trimToTokens(messages, 5)).toEqual({ messages: messages.slice(1), estimatedTokens: 4, omittedMessages: 1 });
    expect(trimToTokens(messages, 1)).toEqual({ messages: [], estimatedTokens: 0, omittedMessages: 3 });
  });
});
