import { describe, expect, it } from '@jest/globals';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { CleverAgentsError, StreamResumeError } from './errors.js';
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
  const play = async function* (kind: string): AsyncGenerator<StreamResponse, void, undefined> {
    opened.push(kind);
    const c = connections.at(i++);
    await Promise.resolve(); // a connection answers asynchronously, as fetch does
    if (!c) throw new TypeError('fetch failed');
    for (const e of c.events) yield e;
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

  it('does not re-join after an error answer on the first connection', async () => {
    const answer = new CleverAgentsError({ code: -32602, message: 'bad' });
    const { s, opened } = sources([{ events: [], fail: answer }]);
    await expect(all(resumableStream(s, undefined, { baseDelayMs: 1 }))).rejects.toBe(answer);
    expect(opened).toEqual(['send']);
  });

  it('gives up after the attempts, and cannot re-join a task it never learnt', async () => {
    const { s, opened } = sources([{ events: [taskEvent(task(TaskState.TASK_STATE_WORKING, 't0'))], fail: cut }]);
    const err = await all(resumableStream(s, undefined, { baseDelayMs: 1, attempts: 3 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamResumeError);
    expect(opened).toEqual(['send', 'subscribe', 'subscribe', 'subscribe']);
    const early = sources([{ events: [], fail: cut }]);
    const e2 = (await all(resumableStream(early.s, undefined, { baseDelayMs: 1 })).catch((e: unknown) => e)) as Error;
    expect(e2.message).toMatch(/before the agent named the task/);
  });
});
