import { describe, expect, it } from '@jest/globals';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { TurnEventReader } from './events.js';

const chunk = (text: string, append: boolean, lastChunk = false): StreamResponse => ({
  payload: {
    $case: 'artifactUpdate',
    value: {
      taskId: 't1',
      contextId: 'c1',
      artifact: {
        artifactId: 'answer',
        name: 'answer',
        description: '',
        parts: [{ content: { $case: 'text', value: text }, mediaType: '', filename: '', metadata: undefined }],
        metadata: undefined,
        extensions: [],
      },
      append,
      lastChunk,
      metadata: undefined,
    },
  },
});
const completed: StreamResponse = {
  payload: {
    $case: 'statusUpdate',
    value: {
      taskId: 't1',
      contextId: 'c1',
      status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: 't' },
      metadata: undefined,
    },
  },
};

/** What a printer shows: the text deltas, and a restart as `[restart]` then the answer. */
function shown(events: StreamResponse[]): { printed: string; answer: string } {
  const reader = new TurnEventReader();
  let printed = '';
  for (const event of events) {
    for (const e of reader.read(event)) {
      if (e.kind === 'text') printed += e.delta;
      if (e.kind === 'answer') printed += `[restart]${e.text}`;
    }
  }
  return { printed, answer: reader.answerText };
}

describe('TurnEventReader: each piece of the answer shown once', () => {
  it('the whole answer sent again at its end adds nothing', () => {
    expect(shown([chunk('Hello ', false), chunk('world', true), chunk('Hello world', false, true), completed])).toEqual(
      { printed: 'Hello world', answer: 'Hello world' },
    );
  });

  it('an answer started over on the same course (a take-over) shows only what goes past what was shown', () => {
    const events = [
      chunk('Hello ', true),
      chunk('wor', true),
      // The new runner starts the answer over: behind what was shown, then past it.
      chunk('Hello ', false),
      chunk('world', true),
      chunk('!', true),
      chunk('Hello world!', false, true),
      completed,
    ];
    expect(shown(events)).toEqual({ printed: 'Hello world!', answer: 'Hello world!' });
  });

  it('an answer started over on another course is shown again whole, once', () => {
    const events = [chunk('Hello ', true), chunk('wor', true), chunk('Goodbye', false), chunk(' all', true), completed];
    expect(shown(events)).toEqual({ printed: 'Hello wor[restart]Goodbye all', answer: 'Goodbye all' });
  });

  it('a restarted answer that ends shorter than what was shown is shown again as it ended', () => {
    const events = [chunk('Hello world', true), chunk('Hello', false), completed];
    expect(shown(events)).toEqual({ printed: 'Hello world[restart]Hello', answer: 'Hello' });
  });
});
