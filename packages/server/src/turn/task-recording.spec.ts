import { describe, expect, it } from '@jest/globals';
import { Message, Role, StreamResponse, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultExecutionEventBus } from '@a2a-js/sdk/server';
import { ownerCallContext } from '../database/store-scope.js';
import type { EventCommit, EventWrite, StoredEvent, TaskRef } from '../database/task-event-log.js';
import { statusEvent, submittedTask, textPart } from '../execution/agent-events.js';
import { TakenOverError, TaskRecording, type RecordedEvent, type RecordingPorts } from './task-recording.js';

/*
 * The recording's own rules, over a log kept in memory (the statement that stores it is proven against both
 * databases by test/a2a/resumable-wire.e2e-spec.ts and test/execution/resumable-streams.e2e-spec.ts).
 */

const REF: TaskRef = { namespace: 'ns', owner: 'alice', id: 't1' };
const message: Message = {
  messageId: 'm1',
  role: Role.ROLE_USER,
  parts: [textPart('hi')],
  contextId: 'c1',
  taskId: 't1',
  extensions: [],
  metadata: {},
  referenceTaskIds: [],
};

class MemoryLog {
  readonly events: StoredEvent[] = [];
  commits = 0;
  /** What the next commits do instead of storing: throw this error, or be refused (another replica's run). */
  next: 'store' | 'refuse' | Error = 'store';
  lost: unknown[] = [];

  ports(): RecordingPorts {
    return {
      commit: async (take: () => EventWrite): Promise<EventCommit | undefined> => {
        // The write is taken at the next turn of the event loop, as the log's batch is built.
        await new Promise((resolve) => setImmediate(resolve));
        const write = take();
        if (this.next instanceof Error) throw this.next;
        if (this.next === 'refuse') return undefined;
        this.commits += 1;
        for (const json of write.events) {
          this.events.push({ seq: this.events.length + 1, event: JSON.parse(json) as Record<string, unknown> });
        }
        return { last: this.events.length, hasPush: false };
      },
      read: (_task, after) => Promise.resolve(this.events.filter((e) => e.seq > after)),
      committed: () => undefined,
      lost: (_recording, error) => this.lost.push(error),
    };
  }
}

function setUp(log = new MemoryLog()) {
  const bus = new DefaultExecutionEventBus();
  const recording = new TaskRecording(REF, ownerCallContext(REF), bus, log.ports());
  recording.expect(message);
  return { bus, recording, log };
}

const working = (text: string) => statusEvent('t1', 'c1', TaskState.TASK_STATE_WORKING, [textPart(text)]);
const done = () => statusEvent('t1', 'c1', TaskState.TASK_STATE_COMPLETED, [textPart('done')]);
const waiting = () => statusEvent('t1', 'c1', TaskState.TASK_STATE_INPUT_REQUIRED, [textPart('your turn')]);

async function all(events: AsyncGenerator<RecordedEvent>): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe('TaskRecording', () => {
  it('numbers the events it commits, in order, and a follower from the start gets each once', async () => {
    const { bus, recording, log } = setUp();
    const followed = all(recording.follow(undefined));
    bus.publish(AgentEvent.task(submittedTask('t1', 'c1', message)));
    // The first commit starts at the next turn of the event loop; these come while it is under way.
    for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
    bus.publish(working('one'));
    bus.publish(working('two'));
    bus.publish(done());
    const events = await followed;
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(events.map((e) => e.response.payload?.value.metadata?.['cleveragents/sequence'])).toEqual([1, 2, 3, 4]);
    expect(log.events.map((e) => StreamResponse.fromJSON(e.event).payload?.$case)).toEqual([
      'task',
      'statusUpdate',
      'statusUpdate',
      'statusUpdate',
    ]);
    // The events that came while the first commit was under way went together in the next one.
    expect(log.commits).toBe(2);
    // Events published together go in one commit.
    const again = setUp();
    again.bus.publish(AgentEvent.task(submittedTask('t1', 'c1', message)));
    again.bus.publish(done());
    await again.recording.settled();
    expect(again.log.commits).toBe(1);
    expect(recording.task?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(recording.task?.history.map((m) => m.messageId)).toContain('m1');
  });

  it('a follower after the events a resting task no longer holds in memory reads them from the log', async () => {
    const { bus, recording } = setUp();
    bus.publish(AgentEvent.task(submittedTask('t1', 'c1', message)));
    bus.publish(working('one'));
    bus.publish(waiting());
    await recording.settled();
    expect(recording.position).toBe(3);
    // Resting: nothing is kept in memory, and a late follower after event 1 still gets 2 and 3, then ends.
    const late = await all(recording.follow(1));
    expect(late.map((e) => e.seq)).toEqual([2, 3]);
    // The next turn's events follow on from 3.
    const next = all(recording.follow(recording.position));
    bus.publish(working('again'));
    bus.publish(done());
    expect((await next).map((e) => e.seq)).toEqual([4, 5]);
  });

  it('is lost when its events cannot be stored: nothing uncommitted is shown, and followers get the error', async () => {
    const { bus, recording, log } = setUp();
    bus.publish(AgentEvent.task(submittedTask('t1', 'c1', message)));
    await recording.settled();
    log.next = new Error('the database is away');
    const followed = all(recording.follow(recording.position));
    bus.publish(working('never shown'));
    await expect(followed).rejects.toThrow('the database is away');
    expect(log.lost).toHaveLength(1);
    expect(log.events).toHaveLength(1);
    // Later events are not taken any more.
    bus.publish(done());
    await recording.settled();
    expect(log.events).toHaveLength(1);
  });

  it('is lost when another replica holds the run: its commit is refused', async () => {
    const { bus, recording, log } = setUp();
    log.next = 'refuse';
    const followed = all(recording.follow(undefined));
    bus.publish(AgentEvent.task(submittedTask('t1', 'c1', message)));
    await expect(followed).rejects.toBeInstanceOf(TakenOverError);
    expect(log.lost[0]).toBeInstanceOf(TakenOverError);
  });

  it('gives a bare Message out unnumbered, as the whole stream, and stores nothing for it', async () => {
    const { bus, recording, log } = setUp();
    const followed = all(recording.follow(undefined));
    bus.publish(AgentEvent.message({ ...message, messageId: 'reply', role: Role.ROLE_AGENT }));
    const events = await followed;
    expect(events.map((e) => [e.seq, e.response.payload?.$case])).toEqual([[undefined, 'message']]);
    expect(log.events).toEqual([]);
  });

  it('shows a mirrored event once, filling what it skipped from the log, and stores nothing again', async () => {
    const { bus, recording, log } = setUp();
    bus.publish(AgentEvent.task(submittedTask('t1', 'c1', message)));
    bus.publish(waiting());
    await recording.settled();
    // Another replica runs the next turn and stores events 3, 4 and 5; this one hears of 5 only.
    for (const event of [working('a'), working('b'), done()]) {
      const response: StreamResponse = { payload: { $case: 'statusUpdate', value: event.data as never } };
      log.events.push({
        seq: log.events.length + 1,
        event: StreamResponse.toJSON(response) as Record<string, unknown>,
      });
    }
    const commits = log.commits;
    const followed = all(recording.follow(recording.position));
    await recording.mirror(
      StreamResponse.fromJSON({
        ...(log.events[4].event as object),
        statusUpdate: { ...(log.events[4].event.statusUpdate as object), metadata: { 'cleveragents/sequence': 5 } },
      }),
    );
    await recording.mirror(
      StreamResponse.fromJSON({
        ...(log.events[4].event as object),
        statusUpdate: { ...(log.events[4].event.statusUpdate as object), metadata: { 'cleveragents/sequence': 5 } },
      }),
    );
    recording.stop();
    expect((await followed).map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(log.commits).toBe(commits);
  });
});
