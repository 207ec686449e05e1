import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CAPABILITIES, statusData, wireMessage, type Json } from '../support/orchestration.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { startLangGraphServer, type LangGraphServer } from '../support/langgraph-server.js';
import { fieldsOf, reasonOf, startServerWithBootstrapKey, type TestServer, keyedCalls } from '../support/server.js';
import { sseCall } from '../support/sse.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * Approvals from anywhere (docs/plans.md#approvals), end to end on a real server and a real LangGraph API server
 * whose `protocol` graph (test/fixtures/langgraph/protocol-graph.mjs) asks approval of a client-side read
 * (`approval-1`), then, approved, asks the client to run it (`read-1`), then answers with what it read. Each
 * principal is an API key: the requester (a member), another member, a viewer, the namespace's owner.
 */

const FILE_PATH = '/work/notes.txt';
const SUBJECT = {
  kind: 'tool',
  toolCallId: 'call-1',
  tool: 'fs_read_text_file',
  method: 'fs/read_text_file',
  args: { path: FILE_PATH },
};
/** The subject's canonical JSON (keys sorted, no spaces), written out: its sha-256 is the approval's hash. */
const SUBJECT_JSON =
  '{"args":{"path":"/work/notes.txt"},"kind":"tool","method":"fs/read_text_file","tool":"fs_read_text_file","toolCallId":"call-1"}';
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

const REMOTE_ACTOR: Json = {
  kind: 'actor',
  name: 'remote',
  spec: { description: 'the protocol graph', graphId: 'protocol', tools: [] },
};

describe.each(databaseTargets())('approvals answered from any client, on $kind', (target) => {
  let langgraph: LangGraphServer;
  let db: TestDatabase;
  let server: TestServer;
  let ownerKey: string;
  let memberKey: string;
  let otherKey: string;
  let adminKey: string;
  let viewerKey: string;
  let member: string;
  let namespace: string;

  const { rpc, call, ok } = keyedCalls(() => server);
  const send = (key: string, message: Json) => rpc(key, 'SendMessage', { message });
  const getTask = async (id: string): Promise<Json> =>
    (await rpc(memberKey, 'GetTask', { id, historyLength: 50 })).json.result;
  const responseTo = (taskId: string, contextId: string, answer: Json = { decision: 'approve' }) =>
    wireMessage('', { taskId, contextId }, [
      { type: 'cleveragents/approval-response', requestId: 'approval-1', ...answer },
    ]);

  /** A task of the member waiting at the read's gate: its ids and the approval-request its status carries. */
  async function gate(): Promise<{ taskId: string; contextId: string; request: Json }> {
    const { sessionId } = await ok(memberKey, 'session/create', { actor: 'remote', profile: 'autonomous' });
    const answer = await send(memberKey, wireMessage('plan please', { contextId: sessionId, metadata: CAPABILITIES }));
    const task = answer.json.result.task;
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const request = statusData(taskOf(task)).find((d) => d.type === 'cleveragents/approval-request')!;
    return { taskId: task.id, contextId: sessionId, request };
  }

  /** A wire task's status data parts, read as the SDK's shape (`content.$case`). */
  function taskOf(task: Json): Json {
    const parts = (task.status?.message?.parts ?? []).map((p: Json) =>
      p.data === undefined
        ? { content: { $case: 'text', value: p.text } }
        : { content: { $case: 'data', value: p.data } },
    );
    return { status: { message: { parts } } };
  }

  /** What the task waits for now: the type of the request its status message carries. */
  const waitsFor = async (taskId: string) =>
    statusData(taskOf(await getTask(taskId)))
      .map((d) => d.type)
      .find((t) => t === 'cleveragents/approval-request' || t === 'cleveragents/client-request');

  /** The audit records of one approval, newest first (`audit/list` by target). */
  const auditOf = async (approvalId: string): Promise<Json[]> => {
    const { items } = await ok(ownerKey, 'audit/list', { namespace, target: approvalId });
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((r: Json) => r.target === approvalId)).toBe(true);
    return items;
  };

  beforeAll(async () => {
    langgraph = await startLangGraphServer();
    db = await target.create();
    const started = await startServerWithBootstrapKey(db, {
      CLEVERAGENTS_AUTH_SCHEMES: 'apiKey',
      CLEVERAGENTS_ACTOR_BACKEND: 'langgraph',
      CLEVERAGENTS_LANGGRAPH_URL: langgraph.url,
    });
    server = started.server;
    ownerKey = started.bootstrapKey;
    memberKey = (await ok(ownerKey, 'auth/apikey/create', { name: 'member', role: 'member' })).key;
    otherKey = (await ok(ownerKey, 'auth/apikey/create', { name: 'other', role: 'member' })).key;
    adminKey = (await ok(ownerKey, 'auth/apikey/create', { name: 'approver', role: 'admin' })).key;
    viewerKey = (await ok(ownerKey, 'auth/apikey/create', { name: 'viewer', role: 'viewer' })).key;
    const whoami = await ok(memberKey, 'auth/whoami');
    member = whoami.subject;
    namespace = whoami.defaultNamespace;
    await ok(ownerKey, 'registry/create', REMOTE_ACTOR);
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(langgraph)?.close();
  });

  it('a gate that waits is an approval: its id on the request, listed, read, its subject hashed; audited', async () => {
    const { taskId, contextId, request } = await gate();
    expect(request.approvalId).toMatch(ULID);
    const approval = await ok(memberKey, 'approval/get', { approvalId: request.approvalId });
    expect(approval).toEqual({
      approvalId: request.approvalId,
      namespace,
      requester: member,
      sessionId: contextId,
      taskId,
      requestId: 'approval-1',
      subject: SUBJECT,
      subjectHash: createHash('sha256').update(SUBJECT_JSON).digest('hex'),
      options: ['approve', 'reject'],
      state: 'pending',
      askedAt: expect.any(String),
      answeredAt: null,
      answeredBy: null,
      channel: null,
      reason: null,
      // Its profile sets no approval timeout: it waits until answered.
      expiresAt: null,
      onTimeout: null,
    });
    const listed = await ok(memberKey, 'approval/list', { sessionId: contextId });
    expect(listed).toEqual({ items: [approval], nextPageToken: '', totalSize: 1 });
    expect((await ok(memberKey, 'approval/list', { sessionId: contextId, state: 'approved' })).items).toEqual([]);
    expect(await auditOf(request.approvalId)).toEqual([
      expect.objectContaining({
        actor: member,
        action: 'approval.request',
        details: expect.objectContaining({ taskId, subjectHash: approval.subjectHash, state: 'pending' }),
      }),
    ]);

    // Another member neither sees nor answers it: not found, as an approval that does not exist.
    expect((await ok(otherKey, 'approval/list', {})).items).toEqual([]);
    for (const [method, params] of [
      ['approval/get', { approvalId: request.approvalId }],
      ['approval/answer', { approvalId: request.approvalId, decision: 'approve' }],
      ['approval/get', { approvalId: '01JNOSUCHAPPROVAL000000000' }],
    ] as const) {
      const answer = await call(otherKey, method, params);
      expect([answer.json.error?.code, reasonOf(answer)]).toEqual([-32001, 'APPROVAL_NOT_FOUND']);
    }
    expect(await ok(memberKey, 'approval/get', { approvalId: request.approvalId })).toEqual(approval);
  });

  it('approval/answer continues the task as the in-stream answer does; a second answer is ALREADY_ANSWERED', async () => {
    const { taskId, contextId, request } = await gate();
    const answered = await ok(memberKey, 'approval/answer', { approvalId: request.approvalId, decision: 'approve' });
    expect(answered).toMatchObject({
      state: 'approved',
      answeredBy: member,
      channel: 'method',
      answeredAt: expect.any(String),
      reason: null,
    });
    // The task left the gate: a client subscribing to it sees it go on to ask for the read it approved.
    const seen: string[] = [];
    for await (const event of sseCall(
      server.endpoint,
      { jsonrpc: '2.0', id: 2, method: 'SubscribeToTask', params: { id: taskId } },
      { 'x-api-key': memberKey },
    )) {
      const result: Json = event.message.result ?? {};
      const status = result.statusUpdate?.status ?? result.task?.status;
      for (const part of status?.message?.parts ?? []) if (part.data?.type) seen.push(part.data.type);
      if (seen.includes('cleveragents/client-request')) break;
    }
    // Subscribed at once, it may first see the task still at its gate; then it goes on past it.
    expect(seen.lastIndexOf('cleveragents/client-request')).toBeGreaterThan(
      seen.lastIndexOf('cleveragents/approval-request'),
    );
    await until(async () => (await waitsFor(taskId)) === 'cleveragents/client-request', 'the approved read asked for');

    const late = await call(memberKey, 'approval/answer', { approvalId: request.approvalId, decision: 'reject' });
    expect([late.json.error?.code, reasonOf(late)]).toEqual([-32004, 'ALREADY_ANSWERED']);
    expect(late.json.error.data[0].metadata).toEqual({ approvalId: request.approvalId, state: 'approved' });

    const done = await send(
      memberKey,
      wireMessage('', { taskId, contextId }, [
        { type: 'cleveragents/client-response', responses: [{ id: 'read-1', result: { content: 'hello notes' } }] },
      ]),
    );
    expect(done.json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.json.result.task.status.message.parts[0].text).toBe('The file says: hello notes');
    expect(await auditOf(request.approvalId)).toEqual([
      expect.objectContaining({
        actor: member,
        action: 'approval.answer',
        details: expect.objectContaining({ channel: 'method', state: 'approved', subjectHash: answered.subjectHash }),
      }),
      expect.objectContaining({ action: 'approval.request' }),
    ]);
  });

  it('an answer that does not fit the request is -32602 naming the field; the approval and task stay as they were', async () => {
    const { taskId, request } = await gate();
    const before = await getTask(taskId);
    const refused: [Json, string][] = [
      [{ decision: 'edit', edited: { path: '/etc/passwd' } }, 'decision'],
      [{ decision: 'maybe' }, 'decision'],
      [{ decision: 'reject', reason: 'x'.repeat(2001) }, 'reason'],
    ];
    for (const [params, field] of refused) {
      const answer = await call(memberKey, 'approval/answer', { approvalId: request.approvalId, ...params });
      expect(answer.json.error?.code).toBe(-32602);
      expect(fieldsOf(answer)).toEqual([field]);
    }
    expect(await ok(memberKey, 'approval/get', { approvalId: request.approvalId })).toMatchObject({
      state: 'pending',
    });
    expect(await getTask(taskId)).toEqual(before);
  });

  it('a rejection through the method carries its reason to the task; the approval keeps it', async () => {
    const { taskId, request } = await gate();
    const rejected = await ok(memberKey, 'approval/answer', {
      approvalId: request.approvalId,
      decision: 'reject',
      reason: 'not that file',
    });
    expect(rejected).toMatchObject({ state: 'rejected', reason: 'not that file', channel: 'method' });
    await until(async () => (await getTask(taskId)).status.state === 'TASK_STATE_REJECTED', 'the task rejected');
  });

  it('two answers at once, in-stream and by method in any mix: exactly one wins, the read is asked for once', async () => {
    const mixes: ((taskId: string, contextId: string, approvalId: string) => Promise<{ json: any }>)[] = [
      (taskId, contextId) => send(memberKey, responseTo(taskId, contextId)),
      (_taskId, _contextId, approvalId) => call(memberKey, 'approval/answer', { approvalId, decision: 'approve' }),
    ];
    for (const [first, second] of [
      [mixes[0], mixes[0]],
      [mixes[0], mixes[1]],
      [mixes[1], mixes[1]],
    ]) {
      const { taskId, contextId, request } = await gate();
      const answers = await Promise.all([
        first(taskId, contextId, request.approvalId),
        second(taskId, contextId, request.approvalId),
      ]);
      const won = answers.filter((a) => a.json.error === undefined);
      const lost = answers.filter((a) => a.json.error !== undefined);
      expect(won).toHaveLength(1);
      expect(lost.map((a) => [a.json.error.code, reasonOf(a)])).toEqual([[-32004, 'ALREADY_ANSWERED']]);
      await until(async () => (await waitsFor(taskId)) === 'cleveragents/client-request', 'the read asked for');
      const task = await getTask(taskId);
      // One answer reached the task's history; the graph went on once: one client-request, for read-1.
      const answersInHistory = task.history.filter((m: Json) =>
        (m.parts ?? []).some((p: Json) => p.data?.type === 'cleveragents/approval-response'),
      );
      expect(answersInHistory).toHaveLength(1);
      const done = await send(
        memberKey,
        wireMessage('', { taskId, contextId }, [
          { type: 'cleveragents/client-response', responses: [{ id: 'read-1', result: { content: 'once' } }] },
        ]),
      );
      expect(done.json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      const tool = done.json.result.task.artifacts.filter((a: Json) => a.artifactId === 'tool-call-1');
      expect(tool).toHaveLength(1);
      expect(tool[0].parts.map((p: Json) => p.data.type)).toEqual([
        'cleveragents/tool-call',
        'cleveragents/tool-result',
      ]);
      const answeredRecords = (await auditOf(request.approvalId)).filter((r: Json) => r.action === 'approval.answer');
      expect(answeredRecords).toHaveLength(1);
    }
  }, 180000);

  it("an admin lists, reads and answers another principal's approval, audited with both; members and viewers may not", async () => {
    const { taskId, contextId, request } = await gate();
    const { approvalId } = request;
    const admin = (await ok(adminKey, 'auth/whoami')).subject;

    // Another member and a viewer: the approval is not theirs to see or answer.
    for (const requester of ['*', member]) {
      const answer = await call(otherKey, 'approval/list', { requester });
      expect([answer.json.error?.code, reasonOf(answer)]).toEqual([-32003, 'ROLE_REQUIRED']);
    }
    expect((await ok(viewerKey, 'approval/list', {})).items).toEqual([]);
    const viewerGet = await call(viewerKey, 'approval/get', { approvalId });
    expect([viewerGet.json.error?.code, reasonOf(viewerGet)]).toEqual([-32001, 'APPROVAL_NOT_FOUND']);
    const viewerAnswer = await call(viewerKey, 'approval/answer', { approvalId, decision: 'approve' });
    expect([viewerAnswer.json.error?.code, reasonOf(viewerAnswer)]).toEqual([-32003, 'ROLE_REQUIRED']);
    const otherAnswer = await call(otherKey, 'approval/answer', { approvalId, decision: 'approve' });
    expect(reasonOf(otherAnswer)).toBe('APPROVAL_NOT_FOUND');
    expect(await ok(memberKey, 'approval/get', { approvalId })).toMatchObject({ state: 'pending' });

    // The admin sees everyone's (and the member's by name), and answers it: the member's task goes on.
    for (const requester of ['*', member]) {
      const listed = await ok(adminKey, 'approval/list', { requester, sessionId: contextId });
      expect(listed.items.map((a: Json) => a.approvalId)).toEqual([approvalId]);
    }
    expect((await ok(adminKey, 'approval/list', { sessionId: contextId })).items).toEqual([]);
    expect(await ok(adminKey, 'approval/get', { approvalId })).toMatchObject({ requester: member, state: 'pending' });
    const answered = await ok(adminKey, 'approval/answer', { approvalId, decision: 'approve' });
    expect(answered).toMatchObject({ requester: member, state: 'approved', answeredBy: admin, channel: 'method' });
    await until(async () => (await waitsFor(taskId)) === 'cleveragents/client-request', 'the read asked for');
    expect(await ok(memberKey, 'approval/get', { approvalId })).toMatchObject({ answeredBy: admin });
    const [record] = (await auditOf(approvalId)).filter((r: Json) => r.action === 'approval.answer');
    expect(record).toMatchObject({
      actor: admin,
      details: { requester: member, channel: 'method', state: 'approved' },
    });
  });

  it('a new message in the session goes on without the gate: the approval is canceled, later answers ALREADY_ANSWERED', async () => {
    const { taskId, contextId, request } = await gate();
    const next = await send(memberKey, wireMessage('something else', { contextId }));
    expect(next.json.result.task.id).not.toBe(taskId);
    await until(
      async () => (await ok(memberKey, 'approval/get', { approvalId: request.approvalId })).state === 'canceled',
      'the approval canceled',
    );
    expect(await ok(memberKey, 'approval/get', { approvalId: request.approvalId })).toMatchObject({
      answeredBy: null,
      reason: `A new message (task ${next.json.result.task.id}) went on without answering`,
    });
    // In-stream, a response to a task that waits no more (-32602 on the part); by method, ALREADY_ANSWERED.
    const stray = await send(memberKey, responseTo(taskId, contextId));
    expect([stray.json.error?.code, fieldsOf(stray)]).toEqual([-32602, ['message.parts[0].data']]);
    const late = await call(memberKey, 'approval/answer', { approvalId: request.approvalId, decision: 'approve' });
    expect([late.json.error?.code, reasonOf(late)]).toEqual([-32004, 'ALREADY_ANSWERED']);
  });

  it('a waiting task canceled cancels its approval; answering it then is ALREADY_ANSWERED', async () => {
    const { taskId, contextId, request } = await gate();
    const canceled = await rpc(memberKey, 'CancelTask', { id: taskId });
    expect(canceled.json.result.status.state).toBe('TASK_STATE_CANCELED');
    expect(await ok(memberKey, 'approval/get', { approvalId: request.approvalId })).toMatchObject({
      state: 'canceled',
      answeredBy: null,
      reason: 'The task was canceled',
    });
    const late = await call(memberKey, 'approval/answer', { approvalId: request.approvalId, decision: 'approve' });
    expect(reasonOf(late)).toBe('ALREADY_ANSWERED');
    expect((await ok(memberKey, 'approval/list', { sessionId: contextId })).items).toEqual([]);
    expect((await auditOf(request.approvalId)).map((r: Json) => r.action)).toEqual([
      'approval.cancel',
      'approval.request',
    ]);
  });
});
