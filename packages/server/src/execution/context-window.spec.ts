import { describe, expect, it } from '@jest/globals';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { fitContext, messageText, roleOf } from './context-window.js';
import { estimateTokens } from './turn-values.js';

const SYSTEM = 'abcd'; // 1 token

describe('fitContext', () => {
  const conversation = [
    new HumanMessage('a'.repeat(40)), // 10 tokens
    new AIMessage('b'.repeat(20)), // 5
    new HumanMessage('c'.repeat(8)), // 2
  ];

  it('keeps the whole conversation when it fits, after the system prompt', () => {
    const window = fitContext(SYSTEM, conversation, 18);
    expect(window.messages.map(messageText)).toEqual([SYSTEM, ...conversation.map(messageText)]);
    expect(roleOf(window.messages[0])).toBe('system');
    expect(window.estimatedTokens).toBe(18);
    expect(window.omittedMessages).toBe(0);
  });

  it('leaves out the oldest messages that do not fit', () => {
    const window = fitContext(SYSTEM, conversation, 17);
    expect(window.messages.slice(1)).toEqual(conversation.slice(1));
    expect(window.estimatedTokens).toBe(8);
    expect(window.omittedMessages).toBe(1);
  });

  it('keeps the newest message even when it alone is over budget', () => {
    const window = fitContext(SYSTEM, conversation, 1);
    expect(window.messages.slice(1)).toEqual(conversation.slice(2));
    expect(window.estimatedTokens).toBe(3);
    expect(window.omittedMessages).toBe(2);
  });

  it('does not start the kept messages with a tool result whose call was left out', () => {
    const withTool = [
      new AIMessage('x'.repeat(400)),
      new ToolMessage({ content: 'r'.repeat(4), tool_call_id: 'call-1' }),
      new HumanMessage('q'.repeat(4)),
    ];
    const window = fitContext(SYSTEM, withTool, 10);
    expect(window.messages.slice(1)).toEqual(withTool.slice(2));
    expect(window.omittedMessages).toBe(2);
    expect(window.estimatedTokens).toBe(2);
  });

  it('gives only the system prompt for an empty thread', () => {
    const window = fitContext(SYSTEM, [], 100);
    expect(window.messages.map(messageText)).toEqual([SYSTEM]);
    expect(window.omittedMessages).toBe(0);
  });
});

describe('messageText and roleOf', () => {
  it('joins the text blocks of structured content and skips the others', () => {
    const message = new AIMessage({
      content: [
        { type: 'text', text: 'Hello ' },
        { type: 'image_url', image_url: 'data:,' },
        { type: 'text', text: 'world' },
      ],
    });
    expect(messageText(message)).toBe('Hello world');
    expect(roleOf(message)).toBe('assistant');
    expect(roleOf(new HumanMessage('x'))).toBe('user');
    expect(roleOf(new ToolMessage({ content: 'x', tool_call_id: 'c' }))).toBe('tool');
  });

  it('estimates characters ÷ 4, rounded up', () => {
    expect([estimateTokens(''), estimateTokens('abc'), estimateTokens('abcd'), estimateTokens('abcde')]).toEqual([
      0, 1, 1, 2,
    ]);
  });
});
