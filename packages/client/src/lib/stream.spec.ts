import { describe, expect, it } from '@jest/globals';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { CleverAgentsError, StreamProtocolError, StreamResumeError } from './errors.js';
import type { SourceEvent } from './event-stream.js';
import { resumableStream, type StreamSources } from './stream.js';

const text = (value: string) => ({
  content: { $case: 'text' as const, value },
  mediaType: '',
  filename: '',
  metadata: undefined,
});
const status = (state: TaskState, timestamp: string) => ({ state, message: undefined, timestamp });
const artifact = (parts: string[]) => ({
  artifactId: 'a',
  name: 'answer',
  description: '',
  parts: parts.map(text),
  metadata: undefined,
  extensions: [],
});
function task(state: TaskState, timestamp: string, parts: string[] = []): Task {
  return {
    id: 't1',
    contextId: 'c1',
    status: status(state, timestamp),
    artifacts: parts.length ? [artifact(parts)] : [],
    history: [],
    metadata: undefined,
  };
}
const taskEvent = (t: Task): StreamResponse => ({ payload: { $case: 'task', value: t } });
const statusEvent = (state: TaskState, timestamp: string): StreamResponse => ({
  payload: {
    $case: 'statusUpdate',
    value: { taskId: 't1', contextId: 'c1', status: status(state, timestamp), metadata: undefined },
  },
});
const chunk = (parts: string[], append: boolean): StreamResponse => ({
  payload: {
    $case: 'artifactUpdate',
    value: { taskId: 't1', contextId: 'c1', artifact: artifact(parts), append, lastChunk: false, metadata: undefined },
  },
});

/** Plays scripted connections: each is a list of events, then either an end or a thrown error. */
function sources(connections: { events: StreamResponse[]; fail?: Error }[], finalTask?: Task) {
  const opened: string[] = [];
  let i = 0;
  const play = async function* (kind: string): AsyncGenerator<SourceEvent, void, undefined> {
    opened.push(kind);
    const c = connections.at(i++);
    await Promise.resolve(); // a connection answers asynchronously, as fetch does
    if (!c) throw new TypeError('fetch failed');
    for (const e of c.events) yield { event: e };
    if (c.fail) throw c.fail;
  };
  const s: StreamSources = {
    open: () => play('send'),
    resubscribe: () => play('subscribe'),
    getTask: () => {
      opened.push('get');
      return finalTask ? Promise.resolve(finalTask) : Promise.reject(new Error('no task'));
    },
    mapError: (e) => (e instanceof Error ? e : new Error(String(e))),
  };
  return { s, opened };
}

async function all(gen: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const e of gen) out.push(e);
  return out;
}

const cut = new TypeError('terminated');

describe('resumableStream', () => {
  it('passes a stream that reaches its rest through untouched', async () => {
    const events = [
      taskEvent(task(TaskState.TASK_STATE_SUBMITTED, 't0')),
      statusEvent(TaskState.TASK_STATE_COMPLETED, 't1'),
    ];
    const { s, opened } = sources([{ events }]);
    expect(await all(resumableStream(s, undefined, { baseDelayMs: 1 }))).toEqual(events);
    expect(opened).toEqual(['send']);
  });

  it('drops the snapshot status it has seen and yields only the missing artifact parts', async () => {
    const { s, opened } = sources([
      {
        events: [
          taskEvent(task(TaskState.TASK_STATE_SUBMITTED, 't0')),
          statusEvent(TaskState.TASK_STATE_WORKING, 't1'),
          chunk(['one '], true),
        ],
        fail: cut,
      },
      {
        events: [
          taskEvent(task(TaskState.TASK_STATE_WORKING, 't1', ['one ', 'two '])),
          statusEvent(TaskState.TASK_STATE_WORKING, 't1'),
          chunk(['three'], true),
          statusEvent(TaskState.TASK_STATE_COMPLETED, 't2'),
        ],
      },
    ]);
    const events = await all(resumableStream(s, undefined, { baseDelayMs: 1 }));
    expect(opened).toEqual(['send', 'subscribe']);
    const described = events.map((e) => {
      const p = e.payload!;
      if (p.$case === 'artifactUpdate') {
        return `${p.value.append ? '+' : '='}${p.value.artifact!.parts.map((x) => x.content!.value).join('|')}`;
      }
      if (p.$case === 'statusUpdate') return `status ${TaskState[p.value.status!.state]}`;
      return p.$case;
    });
    expect(described).toEqual([
      'task',
      'status TASK_STATE_WORKING',
      '+one ',
      '+two ',
      '+three',
      'status TASK_STATE_COMPLETED',
    ]);
  });

  it('sends a replaced artifact whole', async () => {
    const { s } = sources([
      { events: [taskEvent(task(TaskState.TASK_STATE_WORKING, 't0')), chunk(['draft'], false)], fail: cut },
      { events: [taskEvent(task(TaskState.TASK_STATE_COMPLETED, 't1', ['final']))] },
    ]);
    const events = await all(resumableStream(s, undefined, { baseDelayMs: 1 }));
    const last = events.at(-2)!.payload!;
    expect(last.$case === 'artifactUpdate' && [last.value.append, last.value.lastChunk]).toEqual([false, true]);
    expect(events.at(-1)!.payload!.$case).toBe('statusUpdate');
  });

  it('reads the task when the re-join is refused with an error answer', async () => {
    const refused = new CleverAgentsError({ code: -32004, message: 'task rests' });
    const { s, opened } = sources(
      [
        { events: [taskEvent(task(TaskState.TASK_STATE_WORKING, 't0'))], fail: cut },
        { events: [], fail: refused },
      ],
      task(TaskState.TASK_STATE_FAILED, 't1'),
    );
    const events = await all(resumableStream(s, undefined, { baseDelayMs: 1 }));
    expect(opened).toEqual(['send', 'subscribe', 'get']);
    expect(events.at(-1)!.payload!.$case === 'statusUpdate' && events.at(-1)!.payload!.value).toMatchObject({
      status: { state: TaskState.TASK_STATE_FAILED },
    });
  });

  it('re-joins after a retryable error (SERVER_SHUTTING_DOWN) instead of ending with it', async () => {
    const { s, opened } = sources([
      { events: [taskEvent(task(TaskState.TASK_STATE_WORKING, 't0')), chunk(['one '], true)], fail: shuttingDown() },
      { events: [taskEvent(task(TaskState.TASK_STATE_COMPLETED, 't1', ['one ', 'two']))] },
    ]);
    const events = await all(resumableStream(s, undefined, { baseDelayMs: 1 }));
    expect(opened).toEqual(['send', 'subscribe']);
    expect(described(events)).toEqual(['task', '+one ', '+two', 'status TASK_STATE_COMPLETED']);
  });

  it('does not re-join after an error answer on the first connection', async () => {
    const answer = new CleverAgentsError({ code: -32602, message: 'bad' });
    const { s, opened } = sources([{ events: [], fail: answer }]);
    await expect(all(resumableStream(s, undefined, { baseDelayMs: 1 }))).rejects.toBe(answer);
    expect(opened).toEqual(['send']);
  });

  it('gives up once the window passed without an event, and cannot re-join a task it never learnt', async () => {
    const { s, opened } = sources([{ events: [taskEvent(task(TaskState.TASK_STATE_WORKING, 't0'))], fail: cut }]);
    // A clock that moves 10 s per reading: the 35 s window passes after the third re-join.
    let clock = 0;
    const now = () => (clock += 10_000);
    const err = await all(resumableStream(s, undefined, { baseDelayMs: 1, windowMs: 35_000, now })).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StreamResumeError);
    expect(err).toMatchObject({ taskId: 't1', message: expect.stringMatching(/within 35 s \(3 attempts\)/) });
    expect(opened).toEqual(['send', 'subscribe', 'subscribe', 'subscribe']);
    const early = sources([{ events: [], fail: cut }]);
    const e2 = (await all(resumableStream(early.s, undefined, { baseDelayMs: 1 })).catch((e: unknown) => e)) as Error;
    expect(e2.message).toMatch(/before the agent named the task/);
  });
});

/** `event` carrying sequence number `n` (any value: a hostile server's too). */
function numbered(event: StreamResponse, n: unknown): StreamResponse {
  const payload = event.payload!;
  return { payload: { ...payload, value: { ...payload.value, metadata: { 'cleveragents/sequence': n } } } as never };
}

/** Scripted numbered connections; records what each re-join asked for. */
function numberedSources(connections: { events: SourceEvent[]; fail?: Error }[]) {
  const asked: (number | undefined | 'send')[] = [];
  let i = 0;
  const play = async function* (from: number | undefined | 'send'): AsyncGenerator<SourceEvent, void, undefined> {
    asked.push(from);
    const c = connections.at(i++);
    await Promise.resolve();
    if (!c) throw new TypeError('fetch failed');
    yield* c.events;
    if (c.fail) throw c.fail;
  };
  const s: StreamSources = {
    open: () => play('send'),
    resubscribe: (_id, _signal, lastSequence) => play(lastSequence),
    getTask: () => Promise.reject(new Error('no GetTask expected')),
    mapError: (e) => (e instanceof Error ? e : new Error(String(e))),
    sequenced: true,
  };
  return { s, asked };
}

const shuttingDown = () =>
  new CleverAgentsError({
    code: -32603,
    message: 'The server is shutting down',
    data: [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'SERVER_SHUTTING_DOWN',
        domain: 'cleveragents',
        metadata: { retryable: 'true' },
      },
    ],
  });

function described(events: StreamResponse[]): string[] {
  return events.map((e) => {
    const p = e.payload!;
    if (p.$case === 'artifactUpdate') {
      return `${p.value.append ? '+' : '='}${p.value.artifact!.parts.map((x) => x.content!.value).join('|')}`;
    }
    if (p.$case === 'statusUpdate') return `status ${TaskState[p.value.status!.state]}`;
    return p.$case;
  });
}

describe('resumableStream with a server that numbers its events', () => {
  const start = [
    { event: numbered(taskEvent(task(TaskState.TASK_STATE_SUBMITTED, 't0')), 1), sseId: '1' },
    { event: numbered(statusEvent(TaskState.TASK_STATE_WORKING, 't1'), 2), sseId: '2' },
    { event: numbered(chunk(['one '], true), 3), sseId: '3' },
  ];

  it('re-joins after a retryable error with lastSequence: each event once, none missing', async () => {
    const { s, asked } = numberedSources([
      { events: start, fail: shuttingDown() },
      {
        events: [
          { event: numbered(chunk(['two '], true), 4) },
          { event: numbered(statusEvent(TaskState.TASK_STATE_COMPLETED, 't2'), 5) },
        ],
      },
    ]);
    const rejoins: unknown[] = [];
    const events = await all(
      resumableStream(s, undefined, { baseDelayMs: 1, onRejoin: (info) => rejoins.push(info.lastSequence) }),
    );
    expect(described(events)).toEqual([
      'task',
      'status TASK_STATE_WORKING',
      '+one ',
      '+two ',
      'status TASK_STATE_COMPLETED',
    ]);
    expect(asked).toEqual(['send', 3]);
    expect(rejoins).toEqual([3]);
  });

  it('keeps re-joining through refused connections and retryable answers until the task rests', async () => {
    const handover = new CleverAgentsError({
      code: -32010,
      message: 'not yet taken over',
      data: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'TASK_HANDOVER_PENDING',
          domain: 'cleveragents',
          metadata: { retryable: 'true' },
        },
      ],
    });
    const { s, asked } = numberedSources([
      { events: start, fail: cut },
      { events: [], fail: new TypeError('fetch failed') },
      { events: [], fail: handover },
      { events: [{ event: numbered(statusEvent(TaskState.TASK_STATE_COMPLETED, 't2'), 4) }] },
    ]);
    const events = await all(resumableStream(s, undefined, { baseDelayMs: 1 }));
    expect(described(events).at(-1)).toBe('status TASK_STATE_COMPLETED');
    expect(asked).toEqual(['send', 3, 3, 3]);
  });

  it('falls back to a snapshot when the events expired, and says so', async () => {
    const expired = new CleverAgentsError({
      code: -32001,
      message: 'expired',
      data: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'EVENTS_EXPIRED',
          domain: 'cleveragents',
          metadata: { taskId: 't1', lastSequence: '3', oldestSequence: '9' },
        },
      ],
    });
    const { s, asked } = numberedSources([
      { events: start, fail: cut },
      { events: [], fail: expired },
      {
        events: [
          { event: numbered(taskEvent(task(TaskState.TASK_STATE_WORKING, 't1', ['one ', 'two '])), 10) },
          { event: numbered(statusEvent(TaskState.TASK_STATE_COMPLETED, 't2'), 11) },
        ],
      },
    ]);
    const told: unknown[] = [];
    const events = await all(
      resumableStream(s, undefined, { baseDelayMs: 1, onSnapshotResume: (info) => told.push(info) }),
    );
    expect(asked).toEqual(['send', 3, undefined]);
    expect(told).toEqual([{ taskId: 't1', lastSequence: 3, reason: 'EVENTS_EXPIRED' }]);
    // The snapshot's status is the one seen: only its new part is passed on.
    expect(described(events)).toEqual([
      'task',
      'status TASK_STATE_WORKING',
      '+one ',
      '+two ',
      'status TASK_STATE_COMPLETED',
    ]);
  });

  it.each([
    ['out of order', 5, /events missing before this one .*sequence 5, expected 4/],
    ['repeated', 3, /repeated or out of order .*sequence 3, expected 4/],
    ['going back', 1, /repeated or out of order/],
    ['huge', 2 ** 60, /not a whole number/],
    ['a string', '4', /not a whole number .*sequence "4"/],
    ['a fraction', 3.5, /not a whole number/],
    ['missing', undefined, /without its sequence number/],
  ])('refuses an event whose sequence is %s, passing nothing of it on', async (_what, n, message) => {
    const bad = n === undefined ? chunk(['evil'], true) : numbered(chunk(['evil'], true), n);
    const { s } = numberedSources([{ events: [...start, { event: bad }] }]);
    const yielded: StreamResponse[] = [];
    const err = await (async () => {
      for await (const e of resumableStream(s, undefined, { baseDelayMs: 1 })) yielded.push(e);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamProtocolError);
    expect((err as Error).message).toMatch(message);
    expect(described(yielded)).toEqual(['task', 'status TASK_STATE_WORKING', '+one ']);
  });

  it('refuses an SSE id that differs from the sequence in the metadata', async () => {
    const { s } = numberedSources([{ events: [...start, { event: numbered(chunk(['x'], true), 4), sseId: '7' }] }]);
    await expect(all(resumableStream(s, undefined, { baseDelayMs: 1 }))).rejects.toThrow(/SSE id "7" differs/);
  });

  it('refuses a re-join snapshot older than what was seen', async () => {
    const { s } = numberedSources([
      { events: start, fail: cut },
      { events: [{ event: numbered(taskEvent(task(TaskState.TASK_STATE_WORKING, 't1')), 2) }] },
    ]);
    // The re-join resumes by number; a snapshot there is not the next event.
    await expect(all(resumableStream(s, undefined, { baseDelayMs: 1 }))).rejects.toBeInstanceOf(StreamProtocolError);
  });
});
