import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CAPABILITIES, wireMessage, type Json } from '../support/orchestration.js';
import { createTestDatabase, databaseTargets, type TestDatabase } from '../support/database.js';
import { startLangGraphServer, type LangGraphServer } from '../support/langgraph-server.js';
import { ManualClock } from '../support/manual-clock.js';
import { OpenAiCompatibleEndpoint, type EndpointAnswer } from '../support/openai-endpoint.js';
import { extensionCalls, fieldsOf, rawCall, reasonOf, startServer, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';
import { describeNeeding, runningPostgres } from '../support/requirements.js';

/*
 * Approval timeouts (docs/plans.md#approval-timeouts), end to end on a real server whose clock the test moves.
 * Two kinds of gate: a tool gate that the `protocol` graph on a real LangGraph API server asks
 * (test/fixtures/langgraph/protocol-graph.mjs: a rejection ends its run rejected), and the plan gate the
 * server's own orchestrator asks under a `manual` profile, its model a scripted OpenAI-compatible endpoint.
 * Each profile here sets `approvalTimeout`; the gates wait, are denied when it runs out (or keep waiting),
 * race a person's answer, and survive a restart.
 */

const MINUTE = 60_000;
const REMOTE_ACTOR: Json = {
  kind: 'actor',
  name: 'remote',
  spec: { description: 'the protocol graph', graphId: 'protocol', tools: [] },
};
const PLAN = [{ content: 'Read the notes', priority: 'high', status: 'pending' }];

/** The profiles of this suite: a gate that waits 15 minutes then is denied, one that keeps waiting, a plan gate. */
const PROFILES: Json[] = [
  {
    kind: 'profile',
    name: 'timed-deny',
    spec: { gate: 'autonomous', approvalTimeout: { seconds: 900 } },
  },
  {
    kind: 'profile',
    name: 'timed-wait',
    spec: { gate: 'autonomous', approvalTimeout: { seconds: 60, onTimeout: 'keep-waiting' } },
  },
  {
    kind: 'profile',
    name: 'timed-plan',
    spec: { gate: 'manual', approvalTimeout: { seconds: 120, onTimeout: 'deny' } },
  },
];

/**
 * The scripted model of the server's orchestrator: asked to write, it calls fs_write_text_file; else it writes a
 * plan; once it has a tool's result, it answers "Done.".
 */
function orchestratorModel(body: Json): EndpointAnswer {
  const messages = body.messages as Json[];
  if (messages.some((m) => m.role === 'tool')) return { tokens: ['Done', '.'] };
  if (JSON.stringify(messages.filter((m) => m.role === 'user')).includes('write please')) {
    const args = { path: '/work/out.txt', content: 'x' };
    return { toolCalls: [{ id: 'write-1', name: 'fs_write_text_file', arguments: JSON.stringify(args) }] };
  }
  return { toolCalls: [{ id: 'plan-1', name: 'update_plan', arguments: JSON.stringify({ entries: PLAN }) }] };
}

describe.each(databaseTargets())('approval timeouts, on $kind', (target) => {
  const clock = new ManualClock();
  let langgraph: LangGraphServer;
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let namespace: string;
  const { call, ok } = extensionCalls(() => server);

  const rpc = (method: string, params: Json) =>
    rawCall(server.endpoint, { jsonrpc: '2.0', id: 1, method, params }, { 'A2A-Version': '1.0' });
  const getTask = async (id: string): Promise<Json> => (await rpc('GetTask', { id, historyLength: 50 })).json.result;
  const stateOf = async (taskId: string): Promise<string> => (await getTask(taskId)).status.state;
  const approvalOf = (approvalId: string): Promise<Json> => ok('approval/get', { approvalId });
  const auditOf = async (approvalId: string): Promise<Json[]> =>
    (await ok('audit/list', { namespace, target: approvalId })).items as Json[];

  const env = (): Record<string, string> => ({
    CLEVERAGENTS_ACTOR_BACKEND: 'local',
    CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
    CLEVERAGENTS_MODEL: 'timeouts',
    CLEVERAGENTS_LANGGRAPH_URL: langgraph.url,
  });

  /**
   * A task waiting at a gate: the protocol graph's tool gate, or the plan gate (`plan`) or a tool gate
   * (`local-tool`) of the server's orchestrator.
   */
  async function gate(
    profile: string,
    kind: 'tool' | 'plan' | 'local-tool' = 'tool',
  ): Promise<{ taskId: string; request: Json }> {
    const { sessionId } = await ok('session/create', { profile, ...(kind === 'tool' ? { actor: 'remote' } : {}) });
    const text = { tool: 'plan please', plan: 'go', 'local-tool': 'write please' }[kind];
    const answer = await rpc('SendMessage', {
      message: wireMessage(text, { contextId: sessionId, metadata: CAPABILITIES }),
    });
    const task = answer.json.result.task;
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const request = task.status.message.parts.find((p: Json) => p.data?.type === 'cleveragents/approval-request').data;
    expect(request.subject.kind).toBe(kind === 'plan' ? 'plan' : 'tool');
    return { taskId: task.id, request };
  }

  /** Waits until the server armed a timer due at `due`. */
  const armedAt = (due: number) =>
    until(() => clock.dueTimes().includes(due), `a timer due at +${due - clock.now()} ms`, 5000);

  const startTimed = async (): Promise<void> => {
    server = await startServer(db, env(), { clock });
  };

  beforeAll(async () => {
    langgraph = await startLangGraphServer();
    model = await OpenAiCompatibleEndpoint.start(orchestratorModel);
    db = await target.create();
    await startTimed();
    namespace = (await ok('auth/whoami')).defaultNamespace;
    await ok('registry/create', REMOTE_ACTOR);
    for (const profile of PROFILES) await ok('registry/create', profile);
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
    await ifAssigned(langgraph)?.close();
  });

  it('a bad approvalTimeout is -32602 naming the field; the profile stored stays as it was', async () => {
    const refused: [Json, string][] = [
      [{ seconds: -5 }, 'spec.approvalTimeout.seconds'],
      [{ seconds: 0 }, 'spec.approvalTimeout.seconds'],
      [{ seconds: 'soon' }, 'spec.approvalTimeout.seconds'],
      [{ seconds: 1.5 }, 'spec.approvalTimeout.seconds'],
      [{ seconds: 31 * 24 * 3600 }, 'spec.approvalTimeout.seconds'],
      [{ seconds: 60, onTimeout: 'approve' }, 'spec.approvalTimeout.onTimeout'],
      [{ onTimeout: 'deny' }, 'spec.approvalTimeout.seconds'],
      [{ seconds: 60, after: 'deny' }, 'spec.approvalTimeout.after'],
    ];
    const before = await ok('registry/get', { kind: 'profile', name: 'timed-deny' });
    for (const [approvalTimeout, field] of refused) {
      const created = await call('registry/create', {
        kind: 'profile',
        name: 'bad-timeout',
        spec: { gate: 'manual', approvalTimeout },
      });
      expect([created.json.error?.code, fieldsOf(created)]).toEqual([-32602, [field]]);
      const updated = await call('registry/update', {
        kind: 'profile',
        name: 'timed-deny',
        spec: { gate: 'autonomous', approvalTimeout },
      });
      expect([updated.json.error?.code, fieldsOf(updated)]).toEqual([-32602, [field]]);
    }
    const notObject = await call('registry/create', {
      kind: 'profile',
      name: 'bad-timeout',
      spec: { gate: 'manual', approvalTimeout: 900 },
    });
    expect([notObject.json.error?.code, fieldsOf(notObject)]).toEqual([-32602, ['spec.approvalTimeout']]);
    expect(notObject.json.error.message).toContain('approvalTimeout');
    const missing = await call('registry/get', { kind: 'profile', name: 'bad-timeout' });
    expect(reasonOf(missing)).toBe('REGISTRY_ENTRY_NOT_FOUND');
    expect(await ok('registry/get', { kind: 'profile', name: 'timed-deny' })).toEqual(before);
  });

  it('a tool gate nobody answers is denied when its timeout runs out: expired, a true reason, the task rejected, audited', async () => {
    const { taskId, request } = await gate('timed-deny');
    const asked = await approvalOf(request.approvalId);
    expect(asked).toMatchObject({ state: 'pending', onTimeout: 'deny' });
    expect(Date.parse(asked.expiresAt) - Date.parse(asked.askedAt)).toBe(15 * MINUTE);
    // The request in the task's status carries the deadline too.
    expect([request.expiresAt, request.onTimeout]).toEqual([asked.expiresAt, 'deny']);
    const due = Date.parse(asked.expiresAt);
    await armedAt(due);

    clock.advance(due - clock.now() - 1);
    expect(await stateOf(taskId)).toBe('TASK_STATE_INPUT_REQUIRED');
    expect((await approvalOf(request.approvalId)).state).toBe('pending');
    clock.advance(1);
    await until(async () => (await stateOf(taskId)) === 'TASK_STATE_REJECTED', 'the task rejected');

    const reason = "No answer within 15 minutes: the profile's approval timeout denied it";
    const expired = await approvalOf(request.approvalId);
    expect(expired).toMatchObject({
      state: 'expired',
      answeredBy: 'system',
      channel: 'timeout',
      reason,
      expiresAt: asked.expiresAt,
      answeredAt: expect.any(String),
    });
    // The task was answered as a person's rejection is: the response, with the reason, in its history.
    const task = await getTask(taskId);
    const responses = task.history
      .flatMap((m: Json) => m.parts ?? [])
      .filter((p: Json) => p.data?.type === 'cleveragents/approval-response')
      .map((p: Json) => p.data);
    expect(responses).toEqual([
      { type: 'cleveragents/approval-response', requestId: 'approval-1', decision: 'reject', reason },
    ]);
    expect(await auditOf(request.approvalId)).toEqual([
      expect.objectContaining({
        actor: 'system',
        action: 'approval.expire',
        details: expect.objectContaining({
          state: 'expired',
          decision: 'reject',
          channel: 'timeout',
          reason,
          subjectHash: asked.subjectHash,
          expiresAt: asked.expiresAt,
        }),
      }),
      expect.objectContaining({ action: 'approval.request', details: expect.objectContaining({ state: 'pending' }) }),
    ]);

    // Answered once: a person's answer now, by method or in-stream, is ALREADY_ANSWERED.
    const late = await call('approval/answer', { approvalId: request.approvalId, decision: 'approve' });
    expect([late.json.error?.code, reasonOf(late)]).toEqual([-32004, 'ALREADY_ANSWERED']);
    expect(late.json.error.data[0].metadata).toEqual({ approvalId: request.approvalId, state: 'expired' });
    const stream = await rpc('SendMessage', {
      message: wireMessage('', { taskId, contextId: task.contextId }, [
        { type: 'cleveragents/approval-response', requestId: 'approval-1', decision: 'approve' },
      ]),
    });
    expect(reasonOf(stream)).toBe('ALREADY_ANSWERED');
    expect((await auditOf(request.approvalId)).map((r) => r.action)).toEqual(['approval.expire', 'approval.request']);
  });

  it("a plan gate nobody answers is denied when its timeout runs out; the task ends as after a person's denial", async () => {
    const { taskId, request } = await gate('timed-plan', 'plan');
    const asked = await approvalOf(request.approvalId);
    expect(Date.parse(asked.expiresAt) - Date.parse(asked.askedAt)).toBe(2 * MINUTE);
    await armedAt(Date.parse(asked.expiresAt));
    clock.advance(2 * MINUTE);
    await until(async () => (await stateOf(taskId)) === 'TASK_STATE_REJECTED', 'the plan rejected');
    // The task says why, truly: no person rejected it.
    const said = (await getTask(taskId)).status.message.parts.map((p: Json) => p.text ?? '').join('');
    expect(said).toBe("The plan was rejected: No answer within 2 minutes: the profile's approval timeout denied it");
    expect(await approvalOf(request.approvalId)).toMatchObject({
      state: 'expired',
      answeredBy: 'system',
      channel: 'timeout',
      reason: "No answer within 2 minutes: the profile's approval timeout denied it",
    });
    const actions = (await auditOf(request.approvalId)).map((r) => [r.action, r.actor]);
    expect(actions).toEqual([
      ['approval.expire', 'system'],
      ['approval.request', 'anonymous'],
    ]);
  });

  it("a client-side call's gate of the server's orchestrator denied by its timeout: the model is told why and goes on", async () => {
    const { taskId, request } = await gate('timed-plan', 'local-tool');
    expect(request.subject).toMatchObject({ tool: 'fs_write_text_file' });
    await armedAt(Date.parse((await approvalOf(request.approvalId)).expiresAt));
    const asked = model.completions.length;
    clock.advance(2 * MINUTE);
    await until(async () => (await stateOf(taskId)) === 'TASK_STATE_COMPLETED', 'the task to go on and complete');
    const said = (await getTask(taskId)).status.message.parts.map((p: Json) => p.text ?? '').join('');
    expect(said).toBe('Done.');
    // The model's next call carried the denied call's result: the timeout's reason, naming no person.
    const next = model.completions.slice(asked).map((r) => r.body.messages as Json[]);
    const results = next.flatMap((messages) => messages.filter((m) => m.role === 'tool').map((m) => String(m.content)));
    expect(results).toContain(
      "Error: This call was denied: No answer within 2 minutes: the profile's approval timeout denied it",
    );
    expect(await approvalOf(request.approvalId)).toMatchObject({ state: 'expired', channel: 'timeout' });
  });

  it('keep-waiting: past its time the gate still waits, shown overdue; a person answers it then', async () => {
    const { taskId, request } = await gate('timed-wait');
    const asked = await approvalOf(request.approvalId);
    expect(asked).toMatchObject({ state: 'pending', onTimeout: 'keep-waiting' });
    const due = Date.parse(asked.expiresAt);
    expect(due - Date.parse(asked.askedAt)).toBe(MINUTE);
    // Nothing to do at the deadline: no timer armed for it.
    expect(clock.dueTimes()).not.toContain(due);
    clock.advance(5 * MINUTE);
    expect(await stateOf(taskId)).toBe('TASK_STATE_INPUT_REQUIRED');
    const overdue = await approvalOf(request.approvalId);
    expect(overdue).toMatchObject({ state: 'pending', expiresAt: asked.expiresAt, answeredAt: null });
    expect(Date.parse(overdue.expiresAt)).toBeLessThan(clock.now());
    const listed = await ok('approval/list', { sessionId: asked.sessionId });
    expect(listed.items).toEqual([overdue]);
    const answered = await ok('approval/answer', { approvalId: request.approvalId, decision: 'reject' });
    expect(answered).toMatchObject({ state: 'rejected', answeredBy: 'anonymous', channel: 'method' });
    await until(async () => (await stateOf(taskId)) === 'TASK_STATE_REJECTED', 'the task rejected');
    expect((await auditOf(request.approvalId)).map((r) => r.action)).toEqual(['approval.answer', 'approval.request']);
  });

  it('a person answering before the timeout wins: the timeout finds it answered and does nothing', async () => {
    const { taskId, request } = await gate('timed-deny');
    const due = Date.parse((await approvalOf(request.approvalId)).expiresAt);
    await armedAt(due);
    await ok('approval/answer', { approvalId: request.approvalId, decision: 'reject', reason: 'no' });
    await until(async () => (await stateOf(taskId)) === 'TASK_STATE_REJECTED', 'the task rejected');
    clock.advance(due - clock.now());
    expect(clock.dueTimes()).not.toContain(due);
    expect(await approvalOf(request.approvalId)).toMatchObject({ state: 'rejected', reason: 'no' });
    expect((await auditOf(request.approvalId)).map((r) => r.action)).toEqual(['approval.answer', 'approval.request']);
  });

  it('a person answering at the moment the timeout runs out: exactly one wins, the other is ALREADY_ANSWERED', async () => {
    for (let round = 0; round < 3; round++) {
      const { taskId, request } = await gate('timed-deny');
      const due = Date.parse((await approvalOf(request.approvalId)).expiresAt);
      await armedAt(due);
      const human = call('approval/answer', { approvalId: request.approvalId, decision: 'approve' });
      clock.advance(due - clock.now());
      const answer = await human;
      await until(async () => (await approvalOf(request.approvalId)).state !== 'pending', 'the approval ended');
      const ended = await approvalOf(request.approvalId);
      const actions = (await auditOf(request.approvalId)).map((r) => r.action);
      if (answer.json.error === undefined) {
        // The person won: approved, the timeout's denial refused.
        expect(ended).toMatchObject({ state: 'approved', answeredBy: 'anonymous', channel: 'method' });
        expect(actions).toEqual(['approval.answer', 'approval.request']);
        await until(async () => (await stateOf(taskId)) !== 'TASK_STATE_WORKING', 'the task to go on');
      } else {
        expect([answer.json.error.code, reasonOf(answer)]).toEqual([-32004, 'ALREADY_ANSWERED']);
        expect(ended).toMatchObject({ state: 'expired', answeredBy: 'system', channel: 'timeout' });
        expect(actions).toEqual(['approval.expire', 'approval.request']);
        await until(async () => (await stateOf(taskId)) === 'TASK_STATE_REJECTED', 'the task rejected');
      }
      // One answer reached the task, whichever it was.
      const task = await getTask(taskId);
      const responses = task.history.filter((m: Json) =>
        (m.parts ?? []).some((p: Json) => p.data?.type === 'cleveragents/approval-response'),
      );
      expect(responses).toHaveLength(1);
    }
  }, 120000);

  it('deadlines survive a restart: re-armed from the stored approvals, one passed while down applied at boot', async () => {
    const early = await gate('timed-deny');
    const earlyDue = Date.parse((await approvalOf(early.request.approvalId)).expiresAt);
    clock.advance(10 * MINUTE);
    const late = await gate('timed-deny');
    const lateDue = Date.parse((await approvalOf(late.request.approvalId)).expiresAt);
    await armedAt(lateDue);

    await server.close();
    expect(clock.dueTimes()).not.toContain(earlyDue);
    expect(clock.dueTimes()).not.toContain(lateDue);
    // Down past the first deadline, not the second.
    clock.advance(6 * MINUTE);
    await startTimed();
    // The first is due at once (its deadline passed while down), the second at its own deadline.
    await armedAt(clock.now());
    await armedAt(lateDue);
    expect(await stateOf(early.taskId)).toBe('TASK_STATE_INPUT_REQUIRED');
    clock.advance(0);
    await until(async () => (await stateOf(early.taskId)) === 'TASK_STATE_REJECTED', 'the first task rejected');
    expect(await approvalOf(early.request.approvalId)).toMatchObject({ state: 'expired', channel: 'timeout' });
    expect((await approvalOf(late.request.approvalId)).state).toBe('pending');

    clock.advance(lateDue - clock.now());
    await until(async () => (await stateOf(late.taskId)) === 'TASK_STATE_REJECTED', 'the second task rejected');
    expect(await approvalOf(late.request.approvalId)).toMatchObject({
      state: 'expired',
      reason: "No answer within 15 minutes: the profile's approval timeout denied it",
    });
    expect((await auditOf(early.request.approvalId)).map((r) => r.action)).toEqual([
      'approval.expire',
      'approval.request',
    ]);
  }, 120000);
});

/*
 * Two replicas on one PostgreSQL, on one clock the test moves: the replica that asked arms the deadline, the
 * one started after it arms it from the stored approvals. Both timers fire at once; the gate is denied once.
 */
describeNeeding(runningPostgres(), 'an approval timeout two replicas watch (PostgreSQL)', () => {
  const clock = new ManualClock();
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let a: TestServer;
  let b: TestServer;
  const onA = extensionCalls(() => a);
  const onB = extensionCalls(() => b);

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start(orchestratorModel);
    db = await createTestDatabase();
    a = await startServer(db, envOf(model), { clock });
    await onA.ok('registry/create', PROFILES[2]);
  }, 60000);

  afterAll(async () => {
    await ifAssigned(a)?.close();
    await ifAssigned(b)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
  });

  it('both replicas arm the deadline; the gate is denied once, audited once, answered once', async () => {
    const { sessionId } = await onA.ok('session/create', { profile: 'timed-plan' });
    const sent = await rawCall(
      a.endpoint,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: wireMessage('go', { contextId: sessionId }) },
      },
      { 'A2A-Version': '1.0' },
    );
    const task = sent.json.result.task;
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const { approvalId } = task.status.message.parts.find(
      (p: Json) => p.data?.type === 'cleveragents/approval-request',
    ).data;
    const due = Date.parse((await onA.ok('approval/get', { approvalId })).expiresAt);
    // A armed it when it was asked; B, started after, arms it from the stored approvals.
    b = await startServer(db, envOf(model), { clock });
    await until(() => clock.dueTimes().filter((t) => t === due).length === 2, 'both replicas armed it', 10000);
    clock.advance(due - clock.now());
    const getTask = async () =>
      (
        await rawCall(
          b.endpoint,
          { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: task.id, historyLength: 50 } },
          { 'A2A-Version': '1.0' },
        )
      ).json.result;
    await until(async () => (await getTask()).status.state === 'TASK_STATE_REJECTED', 'the plan rejected', 20000);
    expect(await onB.ok('approval/get', { approvalId })).toMatchObject({ state: 'expired', channel: 'timeout' });
    const namespace = (await onA.ok('auth/whoami')).defaultNamespace;
    const actions = (await onA.ok('audit/list', { namespace, target: approvalId })).items.map((r: Json) => r.action);
    expect(actions).toEqual(['approval.expire', 'approval.request']);
    const responses = (await getTask()).history.filter((m: Json) =>
      (m.parts ?? []).some((p: Json) => p.data?.type === 'cleveragents/approval-response'),
    );
    expect(responses).toHaveLength(1);
  }, 60000);
});

/** A server whose orchestrator's model is `model`. */
function envOf(model: OpenAiCompatibleEndpoint): Record<string, string> {
  return {
    CLEVERAGENTS_ACTOR_BACKEND: 'local',
    CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
    CLEVERAGENTS_MODEL: 'timeouts',
  };
}
