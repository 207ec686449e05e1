import { describe, expect, it } from '@jest/globals';
import { planEntriesFromYaml } from './prompts.js';

describe('planEntriesFromYaml: a plan a person edited, decoded as the contract has an edited plan', () => {
  it('a list, or a mapping with entries: text trimmed, priority and status defaulted, other keys dropped', () => {
    const entries = [
      { content: ' Ship it ', note: 'x' },
      { content: 'Test', priority: 'high', status: 'completed' },
    ];
    const expected = [
      { content: 'Ship it', priority: 'medium', status: 'pending' },
      { content: 'Test', priority: 'high', status: 'completed' },
    ];
    expect(planEntriesFromYaml(entries)).toEqual(expected);
    expect(planEntriesFromYaml({ entries })).toEqual(expected);
  });

  it.each([
    ['not a list', 'ship it', 'the plan must be a list of entries (content, priority, status)'],
    [
      'an empty text',
      [{ content: 'a' }, { content: '  ' }],
      'entry 2, content: must be a non-empty text of at most 2000 characters',
    ],
    ['a number for text', [{ content: 42 }], 'entry 1, content: must be a non-empty text of at most 2000 characters'],
    [
      'an unknown priority',
      [{ content: 'a', priority: 'urgent' }],
      'entry 1, priority: Invalid option: expected one of "high"|"medium"|"low"',
    ],
    [
      '201 entries',
      Array.from({ length: 201 }, () => ({ content: 'a' })),
      'the plan: Too big: expected array to have <=200 items',
    ],
  ])('%s is refused, said as a person counts', (_name, parsed, message) => {
    expect(() => planEntriesFromYaml(parsed)).toThrow(message);
  });
});
