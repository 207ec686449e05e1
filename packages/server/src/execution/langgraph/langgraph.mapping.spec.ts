import { describe, expect, it } from '@jest/globals';
import { Message } from '@a2a-js/sdk';
import type { TurnOutput } from '../actor-turn.js';
import {
  langGraphThreadId,
  pausedRunOf,
  rejectionInUpdates,
  rejectionOf,
  reportedEvents,
  RunReport,
  startInput,
  trimToTokens,
} from './langgraph.mapping.js';
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

describe('startInput', () => {
  it("sends the user's text and the setup", () => {
    const message = Message.fromJSON({ messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] });
    const setup = { policy: { gate: 'manual' as const, allowedTools: [] }, tools: [] };
    expect(startInput({ input: { text: 'hi', data: [], message }, setup })).toEqual({
      messages: [{ role: 'user', content: 'hi' }],
      setup,
    });
  });
});

describe('rejectionOf and rejectionInUpdates', () => {
  it('reads a rejection from state values and from a node update, never from an interrupt', () => {
    expect(rejectionOf({ messages: [], rejection: { reason: 'too risky' } })).toBe('too risky');
    expect(rejectionOf({ rejection: {} })).toBe('The plan was rejected');
    expect(rejectionOf({ rejection: null })).toBeUndefined();
    expect(rejectionOf({ messages: [] })).toBeUndefined();
    expect(rejectionInUpdates({ gate: { rejection: { reason: 'no' } } })).toBe('no');
    expect(rejectionInUpdates({ gate: { rejection: null } })).toBeUndefined();
    expect(rejectionInUpdates({ __interrupt__: [{ value: { rejection: { reason: 'x' } } }] })).toBeUndefined();
  });
});

describe('reportedEvents', () => {
  it('counts the remembered events of the same run only', () => {
    expect(reportedEvents({ customEvents: { runId: 'r1', count: 3 } }, 'r1')).toBe(3);
    expect(reportedEvents({ customEvents: { runId: 'r0', count: 3 } }, 'r1')).toBe(0);
    expect(reportedEvents({}, 'r1')).toBe(0);
  });
});

describe('pausedRunOf', () => {
  it('reads the remembered paused run, and nothing once a resumed turn cleared it or when malformed', () => {
    expect(pausedRunOf({ pausedRun: { runId: 'r1', mode: 'start', replay: 2 } })).toEqual({
      runId: 'r1',
      mode: 'start',
      replay: 2,
    });
    expect(pausedRunOf({ pausedRun: { runId: null, mode: 'resume' } })).toEqual({
      runId: null,
      mode: 'resume',
      replay: 0,
    });
    expect(pausedRunOf({ pausedRun: null })).toBeUndefined();
    expect(pausedRunOf({})).toBeUndefined();
    expect(pausedRunOf({ pausedRun: { runId: 'r1', mode: 'later' } })).toBeUndefined();
    expect(pausedRunOf({ pausedRun: { runId: 3, mode: 'start' } })).toBeUndefined();
  });
});

describe('RunReport', () => {
  function recorder(): { output: TurnOutput; calls: string[] } {
    const calls: string[] = [];
    const output = {
      plan: () => calls.push('plan'),
      toolCall: () => calls.push('toolCall'),
      toolResult: () => calls.push('toolResult'),
      usage: (tokens: number) => calls.push(`usage:${tokens}`),
    } as unknown as TurnOutput;
    return { output, calls };
  }
  const plan = { type: 'cleveragents/plan', entries: [] };
  const usage = { type: 'cleveragents/usage', tokens: 9 };

  it('passes over the events a replayed stream reported before', () => {
    const { output, calls } = recorder();
    const report = new RunReport(output);
    expect([report.custom(plan), report.custom({ mine: true })]).toEqual([true, true]);
    report.restart();
    expect([report.custom(plan), report.custom({ mine: true }), report.custom(usage)]).toEqual([false, false, true]);
    expect(calls).toEqual(['plan', 'usage:9']);
    expect(report.reported).toBe(3);

    const recovered = recorder();
    const after = new RunReport(recovered.output, 1);
    after.custom(plan);
    after.custom(plan);
    expect(recovered.calls).toEqual(['plan']);
  });

  it('counts the events seen since the last node finished (those a node run again writes again)', () => {
    const { output } = recorder();
    const report = new RunReport(output);
    report.custom(plan);
    expect(report.sinceStep).toBe(1);
    report.step();
    report.custom(plan);
    report.custom(usage);
    expect(report.sinceStep).toBe(2);
    report.restart();
    expect(report.sinceStep).toBe(0);
  });

  it('estimates the streamed tokens once at the end unless the graph reported usage, even in a replayed part', () => {
    const estimated = recorder();
    const report = new RunReport(estimated.output);
    report.text('12345');
    report.restart();
    report.text('1234');
    report.text('5678');
    report.finish();
    report.finish();
    expect(estimated.calls).toEqual(['usage:2']);

    const counted = recorder();
    const own = new RunReport(counted.output, 1);
    own.custom(usage); // reported before the restart: not again, but it counts
    own.text('12345678');
    own.finish();
    expect(counted.calls).toEqual([]);
  });
});
