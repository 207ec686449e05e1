import { describe, expect, it } from '@jest/globals';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { NOT_RUN_NEW_MESSAGE, unansweredCallResults, withPendingCallsAnswered } from './graph.js';

const ask = (id: string, text: string) => new HumanMessage({ id, content: text });
const calls = (id: string, ...names: string[]) =>
  new AIMessage({
    id,
    content: '',
    tool_calls: names.map((name, i) => ({ type: 'tool_call' as const, id: `${id}-c${i}`, name, args: {} })),
  });
const result = (callId: string) => new ToolMessage({ id: `r-${callId}`, tool_call_id: callId, content: 'ok' });
const shape = (messages: readonly BaseMessage[] | undefined) =>
  messages?.map((m) => `${m.type}:${m.type === 'tool' ? (m as ToolMessage).tool_call_id : String(m.id)}`);

describe('withPendingCallsAnswered', () => {
  it("puts the results owed to the last answer's calls before the new message, one per call not answered", () => {
    const thread = [
      ask('h1', 'go'),
      calls('a1', 'fs_read_text_file', 'fs_write_text_file'),
      result('a1-c0'),
      ask('h2', 'stop'),
    ];
    const answered = withPendingCallsAnswered(thread);
    expect(shape(answered)).toEqual(['human:h1', 'ai:a1', 'tool:a1-c0', 'tool:a1-c1', 'human:h2']);
    const owed = answered![3] as ToolMessage;
    expect({ content: owed.content, status: owed.status, name: owed.name }).toEqual({
      content: `Error: ${NOT_RUN_NEW_MESSAGE}`,
      status: 'error',
      name: 'fs_write_text_file',
    });
  });

  it('is undefined when nothing is owed: every call answered, a final answer, no new message last', () => {
    expect(
      withPendingCallsAnswered([ask('h1', 'go'), calls('a1', 'x'), result('a1-c0'), ask('h2', 'more')]),
    ).toBeUndefined();
    expect(
      withPendingCallsAnswered([ask('h1', 'go'), new AIMessage({ id: 'a1', content: 'done' }), ask('h2', 'more')]),
    ).toBeUndefined();
    expect(withPendingCallsAnswered([ask('h1', 'go'), calls('a1', 'x')])).toBeUndefined();
    expect(withPendingCallsAnswered([ask('h1', 'go')])).toBeUndefined();
    expect(withPendingCallsAnswered([])).toBeUndefined();
  });

  it('looks at the last model answer only: an older one left unanswered is not its to mend', () => {
    expect(
      unansweredCallResults([calls('a0', 'x'), ask('h1', 'go'), new AIMessage({ id: 'a1', content: 'hi' })]),
    ).toEqual([]);
  });
});
