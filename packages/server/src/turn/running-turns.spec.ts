import { describe, expect, it } from '@jest/globals';
import { TaskState } from '@a2a-js/sdk';
import { DefaultExecutionEventBus, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import { firstValueFrom } from 'rxjs';
import { ManualClock } from '../../../../test/support/manual-clock.js';
import { TURN_CANCELED, TURN_DETACHED, TURN_PAUSED } from '../execution/actor-turn.js';
import { RunningTurns, type RunningTurn } from './running-turns.js';
import { TurnPublisher } from './turn-publisher.js';

/* The turns running on a replica and what stops them, on the Clock: no turn runs a backend here. */

const SCOPE = { namespace: 'ns', owner: 'alice' };

/** A turn on a real SDK bus, whose settling the test decides; the statuses the bus carried. */
function turnOn(clock: ManualClock, taskId: string) {
  const bus = new DefaultExecutionEventBus();
  const states: (TaskState | undefined)[] = [];
  bus.on('event', (event: AgentExecutionEvent) => {
    if (event.kind === 'statusUpdate') states.push(event.data.status?.state);
  });
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const publisher = new TurnPublisher(bus, taskId, 'c1', `answer-${taskId}`, {
    remember: () => Promise.resolve(),
    plan: () => ({}),
    usage: () => undefined,
    now: () => clock.date(),
  });
  const turn: RunningTurn = {
    scope: SCOPE,
    taskId,
    contextId: 'c1',
    controller: new AbortController(),
    publisher,
    settled,
  };
  return { turn, states, settle };
}

describe('RunningTurns', () => {
  it('CancelTask stops a turn that settles, and arms no timer past it', async () => {
    const clock = new ManualClock(0);
    const running = new RunningTurns(clock);
    const { turn, states, settle } = turnOn(clock, 't1');
    running.add(turn);
    turn.controller.signal.addEventListener('abort', () => settle());
    expect(await running.cancel('t1')).toBe(true);
    expect(turn.controller.signal.reason).toBe(TURN_CANCELED);
    expect(states).toEqual([]);
    expect(clock.dueTimes()).toEqual([]);
  });

  it('a turn that does not stop within the grace period is shown canceled when the Clock says so', async () => {
    const clock = new ManualClock(0);
    const running = new RunningTurns(clock);
    const { turn, states } = turnOn(clock, 't1');
    running.add(turn);
    const canceled = running.cancel('t1');
    clock.advance(9_999);
    await new Promise((resolve) => setImmediate(resolve));
    expect(states).toEqual([]);
    clock.advance(1);
    expect(await canceled).toBe(true);
    expect(states).toEqual([TaskState.TASK_STATE_CANCELED]);
  });

  it('pause, cancel and let go reach only the turn of that scope and task', async () => {
    const clock = new ManualClock(0);
    const running = new RunningTurns(clock);
    const { turn, settle } = turnOn(clock, 't1');
    running.add(turn);
    expect(await running.pauseHere({ namespace: 'ns', owner: 'bob' }, 't1')).toBe(false);
    expect(running.cancelHere(SCOPE, 't2')).toBe(false);
    expect(await running.cancel('t2')).toBe(false);
    running.letGo({ ...SCOPE, id: 't2' });
    expect(turn.controller.signal.aborted).toBe(false);
    const paused = running.pauseHere(SCOPE, 't1');
    expect(turn.controller.signal.reason).toBe(TURN_PAUSED);
    settle();
    expect(await paused).toBe(true);
    expect(running.tasks()).toEqual([{ ...SCOPE, taskId: 't1' }]);
    running.remove(turn);
    expect(running.size).toBe(0);
  });

  it('a lost recording lets its turn go; the shutdown detaches every turn; a task taken up is told', async () => {
    const clock = new ManualClock(0);
    const running = new RunningTurns(clock);
    const one = turnOn(clock, 't1');
    const two = turnOn(clock, 't2');
    running.add(one.turn);
    running.add(two.turn);
    running.letGo({ ...SCOPE, id: 't1' });
    expect(one.turn.controller.signal.reason).toBe(TURN_DETACHED);
    two.turn.controller.signal.addEventListener('abort', () => two.settle());
    one.settle();
    await running.detachAll();
    expect(two.turn.controller.signal.reason).toBe(TURN_DETACHED);
    const told = firstValueFrom(running.takenUp);
    running.announceTakenUp(SCOPE, 't3');
    expect(await told).toEqual({ scope: SCOPE, taskId: 't3' });
  });
});
