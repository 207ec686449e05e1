import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { Client, ClientFactory } from '@a2a-js/sdk/client';
import { Client as LangGraphClient } from '@langchain/langgraph-sdk';
import {
  CAPABILITIES,
  sendRequestOf,
  statusData,
  toolArtifacts,
  wireMessage,
  type Json,
} from '../support/orchestration.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { startLangGraphServer, type LangGraphServer } from '../support/langgraph-server.js';
import { extensionCalls, fieldsOf, rawCall, reasonOf, startServer, type TestServer } from '../support/server.js';
import { collect, partText, stateOf } from '../support/streams.js';
import { ManualClock } from '../support/manual-clock.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * What the server does around an orchestrator's plan, gates and client-side tools (docs/protocol.md §5, §6.5, §7),
 * end to end through the official SDK client: the server runs the turns on a real LangGraph API server
 * whose `protocol` graph (test/fixtures/langgraph/protocol-graph.mjs) writes a plan and a tool call, asks
 * for approval, asks the client to read a file and reports usage. What is checked here is the server's
 * part: events and data parts, replies checked before they reach the task, plans stored and moved with
 * their tasks, plan/execute|pause|resume|cancel, budgets counted and enforced.
 */

const FILE_PATH = '/work/notes.txt';

/** The actor whose turns run the `protocol` graph on the LangGraph server. */
const REMOTE_ACTOR: Json = {
  kind: 'actor',
  name: 'remote',
  spec: { description: 'the protocol graph', graphId: 'protocol', tools: [] },
};

function dataOfType(events: readonly StreamResponse[], type: string): Json[] {
  return events.flatMap((e) => statusData(e)).filter((d) => d.type === type);
}

describe.each(databaseTargets())('plans, gates, client tools and budgets around a remote graph, on $kind', (target) => {
  let langgraph: LangGraphServer;
  let db: TestDatabase;
  let server: TestServer;
  let client: Client;
  const { call, ok } = extensionCalls(() => server);

  const send = (msg: Json) =>
    rawCall(
      server.endpoint,
      { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: msg } },
      {
        'A2A-Version': '1.0',
      },
    );
  const getTask = async (id: string): Promise<Task> => client.getTask({ tenant: '', id, historyLength: 0 });

  async function session(params: Json = {}): Promise<string> {
    return (await ok('session/create', { actor: 'remote', ...params })).sessionId;
  }

  const env = (): Record<string, string> => ({
    CLEVERAGENTS_ACTOR_BACKEND: 'langgraph',
    CLEVERAGENTS_LANGGRAPH_URL: langgraph.url,
  });

  beforeAll(async () => {
    langgraph = await startLangGraphServer();
    db = await target.create();
    server = await startServer(db, env());
    client = await new ClientFactory().createFromUrl(server.baseUrl);
    await ok('registry/create', REMOTE_ACTOR);
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(langgraph)?.close();
  });

  it('streams the plan and the tool call, checks every reply against what the task waits for, and completes', async () => {
    const contextId = await session({ profile: 'autonomous' });
    const first = await collect(
      client.sendMessageStream(sendRequestOf(wireMessage('plan please', { contextId, metadata: CAPABILITIES }))),
    );
    const task = (first[0].payload as { value: Task }).value;

    // The plan: a status update with the whole entry list; stored as a plan of the task's owner.
    const [planPart] = dataOfType(first, 'cleveragents/plan');
    expect(planPart.plan).toMatchObject({
      planId: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/),
      goal: 'plan please',
      status: 'executing',
      entries: [
        { content: 'Read the notes', priority: 'high', status: 'pending' },
        { content: 'Summarise them', priority: 'medium', status: 'pending' },
      ],
    });
    const planId = planPart.plan.planId as string;
    await until(async () => (await call('plan/get', { planId })).json.result !== undefined, 'the plan stored');
    expect(await ok('plan/get', { planId })).toMatchObject({
      taskId: task.id,
      sessionId: contextId,
      status: 'executing',
    });

    // The tool call is an artifact update; the gate a status INPUT_REQUIRED with the approval request.
    expect(toolArtifacts(first)).toEqual([
      {
        artifactId: 'tool-call-1',
        append: false,
        lastChunk: false,
        data: { type: 'cleveragents/tool-call', id: 'call-1', name: 'fs_read_text_file', args: { path: FILE_PATH } },
      },
    ]);
    expect(stateOf(first.at(-1))).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const [approval] = dataOfType(first, 'cleveragents/approval-request');
    expect(approval).toMatchObject({ requestId: 'approval-1', subject: { kind: 'tool', tool: 'fs_read_text_file' } });

    // Replies that do not answer it are refused, naming the field; the task keeps waiting as it was.
    const waiting = await getTask(task.id);
    const refused: [Json, string][] = [
      [wireMessage('yes please', { taskId: task.id, contextId }), 'message.parts'],
      [
        wireMessage('', { taskId: task.id, contextId }, [
          { type: 'cleveragents/approval-response', requestId: 'approval-9', decision: 'approve' },
        ]),
        'message.parts[0].data.requestId',
      ],
      [
        wireMessage('', { taskId: task.id, contextId }, [
          { type: 'cleveragents/approval-response', requestId: 'approval-1', decision: 'maybe' },
        ]),
        'message.parts[0].data.decision',
      ],
      [
        wireMessage('', { taskId: task.id, contextId }, [
          { type: 'cleveragents/approval-response', requestId: 'approval-1', decision: 'edit', edited: { path: 1 } },
        ]),
        'message.parts[0].data.decision',
      ],
    ];
    for (const [reply, field] of refused) {
      const answer = await send(reply);
      expect(answer.json.error?.code).toBe(-32602);
      expect(fieldsOf(answer)).toEqual([field]);
    }
    expect(await getTask(task.id)).toEqual(waiting);

    // Approved: the client is asked to read the file.
    const second = await collect(
      client.sendMessageStream(
        sendRequestOf(
          wireMessage('', { taskId: task.id, contextId }, [
            { type: 'cleveragents/approval-response', requestId: 'approval-1', decision: 'approve' },
          ]),
        ),
      ),
    );
    expect(stateOf(second.at(-1))).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const [clientRequest] = dataOfType(second, 'cleveragents/client-request');
    expect(clientRequest).toEqual({
      type: 'cleveragents/client-request',
      requests: [{ id: 'read-1', method: 'fs/read_text_file', params: { path: FILE_PATH } }],
    });
    expect(partText((second.at(-1)!.payload as any).value.status.message.parts[0])).toBe(
      'Run on the client: fs/read_text_file. Answer with a cleveragents/client-response.',
    );

    // Garbage as a client-response is refused, naming what is wrong.
    const garbage: [Json, string[]][] = [
      [{ type: 'cleveragents/client-response', responses: 'lots' }, ['message.parts[0].data.responses']],
      [
        { type: 'cleveragents/client-response', responses: [{ id: 'read-2', result: {} }] },
        ['message.parts[0].data.responses[0].id'],
      ],
      [
        { type: 'cleveragents/client-response', responses: [{ id: 'read-1', result: {}, error: { message: 'x' } }] },
        ['message.parts[0].data.responses[0]'],
      ],
      [
        { type: 'cleveragents/client-response', responses: [{ id: 'read-1', error: { code: 'E' } }] },
        ['message.parts[0].data.responses[0].error'],
      ],
      [{ type: 'cleveragents/client-response', responses: [] }, ['message.parts[0].data.responses']],
    ];
    const asked = await getTask(task.id);
    for (const [value, fields] of garbage) {
      const answer = await send(wireMessage('', { taskId: task.id, contextId }, [value]));
      expect(answer.json.error?.code).toBe(-32602);
      expect(fieldsOf(answer)).toEqual(fields);
    }
    expect(await getTask(task.id)).toEqual(asked);

    // The client's result reaches the graph; the tool artifact gets the result; the task completes.
    const third = await collect(
      client.sendMessageStream(
        sendRequestOf(
          wireMessage('', { taskId: task.id, contextId }, [
            { type: 'cleveragents/client-response', responses: [{ id: 'read-1', result: { content: 'hello notes' } }] },
          ]),
        ),
      ),
    );
    expect(stateOf(third.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    const done = await getTask(task.id);
    expect(partText(done.status?.message?.parts[0] as never)).toBe('The file says: hello notes');
    const toolArtifact = done.artifacts.find((a) => a.artifactId === 'tool-call-1');
    expect(toolArtifact?.parts.map((p) => (p.content as { value: Json }).value)).toEqual([
      { type: 'cleveragents/tool-call', id: 'call-1', name: 'fs_read_text_file', args: { path: FILE_PATH } },
      { type: 'cleveragents/tool-result', id: 'call-1', name: 'fs_read_text_file', result: { content: 'hello notes' } },
    ]);
    // The final status carries the plan as it ends: completed with its task.
    expect(statusData(done).find((d) => d.type === 'cleveragents/plan')?.plan).toMatchObject({
      planId,
      status: 'completed',
    });
    expect(await ok('plan/get', { planId })).toMatchObject({
      status: 'completed',
      usage: { toolCalls: 1, tokens: 42 },
    });
    const counted = await ok('session/get', { sessionId: contextId });
    expect(counted.usage).toMatchObject({ toolCalls: 1, tokens: 42 });
    expect(counted.usage.wallTimeMs).toBeGreaterThan(0);
  });

  it('a malformed clientCapabilities declaration is refused naming the field; nothing is made', async () => {
    const before = await ok('session/list', {});
    const answer = await send(
      wireMessage('plan please', { metadata: { 'cleveragents/clientCapabilities': { fs: { read: 'yes' } } } }),
    );
    expect(answer.json.error?.code).toBe(-32602);
    expect(fieldsOf(answer)).toEqual(['message.metadata.cleveragents/clientCapabilities.fs.read']);
    expect((await ok('session/list', {})).totalSize).toBe(before.totalSize);
  });

  it('a plan rejected at its gate ends the task rejected and the plan canceled', async () => {
    const contextId = await session();
    const events = await collect(client.sendMessageStream(sendRequestOf(wireMessage('reject me', { contextId }))));
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_REJECTED);
    const planId = dataOfType(events, 'cleveragents/plan')[0].plan.planId as string;
    // Under the default actor's profile (guarded) the plan was a draft waiting for approval; now canceled.
    expect(await ok('plan/get', { planId })).toMatchObject({ status: 'canceled' });
    expect(statusData(events.at(-1)).find((d) => d.type === 'cleveragents/plan')?.plan.status).toBe('canceled');
  });

  it('a token budget crossed mid-run fails the task naming it; the next message in the session is -32006', async () => {
    // The graph reports 7 tokens before it answers: a 5-token budget is crossed before the answer is out.
    const contextId = await session({ profile: 'autonomous', budget: { tokens: 5 } });
    const events = await collect(client.sendMessageStream(sendRequestOf(wireMessage('slow please', { contextId }))));
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_FAILED);
    const text = partText((events.at(-1)!.payload as any).value.status.message.parts[0]);
    expect(text).toBe(`The session ${contextId} token budget is exceeded: limit 5, used 7`);
    // The answer was cut off: the remote run was canceled, not finished.
    expect(events.some((e) => e.payload?.$case === 'artifactUpdate' && e.payload.value.lastChunk)).toBe(false);
    const answer = await send(wireMessage('more', { contextId }));
    expect(answer.json.error?.code).toBe(-32006);
    expect(answer.json.error.data[0]).toMatchObject({
      reason: 'BUDGET_EXCEEDED',
      domain: 'cleveragents',
      metadata: { limit: '5', used: '7', unit: 'tokens' },
    });
  });

  /*
   * The wall-time budget goes on running while a task waits for its client. The server runs on a clock
   * the test moves: the budget runs out exactly when the test says, and the figure shown is exact.
   */
  describe('the wall-time budget of a task waiting for its client, on a clock the test moves', () => {
    const clock = new ManualClock();
    // A database of its own: an embedded one opens in one server at a time.
    let timedDb: TestDatabase;
    let timed: TestServer;
    let timedClient: Client;
    const timedCalls = extensionCalls(() => timed);
    const getTimed = (id: string): Promise<Task> => timedClient.getTask({ tenant: '', id, historyLength: 0 });

    async function startTimed(): Promise<void> {
      timed = await startServer(timedDb, env(), { clock });
      timedClient = await new ClientFactory().createFromUrl(timed.baseUrl);
    }

    /** A task of a new session with a wall-time budget of `limit` seconds, waiting for its client. */
    async function waitingTask(limit: number): Promise<{ contextId: string; taskId: string }> {
      const { sessionId: contextId } = await timedCalls.ok('session/create', {
        actor: 'remote',
        profile: 'autonomous',
        budget: { wallTimeSeconds: limit },
      });
      const events = await collect(
        timedClient.sendMessageStream(sendRequestOf(wireMessage('plan please', { contextId, metadata: CAPABILITIES }))),
      );
      expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      return { contextId, taskId: (events[0].payload as { value: Task }).value.id };
    }

    /** Waits until the server armed a timer due at `due` (the server arms it after the stream's last event). */
    async function armedAt(due: number): Promise<void> {
      await until(() => clock.dueTimes().includes(due), `a timer due at +${due - clock.now()} ms`, 5000);
    }

    beforeAll(async () => {
      timedDb = await target.create();
      await startTimed();
      await timedCalls.ok('registry/create', REMOTE_ACTOR);
    }, 60000);
    afterAll(async () => {
      await ifAssigned(timed)?.close();
      await ifAssigned(timedDb)?.cleanup();
    });

    it('a client that never answers: the task fails the moment the budget is over, naming it, with the exact figure', async () => {
      const { contextId, taskId } = await waitingTask(2);
      // The turn took no time on this clock: the whole budget is left, and the timer fires 1 ms past it.
      // (The message shows tenths of a second; the session counts milliseconds.)
      await armedAt(clock.now() + 2001);
      clock.advance(2000);
      // At the limit, not over it: nothing fired, the task still waits.
      expect(clock.dueTimes()).toEqual([clock.now() + 1]);
      expect((await getTimed(taskId)).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      clock.advance(1);
      await until(async () => (await getTimed(taskId)).status?.state === TaskState.TASK_STATE_FAILED, 'failed', 10000);
      const failed = await getTimed(taskId);
      expect(partText(failed.status?.message?.parts[0] as never)).toBe(
        `The session ${contextId} wall time (seconds) budget is exceeded: limit 2, used 2`,
      );
      expect((await timedCalls.ok('session/get', { sessionId: contextId })).usage.wallTimeMs).toBe(2001);
      const plan = statusData(failed).find((d) => d.type === 'cleveragents/plan')?.plan;
      expect(plan?.status).toBe('failed');
      const answer = await rawCall(
        timed.endpoint,
        { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: wireMessage('again', { contextId }) } },
        { 'A2A-Version': '1.0' },
      );
      expect(answer.json.error?.code).toBe(-32006);
      expect(answer.json.error.data[0].metadata.unit).toBe('wallTimeSeconds');
    });

    it('a task still waiting when the server restarts: its wait before the restart counts, and the budget ends it on time', async () => {
      const { contextId, taskId } = await waitingTask(3);
      await armedAt(clock.now() + 3001);
      clock.advance(1000);
      // A restart: the new process knows of the waiting task only from the database, and watches it
      // from its stored status time.
      await timed.close();
      expect(clock.dueTimes()).toEqual([]);
      await startTimed();
      expect((await getTimed(taskId)).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      // First it reads the budget (a timer due at once), then arms the rest of it: 3001 ms after the wait began.
      await armedAt(clock.now() + 1);
      clock.advance(1);
      await armedAt(clock.now() + 2000);
      clock.advance(2000);
      await until(async () => (await getTimed(taskId)).status?.state === TaskState.TASK_STATE_FAILED, 'failed', 10000);
      expect(partText((await getTimed(taskId)).status?.message?.parts[0] as never)).toBe(
        `The session ${contextId} wall time (seconds) budget is exceeded: limit 3, used 3`,
      );
      expect((await timedCalls.ok('session/get', { sessionId: contextId })).usage.wallTimeMs).toBe(3001);
    });
  });

  describe('plan/execute', () => {
    async function approvedPlan(goal: string, extra: Json = {}): Promise<string> {
      const sessionId = await session();
      const plan = await ok('plan/create', {
        sessionId,
        goal,
        entries: [{ content: 'Write forty words', priority: 'high' }],
        ...extra,
      });
      await ok('plan/approve', { planId: plan.planId });
      return plan.planId;
    }

    it('refuses plans that are not approved (-32004) and names the transition', async () => {
      const draft = await ok('plan/create', { goal: 'not yet' });
      const answer = await call('plan/execute', { planId: draft.planId });
      expect(answer.json.error?.code).toBe(-32004);
      expect(answer.json.error.data[0]).toMatchObject({
        reason: 'INVALID_TRANSITION',
        metadata: { planId: draft.planId, status: 'draft', operation: 'execute' },
      });
      expect((await ok('plan/get', { planId: draft.planId })).status).toBe('draft');
      const bad = await call('plan/execute', { planId: draft.planId, clientCapabilities: { terminal: 'on' } });
      expect(bad.json.error?.code).toBe(-32602);
      expect(fieldsOf(bad)).toEqual(['clientCapabilities']);
      const violations = bad.json.error.data.flatMap((d: any) => d.fieldViolations ?? []);
      expect(violations[0].description).toBe('clientCapabilities.terminal must be a boolean');
      // Null, or a declaration that leaves parts out, passes the params check (the plan is still a draft).
      for (const clientCapabilities of [null, {}, { fs: { read: true } }]) {
        const declared = await call('plan/execute', { planId: draft.planId, clientCapabilities });
        expect(declared.json.error?.data[0]?.reason).toBe('INVALID_TRANSITION');
      }
    });

    /** The LangGraph thread of a session (the backend names it after namespace, owner and context). */
    async function threadOf(remote: LangGraphClient, contextId: string): Promise<string> {
      const [thread] = await remote.threads.search({ metadata: { cleveragents_context_id: contextId } });
      return thread.thread_id;
    }

    it('runs the plan as a task: GetTask and SubscribeToTask on it, pause and resume, completed with its plan', async () => {
      const planId = await approvedPlan('slow work');
      const started = await ok('plan/execute', { planId });
      expect(started).toEqual({
        planId,
        taskId: expect.any(String),
        contextId: expect.any(String),
        status: 'executing',
      });
      const plan = await ok('plan/get', { planId });
      expect(plan).toMatchObject({ status: 'executing', taskId: started.taskId, sessionId: started.contextId });

      // Subscribed: the plan as it starts, then tokens.
      const seen: StreamResponse[] = [];
      const subscription = (async () => {
        for await (const event of client.resubscribeTask({ tenant: '', id: started.taskId })) {
          seen.push(event);
          if (stateOf(event) === TaskState.TASK_STATE_INPUT_REQUIRED) break;
        }
      })();
      await until(() => seen.some((e) => e.payload?.$case === 'artifactUpdate'), 'tokens', 10000);
      expect((await getTask(started.taskId)).status?.state).toBe(TaskState.TASK_STATE_WORKING);

      // Paused: the task stops where it is and waits, its plan shown paused.
      expect(await ok('plan/pause', { planId })).toMatchObject({ status: 'paused' });
      await subscription;
      const paused = await getTask(started.taskId);
      expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      expect(partText(paused.status?.message?.parts[0] as never)).toBe(
        `Plan ${planId} is paused; resume it with _cleveragents/plan/resume.`,
      );
      expect(statusData(paused).find((d) => d.type === 'cleveragents/plan')?.plan).toMatchObject({
        planId,
        status: 'paused',
      });
      const blocked = await send(wireMessage('go on', { taskId: started.taskId, contextId: started.contextId }));
      expect(blocked.json.error?.code).toBe(-32004);
      expect(reasonOf(blocked)).toBe('PLAN_PAUSED');

      // On the LangGraph server the run was stopped, not let go: it is no longer running, its answer stopped
      // part-way (the whole stream it wrote is over and lacks the last word), and the thread's last checkpoint
      // waits at the node it was in.
      const remote = new LangGraphClient({ apiUrl: langgraph.url, apiKey: null });
      const threadId = await threadOf(remote, started.contextId);
      const [stopped] = await remote.runs.list(threadId);
      expect(stopped.status).toBe('interrupted');
      let streamedWhilePaused = '';
      for await (const part of remote.runs.joinStream(threadId, stopped.run_id, {
        lastEventId: '-1',
        streamMode: ['messages-tuple'],
      })) {
        if (part.event.startsWith('messages')) {
          streamedWhilePaused += String((part.data as [{ content?: unknown }])[0].content);
        }
      }
      expect(streamedWhilePaused).not.toContain('w39.');
      const waiting = await remote.threads.getState(threadId);
      expect(waiting.next).toEqual(['slow']);
      expect((await remote.runs.get(threadId, stopped.run_id)).status).toBe('interrupted');

      // Resumed: it goes on to the end.
      expect(await ok('plan/resume', { planId })).toMatchObject({ status: 'executing' });
      await until(
        async () => (await getTask(started.taskId)).status?.state === TaskState.TASK_STATE_COMPLETED,
        'completed',
        15000,
      );
      const done = await getTask(started.taskId);
      const whole = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ') + '.';
      expect(partText(done.status?.message?.parts[0] as never)).toBe(whole);
      expect(
        done.artifacts.filter((a) => a.name === 'answer').map((a) => a.parts.map((p) => partText(p as never)).join('')),
      ).toEqual([whole]);
      // Continued from the checkpoint by a second run: the answer is on the thread once, and the events the
      // node wrote before the pause (its plan and usage, written again when it ran again) were counted once.
      const runs = await remote.runs.list(threadId);
      expect(runs.map((r) => r.status).sort()).toEqual(['interrupted', 'success']);
      const messages = (await remote.threads.getState(threadId)).values as {
        messages: { type: string; content: unknown }[];
      };
      expect(messages.messages.filter((m) => m.type === 'ai').map((m) => m.content)).toEqual([whole]);
      expect(await ok('plan/get', { planId })).toMatchObject({ status: 'completed', usage: { tokens: 7 } });
    });

    it('CancelTask on the task cancels the plan; plan/cancel cancels the task', async () => {
      const first = await ok('plan/execute', { planId: await approvedPlan('hold one') });
      await until(async () => (await getTask(first.taskId)).artifacts.length > 0, 'tokens', 10000);
      const canceled = await client.cancelTask({ tenant: '', id: first.taskId, metadata: undefined });
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      await until(async () => (await ok('plan/get', { planId: first.planId })).status === 'canceled', 'canceled');

      const second = await ok('plan/execute', { planId: await approvedPlan('hold two') });
      await until(async () => (await getTask(second.taskId)).artifacts.length > 0, 'tokens', 10000);
      expect(await ok('plan/cancel', { planId: second.planId })).toMatchObject({ status: 'canceled' });
      await until(
        async () => (await getTask(second.taskId)).status?.state === TaskState.TASK_STATE_CANCELED,
        'canceled',
      );
    });

    it('CancelTask on the task of a paused plan after a restart (no bus of it any more) cancels the plan and counts the pause', async () => {
      const { planId, taskId } = await ok('plan/execute', { planId: await approvedPlan('hold, then paused') });
      await until(async () => (await getTask(taskId)).artifacts.length > 0, 'tokens', 10000);
      expect(await ok('plan/pause', { planId })).toMatchObject({ status: 'paused' });
      const pausedAt = Date.now();
      const usedBefore = (await ok('plan/get', { planId })).usage.wallTimeMs;
      await server.close();
      server = await startServer(db, env());
      client = await new ClientFactory().createFromUrl(server.baseUrl);
      const pausedFor = Date.now() - pausedAt;
      const canceled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      const plan = await ok('plan/get', { planId });
      expect(plan.status).toBe('canceled');
      expect(plan.usage.wallTimeMs - usedBefore).toBeGreaterThanOrEqual(pausedFor);
    });

    it('a plan whose budget is used up is not executed again: -32006 with limit, used and unit', async () => {
      const planId = await approvedPlan('slow budget', { budget: { tokens: 5 } });
      const started = await ok('plan/execute', { planId });
      await until(
        async () => (await getTask(started.taskId)).status?.state === TaskState.TASK_STATE_FAILED,
        'failed',
        15000,
      );
      expect(partText((await getTask(started.taskId)).status?.message?.parts[0] as never)).toMatch(
        new RegExp(`^The (plan ${planId}|session ${started.contextId}) token budget is exceeded: limit 5, used 7$`),
      );
      const plan = await ok('plan/get', { planId });
      expect(plan.status).toBe('failed');
      expect(plan.usage.tokens).toBe(7);
    });
  });
});
