import { describe, expect, it } from '@jest/globals';
import { APPROVAL_REQUEST_TYPE, CLIENT_REQUEST_TYPE, PLAN_DATA_TYPE } from '@cleveragents/contract';
import {
  MAX_TURN_TEXT,
  boundedText,
  conversationTurns,
  lastTurns,
  planOf,
  readNewestTasks,
  waitingOf,
  type HistoryPage,
} from './session-history.js';

/** A stored task as session/history gives it (A2A v1.0 JSON). */
function stored(
  id: string,
  said: string,
  answer: string | undefined,
  state = 'TASK_STATE_COMPLETED',
  status: unknown[] = [],
): Record<string, unknown> {
  return {
    id,
    contextId: 'C1',
    status: { state, message: { messageId: `s-${id}`, role: 'ROLE_AGENT', parts: status } },
    history: [{ messageId: `m-${id}`, role: 'ROLE_USER', parts: [{ text: said }] }],
    artifacts: answer === undefined ? [] : [{ artifactId: `a-${id}`, name: 'answer', parts: [{ text: answer }] }],
  };
}

const gate = {
  type: APPROVAL_REQUEST_TYPE,
  requestId: 'approve-c1',
  subject: { kind: 'tool', toolCallId: 'c1', tool: 'fs_write_text_file', args: { path: 'a.txt' } },
  options: ['approve', 'reject'],
};

describe('conversationTurns', () => {
  it("is each task's message and answer, oldest first", () => {
    expect(conversationTurns([stored('T1', 'hello', 'Hi.'), stored('T2', 'and?', 'More.')])).toEqual([
      { taskId: 'T1', said: 'hello', answer: 'Hi.', state: 'completed' },
      { taskId: 'T2', said: 'and?', answer: 'More.', state: 'completed' },
    ]);
  });

  it("takes a failed task's status text as its answer, and an answer to a gate (data only) says nothing", () => {
    const failed = stored('T1', 'do it', undefined, 'TASK_STATE_FAILED', [{ text: 'MODEL_UNAVAILABLE' }]);
    const answeredGate = stored('T2', 'write it', 'Done.');
    (answeredGate.history as unknown[]).push({ messageId: 'r', role: 'ROLE_USER', parts: [{ data: { type: 'x' } }] });
    expect(
      conversationTurns([failed, answeredGate]).map(({ said, answer, state }) => ({ said, answer, state })),
    ).toEqual([
      { said: 'do it', answer: 'MODEL_UNAVAILABLE', state: 'failed' },
      { said: 'write it', answer: 'Done.', state: 'completed' },
    ]);
  });

  it('strips escape sequences and controls from both sides (hostile agent and stored text)', () => {
    const [turn] = conversationTurns([
      stored('T1', 'hi\u001b]52;c;cGF5bG9hZA==\u0007 there', '\u001b[2J\u001b[HOwned\u0007\u009b31m \u202etxt.exe'),
    ]);
    for (const text of [turn.said, turn.answer]) {
      expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    }
    expect(turn.said).toBe('hi there');
    expect(turn.answer).toContain('Owned');
  });

  it('cuts a huge text, saying how much is left out', () => {
    const [turn] = conversationTurns([stored('T1', 'x', 'y'.repeat(MAX_TURN_TEXT * 10))]);
    expect(turn.answer.length).toBeLessThan(MAX_TURN_TEXT + 40);
    expect(turn.answer).toMatch(new RegExp(`… \\(${MAX_TURN_TEXT * 9} more characters\\)$`));
    expect(boundedText('😀'.repeat(MAX_TURN_TEXT))).not.toMatch(/[\uD800-\uDBFF]…/);
  });

  it('leaves out items that are no task, and reads a task with missing fields as empty', () => {
    const turns = conversationTurns([null, 7, 'task', [], { id: 42 }, {}, { id: 'T9' }, stored('T1', 'ok', 'fine')]);
    expect(turns.map((t) => t.taskId)).toEqual(['T9', 'T1']);
    expect(turns[0]).toEqual({ taskId: 'T9', said: '', answer: '', state: 'unknown' });
  });
});

describe('lastTurns', () => {
  const turns = conversationTurns(Array.from({ length: 12 }, (_, i) => stored(`T${i}`, `q${i}`, `a${i}`)));

  it('shows the last ten and counts the earlier ones, those not read included', () => {
    expect(lastTurns(turns, 30)).toMatchObject({ earlier: 20 });
    expect(lastTurns(turns, 30).shown.map((t) => t.taskId)).toEqual(turns.slice(2).map((t) => t.taskId));
    expect(lastTurns(turns.slice(0, 3), 3)).toMatchObject({ earlier: 0 });
    expect(lastTurns(turns, -5)).toMatchObject({ earlier: 2 });
  });
});

describe('waitingOf', () => {
  it('finds an approval, a client request, a question, or a request it cannot read, on the last task only', () => {
    const waiting = (parts: unknown[]) => stored('T2', 'go', undefined, 'TASK_STATE_INPUT_REQUIRED', parts);
    expect(waitingOf([stored('T1', 'a', 'b'), waiting([{ data: gate }])])).toMatchObject({
      kind: 'approval',
      request: { requestId: 'approve-c1' },
      task: { id: 'T2' },
    });
    const read = {
      type: CLIENT_REQUEST_TYPE,
      requests: [{ id: 'c1', method: 'fs/read_text_file', params: { path: 'a' } }],
    };
    expect(waitingOf([waiting([{ data: read }])])).toMatchObject({ kind: 'client-request' });
    expect(waitingOf([waiting([{ text: 'Which \u001b[31mfile\u001b[0m?' }])])).toMatchObject({
      kind: 'question',
      question: 'Which file?',
    });
    expect(waitingOf([waiting([{ data: { ...gate, requestId: 7 } }])])).toMatchObject({ kind: 'malformed' });
    expect(waitingOf([waiting([{ data: gate }]), stored('T3', 'later', 'done')])).toBeUndefined();
    expect(waitingOf([])).toBeUndefined();
    expect(waitingOf([{ id: 'T1', status: 'garbage' }])).toBeUndefined();
  });
});

describe('readNewestTasks', () => {
  it('reads the pages through, keeping the newest, and stops on a token that repeats', async () => {
    const all = Array.from({ length: 25 }, (_, i) => ({ id: `T${i}` }));
    const asked: (string | undefined)[] = [];
    const read = (token: string | undefined): Promise<HistoryPage> => {
      asked.push(token);
      const start = token ? Number(token) : 0;
      const items = all.slice(start, start + 10);
      return Promise.resolve({
        items,
        nextPageToken: start + 10 < all.length ? String(start + 10) : '',
        totalSize: 25,
      });
    };
    const newest = await readNewestTasks(read, 4);
    expect(newest).toEqual({ items: all.slice(-4), total: 25 });
    expect(asked).toEqual([undefined, '10', '20']);

    let reads = 0;
    const stuck = await readNewestTasks(() => {
      reads += 1;
      return Promise.resolve({ items: [{ id: 'T' }], nextPageToken: 'same', totalSize: 1 });
    });
    expect({ reads, total: stuck.total }).toEqual({ reads: 2, total: 1 });
  });
});

describe('planOf', () => {
  const plan = (content: string) => ({
    data: {
      type: PLAN_DATA_TYPE,
      plan: { planId: 'P1', status: 'executing', entries: [{ content, priority: 'high', status: 'pending' }] },
    },
  });

  it('is the newest plan a task shows; a malformed one is passed over', () => {
    const items = [
      stored('T1', 'a', 'b', 'TASK_STATE_COMPLETED', [plan('old')]),
      stored('T2', 'c', 'd', 'TASK_STATE_COMPLETED', [plan('new')]),
      stored('T3', 'e', 'f', 'TASK_STATE_COMPLETED', [{ data: { type: PLAN_DATA_TYPE, plan: 'nonsense' } }]),
    ];
    expect(planOf(items)?.entries.map((e) => e.content)).toEqual(['new']);
    expect(planOf([stored('T1', 'a', 'b')])).toBeUndefined();
  });
});
