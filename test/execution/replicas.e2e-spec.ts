import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { DataSource } from 'typeorm';
import { RemoteTaskEvents } from '../../packages/server/src/replica/remote-task-events.js';
import { SessionWorkflow } from '../../packages/server/src/turn/session.workflow.js';
import { SessionEventBuses } from '../../packages/server/src/turn/session-event-buses.js';
import { WaitingTasks } from '../../packages/server/src/turn/waiting-tasks.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { statusData } from '../support/orchestration.js';
import { extensionCalls, startServer, type TestServer } from '../support/server.js';
import { ManualClock } from '../support/manual-clock.js';
import { holdsThroughout, until } from '../support/wait.js';
import { sendRequest } from '../factories/messages.js';
import { partText, stateOf } from '../support/streams.js';
import { describeNeeding, runningPostgres } from '../support/requirements.js';
import { ifAssigned } from '../support/assigned.js';

type ArtifactUpdate = { append: boolean; lastChunk: boolean; artifact: { parts: unknown[] } };

/** The artifact updates among `events`, in order. */
function artifactUpdates(events: readonly StreamResponse[]): ArtifactUpdate[] {
  return events.flatMap((e) => (e.payload?.$case === 'artifactUpdate' ? [e.payload.value as ArtifactUpdate] : []));
}

/** The text of an artifact update's parts. */
function updateText(update: ArtifactUpdate): string {
  return update.artifact.parts.map((p) => partText(p as never)).join('');
}

/** The answer text a task holds (its artifacts' text parts). */
function taskText(task: Task): string {
  return task.artifacts.flatMap((a) => a.parts.map((p) => partText(p as never))).join('');
}

/**
 * A plan executed through `on` whose turn streams a long answer (tokens `<prefix><n> `, 20 ms apart); returned
 * once its first tokens are stored.
 */
async function planRunning(
  on: { model: OpenAiCompatibleEndpoint; rpc: ReturnType<typeof extensionCalls>; client: Client },
  goal: string,
  prefix: string,
  extra: Record<string, unknown> = {},
) {
  on.model.answerWith({ tokens: Array.from({ length: 400 }, (_, i) => `${prefix}${i} `), delayMs: 20 });
  const plan = await on.rpc.ok('plan/create', { goal, entries: [{ content: 'Write a long answer' }], ...extra });
  await on.rpc.ok('plan/approve', { planId: plan.planId });
  const started = await on.rpc.ok('plan/execute', { planId: plan.planId });
  const getTask = (client: Client): Promise<Task> =>
    client.getTask({ id: started.taskId, tenant: '', historyLength: 0 });
  // The turn runs: its tokens are stored.
  await until(async () => (await getTask(on.client)).artifacts.length > 0, 'answer tokens from the turn', 15000);
  return { plan, started, getTask };
}

/*
 * Two replicas on one PostgreSQL (docs/protocol.md §10): a SubscribeToTask that reaches the replica not running
 * the task gets the live events of the one that does, relayed; a CancelTask that reaches the replica not running the
 * task stops the run on the one that does, and the task stays canceled; a plan/pause that reaches it
 * stops the turn there too, and plan/resume goes on from either. PostgreSQL only: the embedded database
 * serves one process.
 */

describeNeeding(
  runningPostgres(),
  'SubscribeToTask, CancelTask and plan/pause across replicas (local backend, PostgreSQL)',
  () => {
    let model: OpenAiCompatibleEndpoint;
    let db: TestDatabase;
    let a: TestServer;
    let b: TestServer;
    let onA: Client;
    let onB: Client;
    const rpcOnA = extensionCalls(() => a);
    const rpcOnB = extensionCalls(() => b);

    let env: Record<string, string>;

    beforeAll(async () => {
      model = await OpenAiCompatibleEndpoint.start({ tokens: ['x'] });
      db = await createTestDatabase();
      env = {
        CLEVERAGENTS_ACTOR_BACKEND: 'local',
        CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
        CLEVERAGENTS_MODEL: 'onprem-model',
      };
      a = await startServer(db, env);
      b = await startServer(db, env);
      onA = await new ClientFactory().createFromUrl(a.baseUrl);
      onB = await new ClientFactory().createFromUrl(b.baseUrl);
    }, 60000);

    afterAll(async () => {
      await ifAssigned(a)?.close();
      await ifAssigned(b)?.close();
      await ifAssigned(db)?.cleanup();
      await ifAssigned(model)?.close();
    });

    /**
     * Streams a long answer on A (its own stream read to the end in the background) and resolves, once A
     * has sent its first token, with the task id and the promise of A's whole stream; `done()` tells
     * whether A's stream has shown the task completed yet.
     */
    async function runOnA(
      text: string,
    ): Promise<{ taskId: string; onA: Promise<StreamResponse[]>; done: () => boolean }> {
      const events: StreamResponse[] = [];
      let completed = false;
      let started: (taskId: string) => void = () => undefined;
      const firstToken = new Promise<string>((resolve) => (started = resolve));
      const stream = (async () => {
        let taskId = '';
        for await (const event of onA.sendMessageStream(sendRequest('m', { text }))) {
          events.push(event);
          if (event.payload?.$case === 'task') taskId = event.payload.value.id;
          if (event.payload?.$case === 'artifactUpdate') started(taskId);
          if (stateOf(event) === TaskState.TASK_STATE_COMPLETED) completed = true;
        }
        return events;
      })();
      const taskId = await Promise.race([firstToken, stream.then(() => '')]);
      expect(taskId).not.toBe('');
      return { taskId, onA: stream, done: () => completed };
    }

    it('a SubscribeToTask on B follows the task running on A live, to COMPLETED', async () => {
      const tokens = Array.from({ length: 60 }, (_, i) => `w${i} `);
      model.answerWith({ tokens, delayMs: 30 });
      const run = await runOnA('slow, on A');
      expect(b.app.get(SessionWorkflow).runningTurns).toBe(0);

      const events: StreamResponse[] = [];
      const liveWhenReceived: boolean[] = [];
      for await (const event of onB.resubscribeTask({ id: run.taskId, tenant: '' })) {
        events.push(event);
        if (event.payload?.$case === 'artifactUpdate') liveWhenReceived.push(!run.done());
      }
      const onAEvents = await run.onA;

      // The task as stored when B attached, then A's events as they came, ending as A's own stream ends.
      const first = events[0].payload!;
      expect(first.$case).toBe('task');
      const stored = first.$case === 'task' ? first.value : undefined;
      expect(stored?.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(stateOf(onAEvents.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
      // Live: the first relayed tokens reached B's client before A's own stream saw the task complete.
      expect(liveWhenReceived.length).toBeGreaterThan(1);
      expect(liveWhenReceived[0]).toBe(true);
      // In order, every token from the first relayed one on, and the last chunk the whole answer. What
      // the stored task held is a beginning of the answer; between it and the first relayed token there
      // may be a gap or a repeat, as for the SDK's own subscriber on A: it too attaches to the bus, then
      // reads the task, whose store lags the bus by the events not yet written.
      const updates = artifactUpdates(events);
      const appended = updates.filter((u) => u.append).map(updateText);
      expect(appended.length).toBeGreaterThan(0);
      const from = tokens.indexOf(appended[0]);
      expect(appended).toEqual(tokens.slice(from));
      expect(tokens.join('').startsWith(taskText(stored!))).toBe(true);
      const last = updates.at(-1)!;
      expect([last.append, last.lastChunk, updateText(last)]).toEqual([false, true, tokens.join('')]);
      // A stopped forwarding once the task completed.
      await until(() => a.app.get(RemoteTaskEvents).watching === 0, 'A to stop forwarding');
    });

    it('an event bigger than a notification (a 20 KB last chunk) reaches B intact', async () => {
      // 20 tokens of 1000 characters, some of them two or four bytes long in UTF-8.
      const tokens = Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(990, 'é').padEnd(1000, '😀'.repeat(5)));
      const answer = tokens.join('');
      expect(Buffer.byteLength(answer, 'utf8')).toBeGreaterThan(20_000);
      model.answerWith({ tokens, delayMs: 60 });
      const run = await runOnA('big, on A');
      const events: StreamResponse[] = [];
      for await (const event of onB.resubscribeTask({ id: run.taskId, tenant: '' })) events.push(event);
      await run.onA;
      expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
      const updates = artifactUpdates(events);
      const appended = updates.filter((u) => u.append).map(updateText);
      expect(appended).toEqual(tokens.slice(tokens.indexOf(appended[0])));
      const last = updates.at(-1)!;
      expect([last.append, last.lastChunk]).toEqual([false, true]);
      expect(updateText(last)).toBe(answer);
    });

    it('a subscriber on B that leaves makes A stop forwarding, while the task runs on', async () => {
      model.answerWith({ tokens: Array.from({ length: 300 }, (_, i) => `l${i} `), delayMs: 30 });
      const run = await runOnA('long, on A');
      const watchers = a.app.get(RemoteTaskEvents);
      let relayed = 0;
      for await (const event of onB.resubscribeTask({ id: run.taskId, tenant: '' })) {
        if (event.payload?.$case === 'artifactUpdate') relayed += 1;
        if (relayed === 1) expect(watchers.watching).toBe(1);
        if (relayed === 3) break; // the client goes away
      }
      await until(() => watchers.watching === 0, 'A to stop forwarding to B', 10000);
      // A stopped because B asked, not because the task ended: it is still running there.
      expect((await onA.getTask({ id: run.taskId, tenant: '', historyLength: 0 })).status?.state).toBe(
        TaskState.TASK_STATE_WORKING,
      );
      expect(a.app.get(SessionWorkflow).runningTurns).toBe(1);
      await onA.cancelTask({ id: run.taskId, tenant: '' } as never);
      await run.onA;
    });

    it('a CancelTask on B stops the turn running on A; the task ends canceled and stays so', async () => {
      model.answerWith({ tokens: Array.from({ length: 200 }, (_, i) => `t${i} `), delayMs: 20 });
      const hangUps = model.hangUps;
      const events: StreamResponse[] = [];
      let taskId = '';
      let canceledOnB: TaskState | undefined;
      for await (const event of onA.sendMessageStream(sendRequest('m', { text: 'long, on A' }))) {
        events.push(event);
        if (event.payload?.$case === 'task') taskId = event.payload.value.id;
        if (event.payload?.$case === 'artifactUpdate' && canceledOnB === undefined) {
          canceledOnB = TaskState.TASK_STATE_UNSPECIFIED;
          const canceled = await onB.cancelTask({ id: taskId, tenant: '' } as never);
          canceledOnB = canceled.status?.state;
        }
      }
      expect(canceledOnB).toBe(TaskState.TASK_STATE_CANCELED);
      // A's own stream ends with the canceled status its workflow published; its model call was stopped.
      expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_CANCELED);
      await until(() => model.hangUps === hangUps + 1, 'the model call on A to be stopped');
      // Nothing on A overwrites it afterwards: both replicas read it canceled, with fewer tokens than asked.
      for (const client of [onA, onB]) {
        const stored = await client.getTask({ id: taskId, tenant: '' });
        expect(stored.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      }
    });

    /** A SubscribeToTask through `client`, read in the background: what it yielded so far, and its end. */
    function subscribe(client: Client, taskId: string) {
      const events: StreamResponse[] = [];
      let ended = false;
      const done = (async () => {
        for await (const event of client.resubscribeTask({ id: taskId, tenant: '' })) events.push(event);
        ended = true;
        return events;
      })();
      return { events, ended: () => ended, done };
    }

    const planRunningOnA = (goal: string, prefix: string) =>
      planRunning({ model, rpc: rpcOnA, client: onA }, goal, prefix);

    it('a plan/pause on B stops the turn running on A; the task waits paused, and plan/resume on B completes it', async () => {
      const { plan, started, getTask } = await planRunningOnA('long, on A', 'p');
      expect(a.app.get(SessionWorkflow).runningTurns).toBe(1);
      expect(b.app.get(SessionWorkflow).runningTurns).toBe(0);
      const hangUps = model.hangUps;
      const requests = model.requests.length;

      // Paused on B: the answer comes once the task's paused status is stored, so both replicas read it.
      expect(await rpcOnB.ok('plan/pause', { planId: plan.planId })).toMatchObject({ status: 'paused' });
      for (const client of [onB, onA]) {
        const paused = await getTask(client);
        expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
        expect(partText(paused.status?.message?.parts[0] as never)).toBe(
          `Plan ${plan.planId} is paused; resume it with _cleveragents/plan/resume.`,
        );
        expect(statusData(paused).find((d) => d.type === 'cleveragents/plan')?.plan).toMatchObject({
          planId: plan.planId,
          status: 'paused',
        });
      }
      // The turn on A really stopped: its model call was hung up on, and A runs no turn any more.
      await until(() => model.hangUps === hangUps + 1, 'the model call on A to be stopped');
      expect(a.app.get(SessionWorkflow).runningTurns).toBe(0);
      // A let the run go as it rested: no replica holds its lease, so whichever gets plan/resume takes it up.
      const runs: { state: string; lease_owner: string | null }[] = await b.app
        .get(DataSource)
        .query('SELECT state, lease_owner FROM task_runs WHERE task_id = $1', [started.taskId]);
      expect(runs).toEqual([{ state: 'resting', lease_owner: null }]);

      // A watches the wait, but B takes it up; the pause lasts from here to the resume.
      await until(() => a.app.get(WaitingTasks).has(started.taskId), 'A to watch the wait');
      const pausedAt = Date.now();

      // Resumed on B: the turn goes on from its checkpoint (one more model call) to the end.
      model.answerWith({ tokens: ['resumed ', 'on ', 'B.'] });
      expect(model.requests.length).toBe(requests);
      const pausedFor = Date.now() - pausedAt;
      expect(await rpcOnB.ok('plan/resume', { planId: plan.planId })).toMatchObject({ status: 'executing' });
      await until(
        async () => (await getTask(onA)).status?.state === TaskState.TASK_STATE_COMPLETED,
        'the resumed task to complete',
        15000,
      );
      for (const client of [onA, onB]) {
        const done = await getTask(client);
        expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        expect(partText(done.status?.message?.parts[0] as never)).toBe('resumed on B.');
      }
      expect(model.requests.length).toBe(requests + 1);
      for (const rpc of [rpcOnA, rpcOnB]) {
        expect(await rpc.ok('plan/get', { planId: plan.planId })).toMatchObject({ status: 'completed' });
      }
      // The pause counted as wall time though B, not A, ended it: B read when the stored task began to wait.
      expect((await rpcOnB.ok('plan/get', { planId: plan.planId })).usage.wallTimeMs).toBeGreaterThanOrEqual(pausedFor);
    });
    it('a SubscribeToTask on B ends at INPUT_REQUIRED as the SDK subscriber on A does; the waiting task is then answered as stored', async () => {
      const { plan, started } = await planRunningOnA('waits, on A', 'q');
      // One subscriber on each replica: A's is the SDK's own, B's is relayed from A.
      const onBoth = [subscribe(onA, started.taskId), subscribe(onB, started.taskId)];
      await until(() => a.app.get(RemoteTaskEvents).watching === 1, 'A to forward to B');
      // Paused once both subscribers have had live tokens.
      await until(
        () => onBoth.every(({ events }) => events.some((e) => e.payload?.$case === 'artifactUpdate')),
        'live tokens on both subscriptions',
        15000,
      );
      expect(await rpcOnA.ok('plan/pause', { planId: plan.planId })).toMatchObject({ status: 'paused' });
      const [local, relayed] = await Promise.all(onBoth.map(({ done }) => done));
      for (const events of [local, relayed]) {
        expect(events[0]?.payload?.$case).toBe('task');
        expect(events.filter((e) => e.payload?.$case === 'artifactUpdate').length).toBeGreaterThan(0);
        expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      }
      // Both end on the same paused status.
      const statusText = (events: StreamResponse[]) => {
        const p = events.at(-1)?.payload;
        return p?.$case === 'statusUpdate' ? partText(p.value.status?.message?.parts[0]) : undefined;
      };
      expect(statusText(relayed)).toBe(statusText(local));
      expect(statusText(relayed)).toBe(`Plan ${plan.planId} is paused; resume it with _cleveragents/plan/resume.`);
      await until(() => a.app.get(RemoteTaskEvents).watching === 0, 'A to stop forwarding');

      // The task now waits with no turn running (no lease): a subscription on B gets it as stored, and ends,
      // as the SDK answers on a replica that holds no bus for the task.
      const later: StreamResponse[] = [];
      for await (const event of onB.resubscribeTask({ id: started.taskId, tenant: '' })) later.push(event);
      expect(later).toHaveLength(1);
      expect(later[0]?.payload?.$case).toBe('task');
      expect(stateOf(later[0])).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      expect(a.app.get(RemoteTaskEvents).watching).toBe(0);
    });

    it('a subscriber on A to a task waiting there gets the turn B takes it up with, to COMPLETED', async () => {
      const { plan, started } = await planRunningOnA('answered elsewhere', 'u');
      expect(await rpcOnA.ok('plan/pause', { planId: plan.planId })).toMatchObject({ status: 'paused' });
      // A keeps the bus of the task while it waits: a subscriber there waits for what comes next.
      const { events, ended } = subscribe(onA, started.taskId);
      await until(() => events.length > 0, 'the task as A stores it');
      expect(stateOf(events[0])).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      // Taken up on B: its turn runs there, and A's subscriber gets it, relayed.
      model.answerWith({ tokens: ['taken ', 'up ', 'on ', 'B.'], delayMs: 50 });
      expect(await rpcOnB.ok('plan/resume', { planId: plan.planId })).toMatchObject({ status: 'executing' });
      await until(ended, "A's subscriber to get the end of B's turn", 15000);
      expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
      const last = artifactUpdates(events).at(-1)!;
      expect([last.lastChunk, updateText(last)]).toEqual([true, 'taken up on B.']);
      expect(b.app.get(SessionWorkflow).runningTurns).toBe(0);
      // A let go of the ended task's bus.
      await until(() => a.app.get(RemoteTaskEvents).followingTakenUp === 0, 'A to stop following');
      expect(a.app.get(SessionEventBuses).busOf({ namespace: 'default', owner: 'anonymous' }, started.taskId)).toBe(
        undefined,
      );
    });

    it('a subscriber on A to a task waiting there ends with it when B cancels it as it stands', async () => {
      const { plan, started } = await planRunningOnA('canceled elsewhere', 'c');
      expect(await rpcOnA.ok('plan/pause', { planId: plan.planId })).toMatchObject({ status: 'paused' });
      const { events, ended } = subscribe(onA, started.taskId);
      await until(() => events.length > 0, 'the task as A stores it');
      const canceled = await onB.cancelTask({ id: started.taskId, tenant: '' } as never);
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      await until(ended, "A's subscriber to get the cancel", 15000);
      expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_CANCELED);
      expect(await rpcOnA.ok('plan/get', { planId: plan.planId })).toMatchObject({ status: 'canceled' });
      expect(a.app.get(SessionEventBuses).busOf({ namespace: 'default', owner: 'anonymous' }, started.taskId)).toBe(
        undefined,
      );
    });
  },
);

describeNeeding(
  runningPostgres(),
  'SubscribeToTask relayed from a replica that goes away (PostgreSQL, 2 s leases)',
  () => {
    let model: OpenAiCompatibleEndpoint;
    let db: TestDatabase;
    let holder: TestServer | undefined;
    let other: TestServer;

    beforeAll(async () => {
      model = await OpenAiCompatibleEndpoint.start({ tokens: ['x'] });
      db = await createTestDatabase();
      const env = {
        CLEVERAGENTS_ACTOR_BACKEND: 'local',
        CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
        CLEVERAGENTS_MODEL: 'onprem-model',
        CLEVERAGENTS_TASK_LEASE_SECONDS: '2',
        CLEVERAGENTS_SHUTDOWN_GRACE_MS: '0',
      };
      holder = await startServer(db, env);
      other = await startServer(db, env);
    }, 60000);

    afterAll(async () => {
      await holder?.close();
      await ifAssigned(other)?.close();
      await ifAssigned(db)?.cleanup();
      await ifAssigned(model)?.close();
    });

    it('the subscriber on the other replica follows the task to that replica once it takes the run over, to COMPLETED', async () => {
      model.answerWith({ tokens: Array.from({ length: 150 }, (_, i) => `g${i} `), delayMs: 30 });
      const onHolder = await new ClientFactory().createFromUrl(holder!.baseUrl);
      const onOther = await new ClientFactory().createFromUrl(other.baseUrl);
      let taskId = '';
      for await (const event of onHolder.sendMessageStream(sendRequest('m', { text: 'long, then gone' }))) {
        if (event.payload?.$case === 'task') taskId = event.payload.value.id;
        if (event.payload?.$case === 'artifactUpdate') break; // the turn goes on
      }
      const events: StreamResponse[] = [];
      const following = (async () => {
        for await (const event of onOther.resubscribeTask({ id: taskId, tenant: '' })) events.push(event);
      })();
      await until(() => events.some((e) => e.payload?.$case === 'artifactUpdate'), 'relayed tokens', 10000);
      // The replica running the task goes away mid-answer.
      await holder!.close();
      holder = undefined;
      await following;
      // The relay waited for the take-over and followed the task there, never ending on WORKING.
      const last = events.at(-1)!.payload!;
      expect(last.$case).toBe('statusUpdate');
      expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
      await until(
        async () =>
          (await onOther.getTask({ id: taskId, tenant: '', historyLength: 0 })).status?.state ===
          TaskState.TASK_STATE_COMPLETED,
        'the task to be completed by the replica left',
        20000,
      );
    }, 40000);
  },
);

/*
 * A wall-time budget runs on while a task waits (paused) and may be watched by more than one replica. Both
 * replicas run on one clock the test moves, so the figures are exact: a wait counted twice, or from the
 * wrong start, shows as a different number instead of a bound a loaded machine may overrun.
 */
describeNeeding(
  runningPostgres(),
  'Wall-time budgets of a wait two replicas watch, on one clock the test moves (PostgreSQL)',
  () => {
    const clock = new ManualClock();
    let model: OpenAiCompatibleEndpoint;
    let db: TestDatabase;
    let a: TestServer;
    let b: TestServer;
    let onA: Client;
    const rpcOnA = extensionCalls(() => a);
    const rpcOnB = extensionCalls(() => b);
    let env: Record<string, string>;

    /** Starts (or starts again) replica B on the shared clock. */
    async function startB(): Promise<void> {
      b = await startServer(db, env, { clock });
    }

    /** Waits until the armed timers (on both replicas) are due at exactly `due`. */
    async function armedAt(due: number[]): Promise<void> {
      const want = JSON.stringify(due);
      await until(() => JSON.stringify(clock.dueTimes()) === want, `timers due at ${want}`, 10000).catch(
        (error: Error) => {
          throw new Error(
            `${error.message}; armed: ${JSON.stringify(clock.dueTimes().map((t) => t - clock.now()))} from now`,
          );
        },
      );
    }

    beforeAll(async () => {
      model = await OpenAiCompatibleEndpoint.start({ tokens: ['x'] });
      db = await createTestDatabase();
      env = {
        CLEVERAGENTS_ACTOR_BACKEND: 'local',
        CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
        CLEVERAGENTS_MODEL: 'onprem-model',
      };
      a = await startServer(db, env, { clock });
      await startB();
      onA = await new ClientFactory().createFromUrl(a.baseUrl);
    }, 60000);

    afterAll(async () => {
      await ifAssigned(a)?.close();
      await ifAssigned(b)?.close();
      await ifAssigned(db)?.cleanup();
      await ifAssigned(model)?.close();
    });

    it('a wait whose wall-time budget runs out while two replicas watch it is ended, and counted, once', async () => {
      const limitSeconds = 4;
      const { plan, started, getTask } = await planRunning({ model, rpc: rpcOnA, client: onA }, 'bounded', 'e', {
        budget: { wallTimeSeconds: limitSeconds },
      });
      // Paused on A, which watches the wait; B, started again, watches it too from the stored status time.
      expect(await rpcOnA.ok('plan/pause', { planId: plan.planId })).toMatchObject({ status: 'paused' });
      await b.close();
      await startB();
      // The turn took no time on this clock: A's timer is due 1 ms past the whole budget. B, which found the
      // wait at start, reads the budgets 1 ms in and then arms its own for the same moment.
      const pausedAt = clock.now();
      await armedAt([pausedAt + 1, pausedAt + 4001]);
      clock.advance(1);
      await armedAt([pausedAt + 4001, pausedAt + 4001]);
      clock.advance(4000);
      await until(
        async () => (await getTask(onA)).status?.state === TaskState.TASK_STATE_FAILED,
        'the task to fail at its wall-time budget',
        20000,
      );
      // Both timers fired, and both replicas stopped watching the wait (each got as far as its claim).
      await until(
        () => ![a, b].some((replica) => replica.app.get(WaitingTasks).has(started.taskId)),
        'both replicas to end their watch',
        10000,
      );
      // The first end landed (the task failed, its wait counted); the second's would land the same way, so
      // for a second the count stays at one wait (counted twice, it would show 8002).
      await holdsThroughout(
        async () => (await rpcOnB.ok('plan/get', { planId: plan.planId })).usage.wallTimeMs === 4001,
        'one wait counted',
        1000,
      );
      const failed = await getTask(onA);
      expect(partText(failed.status?.message?.parts[0] as never)).toBe(
        `The plan ${plan.planId} wall time (seconds) budget is exceeded: limit ${limitSeconds}, used 4`,
      );
      const runs: { state: string }[] = await b.app
        .get(DataSource)
        .query('SELECT state FROM task_runs WHERE task_id = $1', [started.taskId]);
      expect(runs).toEqual([{ state: 'expired' }]);
      // Counted twice, the wait would show 8002.
      const usage = (await rpcOnB.ok('plan/get', { planId: plan.planId })).usage;
      expect(usage.wallTimeMs).toBe(4001);
      const session = await rpcOnB.ok('session/get', { sessionId: started.contextId });
      expect(session.usage.wallTimeMs).toBe(4001);
    }, 60000);

    it('a replica that watched an earlier wait ends a later one counting only the later one', async () => {
      const limitSeconds = 6;
      const { plan, getTask } = await planRunning({ model, rpc: rpcOnA, client: onA }, 'waits twice', 's', {
        budget: { wallTimeSeconds: limitSeconds },
      });
      // The first wait: paused on A, which watches it (due 1 ms past the budget); 1.5 s later it is resumed on
      // B, which counts the wait and runs the turn on.
      const firstWait = clock.now();
      expect(await rpcOnA.ok('plan/pause', { planId: plan.planId })).toMatchObject({ status: 'paused' });
      await armedAt([firstWait + 6001]);
      clock.advance(1500);
      model.answerWith({ tokens: Array.from({ length: 400 }, (_, i) => `r${i} `), delayMs: 20 });
      expect(await rpcOnB.ok('plan/resume', { planId: plan.planId })).toMatchObject({ status: 'executing' });
      await until(() => b.app.get(SessionWorkflow).runningTurns === 1, 'the turn on B');
      clock.advance(500);
      // The second wait: paused on B, which then stops; only A, still watching from the first wait, is left.
      expect(await rpcOnB.ok('plan/pause', { planId: plan.planId })).toMatchObject({ status: 'paused' });
      await b.close();
      try {
        // 2 s are used (1.5 s waiting, 0.5 s running): the budget runs out 4 s into the second wait, which is
        // when A's timer from the first wait falls due.
        clock.advance(4001);
        await until(
          async () => (await getTask(onA)).status?.state === TaskState.TASK_STATE_FAILED,
          'the task to fail at its wall-time budget',
          20000,
        );
        // Counted from the first wait's start, the time B already counted would come in twice (8001).
        const usage = (await rpcOnA.ok('plan/get', { planId: plan.planId })).usage;
        expect(usage.wallTimeMs).toBe(6001);
        expect(partText((await getTask(onA)).status?.message?.parts[0] as never)).toBe(
          `The plan ${plan.planId} wall time (seconds) budget is exceeded: limit ${limitSeconds}, used 6`,
        );
      } finally {
        await startB();
      }
    }, 60000);
  },
);
