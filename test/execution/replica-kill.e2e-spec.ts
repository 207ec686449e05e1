import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { localBackendEnv, startProcess, type ServerProcess } from '../support/server-process.js';
import { stateOf } from '../support/streams.js';
import { until } from '../support/wait.js';
import { sendRequest } from '../factories/messages.js';
import { describeNeeding, runningPostgres } from '../support/requirements.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * Two replicas (real processes) on one PostgreSQL; A dies (SIGKILL) while its turns stream to
 * subscribers on B. Every subscriber on B keeps its stream and follows its task to B, which takes the
 * runs over, to COMPLETED; a subscription opened on B during the gap does too, on its first try. One
 * task's lease is made to look held by a replica that does not answer: its subscriber ends with a
 * retryable error, never on WORKING, and subscribing again once the lease lapses follows it to the end.
 */

const LEASE_SECONDS = 2;
const TASKS = 5;
/** A replica id nobody answers to: the holder of a lease that looks live but whose process hangs. */
const SILENT_REPLICA = 'a-replica-that-stopped-answering';
const SLOW = Array.from({ length: 400 }, (_, i) => `w${i} `);
// What the recovered turns answer: long enough that B's relays attach while they still run.
const AFTER = Array.from({ length: 60 }, (_, i) => `r${i} `);

interface Followed {
  events: StreamResponse[];
  error?: string;
}

describeNeeding(
  runningPostgres(),
  'a replica killed under its subscribers on another replica (local backend, PostgreSQL)',
  () => {
    let model: OpenAiCompatibleEndpoint;
    let db: TestDatabase;
    let a: ServerProcess | undefined;
    let b: ServerProcess | undefined;

    beforeAll(async () => {
      model = await OpenAiCompatibleEndpoint.start({ tokens: SLOW, delayMs: 40 });
      db = await createTestDatabase();
      const env = localBackendEnv(db, model.baseUrl(), LEASE_SECONDS);
      a = await startProcess(env);
      b = await startProcess(env);
    }, 60_000);

    afterAll(async () => {
      for (const server of [a, b]) {
        if (server && server.process.exitCode === null && server.process.signalCode === null) {
          server.process.kill('SIGKILL');
          await server.exited;
        }
      }
      await ifAssigned(db)?.cleanup();
      await ifAssigned(model)?.close();
    });

    async function leaseOwners(taskIds: string[]): Promise<(string | null)[]> {
      const c = new pg.Client({ connectionString: db.env.DATABASE_URL });
      await c.connect();
      try {
        const { rows } = await c.query<{ task_id: string; lease_owner: string | null }>(
          'SELECT task_id, lease_owner FROM task_runs WHERE task_id = ANY($1)',
          [taskIds],
        );
        return taskIds.map((id) => rows.find((r) => r.task_id === id)?.lease_owner ?? null);
      } finally {
        await c.end();
      }
    }

    async function setLease(taskId: string, owner: string, seconds: number): Promise<void> {
      const c = new pg.Client({ connectionString: db.env.DATABASE_URL });
      await c.connect();
      try {
        await c.query(
          `UPDATE task_runs SET lease_owner = $2, lease_expires_at = now() + make_interval(secs => $3)
         WHERE task_id = $1`,
          [taskId, owner, seconds],
        );
      } finally {
        await c.end();
      }
    }

    /** SubscribeToTask over raw HTTP, to see its JSON-RPC events as sent; `live` resolves at its first token. */
    function followRaw(baseUrl: string, taskId: string): { done: Promise<any[]>; live: Promise<void> } {
      let live!: () => void;
      const first = new Promise<void>((resolve) => (live = resolve));
      const done = (async () => {
        const events: any[] = [];
        try {
          const res = await fetch(`${baseUrl}/a2a`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 'raw', method: 'SubscribeToTask', params: { id: taskId } }),
          });
          const decoder = new TextDecoder();
          let buffered = '';
          for await (const chunk of res.body!) {
            buffered += decoder.decode(chunk, { stream: true });
            let end: number;
            while ((end = buffered.indexOf('\n\n')) >= 0) {
              const data = buffered
                .slice(0, end)
                .split('\n')
                .filter((l) => l.startsWith('data: '))
                .map((l) => l.slice(6))
                .join('\n');
              buffered = buffered.slice(end + 2);
              if (!data) continue;
              const event = JSON.parse(data);
              events.push(event);
              if (event.result?.artifactUpdate) live();
            }
          }
          return events;
        } catch (error) {
          // The connection broke (the server went away): the events so far, then what broke it.
          return [...events, { transport: String(error) }];
        } finally {
          live();
        }
      })();
      return { done, live: first };
    }

    /**
     * Reads a SubscribeToTask stream on `client` to its end; `started` resolves at its first event, `live` at
     * its first relayed token.
     */
    function follow(
      client: Client,
      taskId: string,
    ): { done: Promise<Followed>; started: Promise<void>; live: Promise<void> } {
      let live!: () => void;
      let start!: () => void;
      const first = new Promise<void>((resolve) => (live = resolve));
      const started = new Promise<void>((resolve) => (start = resolve));
      const done = (async (): Promise<Followed> => {
        const events: StreamResponse[] = [];
        try {
          for await (const event of client.resubscribeTask({ id: taskId, tenant: '' })) {
            events.push(event);
            start();
            if (event.payload?.$case === 'artifactUpdate') live();
          }
          return { events };
        } catch (error) {
          return { events, error: String(error) };
        } finally {
          start();
          live();
        }
      })();
      return { done, started, live: first };
    }

    it('every subscriber on the survivor reaches COMPLETED without subscribing again', async () => {
      const onA = await new ClientFactory().createFromUrl(a!.baseUrl);
      const onB = await new ClientFactory().createFromUrl(b!.baseUrl);

      // TASKS turns streaming on A (their own streams die with A).
      const taskIds = await Promise.all(
        Array.from({ length: TASKS }, async (_, i) => {
          const stream = onA.sendMessageStream(sendRequest('k', { text: `long story ${i}` }));
          let taskId = '';
          for await (const event of stream) {
            if (event.payload?.$case === 'task') taskId = event.payload.value.id;
            if (event.payload?.$case === 'artifactUpdate') break;
          }
          // Read on in the background, so that A's turn is not slowed by an unread stream.
          void (async () => {
            try {
              for await (const _ of stream) void _;
            } catch {
              // A is killed under it: expected.
            }
          })();
          return taskId;
        }),
      );
      expect(taskIds.every((id) => id !== '')).toBe(true);
      const ownerA = (await leaseOwners(taskIds))[0];
      expect(await leaseOwners(taskIds)).toEqual(taskIds.map(() => ownerA));

      // A subscriber on B to each, relayed live from A; the last one's over raw HTTP.
      const silentTask = taskIds.pop()!;
      const followers = taskIds.map((id) => follow(onB, id));
      const raw = followRaw(b!.baseUrl, silentTask);
      await Promise.all([...followers.map((f) => f.live), raw.live]);

      // B's take-over cannot end a task before the late subscriber below has its first event, however slow the
      // machine: that subscriber is to see the task working, then follow it.
      let lateStarted!: () => void;
      const lateFirstEvent = new Promise<void>((resolve) => (lateStarted = resolve));
      model.answerWith({ tokens: AFTER, delayMs: 50, heldUntil: lateFirstEvent });
      const killedAt = Date.now();
      a!.process.kill('SIGKILL');
      expect(await a!.exited).toBeNull();
      // Before A's lease lapses (it was renewed a third of a lease ago at most): nobody takes this one over.
      await setLease(silentTask, SILENT_REPLICA, 3600);
      // Subscribed during the gap, while A's lease still looks live.
      const late = follow(onB, taskIds[0]);
      void late.started.then(lateStarted);

      // The documented bound is the lease expiry plus one sweep period; the wait leaves a loaded machine slack.
      const boundMs = LEASE_SECONDS * 2000;
      await until(
        async () => (await leaseOwners(taskIds)).every((owner) => owner !== ownerA),
        'B to take over the runs of A',
        boundMs + 20_000,
      );
      console.log(
        `replica-kill: B took over A's runs ${Date.now() - killedAt} ms after the kill (documented bound ${boundMs} ms)`,
      );

      const outcomes = await Promise.all([...followers.map((f) => f.done), late.done]);
      expect(outcomes.map((o) => o.error ?? 'ok')).toEqual(outcomes.map(() => 'ok'));
      expect(outcomes.map((o) => stateOf(o.events.at(-1)))).toEqual(outcomes.map(() => TaskState.TASK_STATE_COMPLETED));
      // The late subscriber saw the task working first: it followed it, not just read its end.
      expect(stateOf(outcomes.at(-1)!.events[0])).toBe(TaskState.TASK_STATE_WORKING);
      for (const id of taskIds) {
        const task = await onB.getTask({ id, tenant: '' });
        expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      }
      expect(b!.log()).toMatch(/resuming a task left running/);

      // The subscription whose task nobody took over ends with a retryable error, not on WORKING.
      const rawEvents = await raw.done;
      const endedAfterMs = Date.now() - killedAt;
      const last = rawEvents.at(-1);
      expect(last.result).toBeUndefined();
      expect(last.error.data[0]).toMatchObject({ reason: 'TASK_HANDOVER_PENDING', metadata: { retryable: 'true' } });
      console.log(`replica-kill: the subscription to a task nobody took over ended ${endedAfterMs} ms after the kill`);
      // Its lease lapses; a subscription made now follows B's take-over to COMPLETED, on its first try.
      await setLease(silentTask, SILENT_REPLICA, 0);
      const again = await follow(onB, silentTask).done;
      expect(again.error).toBeUndefined();
      expect(stateOf(again.events[0])).toBe(TaskState.TASK_STATE_WORKING);
      expect(stateOf(again.events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    }, 60_000);
  },
);
