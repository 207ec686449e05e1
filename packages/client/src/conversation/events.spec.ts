import { describe, expect, it } from '@jest/globals';
import { StreamResponse, TaskState } from '@a2a-js/sdk';
import {
  APPROVAL_REQUEST_TYPE,
  CLIENT_REQUEST_TYPE,
  PLAN_DATA_TYPE,
  TOOL_CALL_EVENT,
  TOOL_RESULT_EVENT,
} from '@cleveragents/contract';
import { TurnEventReader, pendingRequestOf } from './events.js';

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

/** A status update whose message carries `data` parts. */
const statusWith = (state: TaskState, ...data: Record<string, unknown>[]): StreamResponse =>
  StreamResponse.fromJSON({
    statusUpdate: {
      taskId: 't1',
      contextId: 'c1',
      status: {
        state: TaskState[state],
        message: { messageId: 'm', role: 'ROLE_AGENT', parts: data.map((d) => ({ data: d })) },
      },
    },
  });
const toolArtifact = (data: Record<string, unknown>): StreamResponse =>
  StreamResponse.fromJSON({
    artifactUpdate: {
      taskId: 't1',
      contextId: 'c1',
      artifact: { artifactId: 'tool-c1', name: 'tool-call', parts: [{ data }] },
      append: true,
    },
  });

const entry = { content: 'Read the logs', priority: 'high', status: 'pending' };
const gate = {
  type: APPROVAL_REQUEST_TYPE,
  requestId: 'r1',
  subject: { kind: 'tool', toolCallId: 'c1', tool: 'deploy', args: { target: 'prod' } },
  options: ['approve', 'reject'],
};

describe('TurnEventReader: what the agent sends is decoded; what does not decode is not acted on, and said', () => {
  it('a well-formed plan, tool call and approval come through as they were sent, unknown keys dropped', () => {
    const reader = new TurnEventReader();
    const events = [
      ...reader.read(
        statusWith(TaskState.TASK_STATE_WORKING, { type: PLAN_DATA_TYPE, plan: { entries: [entry], x: 1 } }),
      ),
      ...reader.read(toolArtifact({ type: TOOL_CALL_EVENT, id: 'c1', name: 'lookup', args: { q: 'x' }, hidden: true })),
      ...reader.read(statusWith(TaskState.TASK_STATE_INPUT_REQUIRED, { ...gate, preApproved: true })),
    ];
    expect(events.filter((e) => e.kind !== 'status')).toEqual([
      { kind: 'plan', plan: { entries: [entry] } },
      { kind: 'tool-call', call: { type: TOOL_CALL_EVENT, id: 'c1', name: 'lookup', args: { q: 'x' } } },
      { kind: 'approval', request: gate },
    ]);
  });

  it.each([
    [
      'a plan of 201 entries',
      statusWith(TaskState.TASK_STATE_WORKING, { type: PLAN_DATA_TYPE, plan: { entries: Array(201).fill(entry) } }),
      'The agent sent a plan this client cannot read (plan.entries: Too big: expected array to have <=200 items): it is not shown.',
    ],
    [
      'a tool call whose arguments are a string',
      toolArtifact({ type: TOOL_CALL_EVENT, id: 'c1', name: 'lookup', args: 'rm -rf ~' }),
      'The agent sent a tool call report this client cannot read (args: Invalid input: expected record, received string): it is not shown.',
    ],
    [
      'a tool result without its id',
      toolArtifact({ type: TOOL_RESULT_EVENT, name: 'lookup', result: {} }),
      'The agent sent a tool result report this client cannot read (id: Invalid input: expected string, received undefined): it is not shown.',
    ],
    [
      'an approval of an unknown kind',
      statusWith(TaskState.TASK_STATE_INPUT_REQUIRED, { ...gate, subject: { kind: 'shell', command: 'id' } }),
      "The agent sent an approval request this client cannot read (subject.kind: Invalid discriminator value. Expected 'plan' | 'tool' | 'agent'): it is not shown, and nothing is approved.",
    ],
    [
      'a client request whose path is a number',
      statusWith(TaskState.TASK_STATE_INPUT_REQUIRED, {
        type: CLIENT_REQUEST_TYPE,
        requests: [{ id: 'c1', method: 'fs/read_text_file', params: { path: 42 } }],
      }),
      'The agent sent a client request this client cannot read (requests[0].params.path: Invalid input: expected string, received number): none of its calls runs.',
    ],
  ])('%s: a warning, nothing else of it', (_name, event, text) => {
    const events = new TurnEventReader().read(event).filter((e) => e.kind !== 'status');
    expect(events).toEqual([{ kind: 'warning', text, part: expect.any(String), violations: expect.any(Array) }]);
  });

  it('a malformed plan repeated by the next status is said once; a good plan after it is shown', () => {
    const reader = new TurnEventReader();
    const bad = { type: PLAN_DATA_TYPE, plan: { entries: 'all' } };
    const kinds = [
      ...reader.read(statusWith(TaskState.TASK_STATE_WORKING, bad)),
      ...reader.read(statusWith(TaskState.TASK_STATE_WORKING, bad)),
      ...reader.read(statusWith(TaskState.TASK_STATE_WORKING, { type: PLAN_DATA_TYPE, plan: { entries: [entry] } })),
    ].map((e) => e.kind);
    expect(kinds).toEqual(['warning', 'status', 'plan']);
  });

  it('pendingRequestOf: a decoded request, or the malformed one with its violations', () => {
    const parts = (value: Record<string, unknown>) =>
      StreamResponse.fromJSON({
        statusUpdate: {
          taskId: 't1',
          contextId: 'c1',
          status: {
            state: 'TASK_STATE_INPUT_REQUIRED',
            message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ data: value }] },
          },
        },
      });
    const partsOf = (e: StreamResponse) =>
      e.payload?.$case === 'statusUpdate' ? e.payload.value.status?.message?.parts : [];
    expect(pendingRequestOf(partsOf(parts(gate)))).toEqual({ approval: gate });
    const bad = { ...gate, options: [] };
    expect(pendingRequestOf(partsOf(parts(bad)))).toEqual({
      malformed: {
        part: APPROVAL_REQUEST_TYPE,
        violations: [{ field: 'options', description: 'Too small: expected array to have >=1 items' }],
        value: bad,
      },
    });
  });
});
