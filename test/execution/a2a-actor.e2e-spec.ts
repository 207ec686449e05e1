import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageRequest, TaskState, type StreamResponse } from '@a2a-js/sdk';
import { Client, ClientFactory } from '@a2a-js/sdk/client';
import { DataSource } from 'typeorm';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { extensionCalls, fieldsOf, freePort, reasonOf, startServer, type TestServer } from '../support/server.js';
import {
  AGENT_QUESTION,
  FORGED_APPROVAL_REQUEST,
  FORGED_CLIENT_REQUEST,
  startHostileAgent,
  startRemoteAgent,
  type HostileAgent,
  type RemoteAgent,
} from '../support/a2a-remote-agent.js';
import { assembledAnswer, collect, partText, stateOf } from '../support/streams.js';
import { captureWarnings, correlationIdOf, withoutCorrelationId } from '../support/logged-warnings.js';
import { sendRequest } from '../factories/messages.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';

/*
 * Actors that are external A2A agents (docs/execution.md, "a2a"): a second A2A server, a bare @a2a-js/sdk
 * agent that streams, asks for input and wants an API key (test/support/a2a-remote-agent.ts), driven
 * through this server by the official SDK client. The credential is sealed, never shown; the agent's
 * URL passes the model endpoints' SSRF guard.
 */

const AGENT_KEY = 'agent-key-7f3c9d1e5b';
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe.each(databaseTargets())('actors that are external A2A agents, on $kind', (target) => {
  let agent: RemoteAgent;
  let cardHog: HostileAgent;
  let eventHog: HostileAgent;
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let client: Client;
  let closedPort: number;
  /** The text of every answer of this server the suite read: the credential must be in none. */
  const seen: string[] = [];
  const calls = extensionCalls(() => server);
  const call = async (method: string, params: Record<string, unknown>) => {
    const answer = await calls.call(method, { namespace: 'default', ...params });
    seen.push(JSON.stringify(answer.json));
    return answer;
  };
  const ok = async (method: string, params: Record<string, unknown>) => {
    const answer = await call(method, params);
    expect(answer.json.error).toBeUndefined();
    return answer.json.result;
  };
  const actor = (name: string, a2a: Record<string, unknown>) =>
    ok('registry/create', { kind: 'actor', name, spec: { description: `external ${name}`, a2a } });
  const sessionOf = async (actorName: string): Promise<string> =>
    (await ok('session/create', { actor: actorName, profile: 'autonomous' })).sessionId as string;
  const stream = async (contextId: string, text: string, taskId?: string): Promise<StreamResponse[]> => {
    const events = await collect(client.sendMessageStream(sendRequest('a2a', { text, contextId, taskId })));
    seen.push(JSON.stringify(events));
    return events;
  };
  const streamParts = async (contextId: string, taskId: string, parts: Record<string, unknown>[]) => {
    const request = SendMessageRequest.fromJSON({
      message: { messageId: `a2a-${randomUUID()}`, role: 'ROLE_USER', parts, contextId, taskId },
      configuration: { returnImmediately: false },
    });
    const events = await collect(client.sendMessageStream(request));
    seen.push(JSON.stringify(events));
    return events;
  };
  /** The approval an agent's request was recorded as, named by the interrupt of a status event. */
  const gateOf = (event: StreamResponse | undefined): Record<string, any> => {
    const parts = event?.payload?.$case === 'statusUpdate' ? (event.payload.value.status?.message?.parts ?? []) : [];
    const value = parts.find((p) => p.content?.$case === 'data')?.content?.value as Record<string, any> | undefined;
    if (value?.type !== 'cleveragents/interrupt' || typeof value.approvalId !== 'string') {
      throw new Error(`no recorded request in ${JSON.stringify(parts)}`);
    }
    return value;
  };
  const auditOf = async (approvalId: string): Promise<Record<string, any>[]> =>
    ((await ok('audit/list', { target: approvalId })) as { items: Record<string, any>[] }).items;
  const statusText = (event: StreamResponse | undefined): string =>
    event?.payload?.$case === 'statusUpdate'
      ? (event.payload.value.status?.message?.parts.map((p) => partText(p)).join('') ?? '')
      : '';

  beforeAll(async () => {
    agent = await startRemoteAgent(AGENT_KEY);
    cardHog = await startHostileAgent('card');
    eventHog = await startHostileAgent('event');
    // The orchestrator's model: calls the `remote` agent as a tool, then answers with what it said.
    model = await OpenAiCompatibleEndpoint.start((body) => {
      const messages = body.messages as { role: string; content?: unknown }[];
      const tool = messages.find((m) => m.role === 'tool');
      if (tool) return { tokens: ['Relayed: ', String(JSON.parse(String(tool.content)).answer)] };
      return { toolCalls: [{ id: 'call-1', name: 'remote', arguments: JSON.stringify({ message: 'sub hello' }) }] };
    });
    closedPort = await freePort();
    db = await target.create();
    server = await startServer(db, {
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'scripted',
      // Public hosts, and the two loopback ports of this suite: nothing else on loopback.
      CLEVERAGENTS_MODEL_ALLOWED_HOSTS: [agent.port, closedPort, cardHog.port, eventHog.port]
        .map((port) => `127.0.0.1:${port}`)
        .concat('*')
        .join(','),
      // The approval webhook receiver of this suite, on loopback.
      CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1',
    });
    client = await new ClientFactory().createFromUrl(server.baseUrl);
    await actor('remote', { url: agent.url, auth: { credential: AGENT_KEY } });
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(agent)?.close();
    await ifAssigned(cardHog)?.close();
    await ifAssigned(eventHog)?.close();
    await ifAssigned(model)?.close();
  });

  it('the registry shows that a credential is set, never the credential (create, get, list, sync/pull)', async () => {
    const got = await ok('registry/get', { kind: 'actor', name: 'remote' });
    expect(got.spec.a2a).toEqual({ url: agent.url, auth: { credentialSet: true } });
    const listed = await ok('registry/list', { kind: 'actor' });
    expect(listed.items.find((e: { name: string }) => e.name === 'remote').spec.a2a.auth).toEqual({
      credentialSet: true,
    });
    const pulled = await ok('sync/pull', { cursor: 0 });
    const change = pulled.changes.find((c: { name: string }) => c.name === 'remote');
    expect(change.entity.spec.a2a.auth).toEqual({ credentialSet: true });
    expect(JSON.stringify([got, listed, pulled])).not.toContain(AGENT_KEY);
  });

  it('SendStreamingMessage: the agent’s updates stream through, its ids stay its own', async () => {
    const contextId = await sessionOf('remote');
    const events = await stream(contextId, 'hello there');
    expect(events[0].payload?.$case).toBe('task');
    const taskId = events[0].payload?.$case === 'task' ? events[0].payload.value.id : '';
    expect(events.map((e) => stateOf(e)).filter((s) => s !== undefined)).toEqual(
      expect.arrayContaining([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]),
    );
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    const updates = events.flatMap((e) => (e.payload?.$case === 'artifactUpdate' ? [e.payload.value] : []));
    const answer = updates.filter((u) => u.artifact?.name === 'answer');
    expect(answer.map((u) => [u.artifact?.parts.map((p) => partText(p)).join(''), u.append, u.lastChunk])).toEqual([
      ['agent: ', false, false],
      ['hello there', true, false],
      ['agent: hello there', false, true],
    ]);
    expect(assembledAnswer(events)).toBe('agent: hello there');
    // The agent's data artifact, passed on under an id of ours.
    const report = updates.find((u) => u.artifact?.name === 'report');
    expect(report?.artifact?.artifactId).toBe('agent-report');
    expect(report?.artifact?.parts[0].content).toEqual({ $case: 'data', value: { words: 2 } });
    // Every event carries our task and session; the agent's ids appear nowhere.
    for (const event of events) {
      const value = event.payload?.value as { taskId?: string; contextId?: string; id?: string };
      expect([value.taskId ?? value.id, value.contextId]).toEqual([taskId, contextId]);
    }
    const sent = agent.received.at(-1)!;
    expect(sent.contextId).not.toBe(contextId);
    expect(agent.keys.at(-1)).toBe(AGENT_KEY);
    const remoteTaskIds = agent.received.map((m) => m.taskId).filter(Boolean);
    for (const id of [sent.contextId, ...remoteTaskIds]) expect(JSON.stringify(events)).not.toContain(id);
  });

  it('SendMessage: the whole answer, and the session keeps one remote context across its tasks', async () => {
    const contextId = await sessionOf('remote');
    const first = await client.sendMessage(sendRequest('a2a', { text: 'one', contextId }));
    const second = await client.sendMessage(sendRequest('a2a', { text: 'two', contextId }));
    for (const [result, text] of [
      [first, 'agent: one'],
      [second, 'agent: two'],
    ] as const) {
      if (!('artifacts' in result)) throw new Error('SendMessage answered a message, not a task');
      expect(result.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const answer = result.artifacts.find((a) => a.name === 'answer');
      expect(answer?.parts.map((p) => partText(p)).join('')).toBe(text);
    }
    seen.push(JSON.stringify([first, second]));
    const [a, b] = agent.received.slice(-2);
    expect(a.contextId).toBe(b.contextId);
    expect(a.contextId).not.toBe(contextId);
  });

  it('input-required is relayed to the caller, and the answer back to the same remote task', async () => {
    const contextId = await sessionOf('remote');
    const asked = await stream(contextId, 'ask me');
    const last = asked.at(-1);
    expect(stateOf(last)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(statusText(last)).toBe(AGENT_QUESTION);
    const parts = last?.payload?.$case === 'statusUpdate' ? last.payload.value.status?.message?.parts : [];
    expect(parts?.find((p) => p.content?.$case === 'data')?.content?.value).toEqual({
      type: 'cleveragents/interrupt',
      value: { choices: ['red', 'blue'] },
      approvalId: expect.stringMatching(ULID),
      requestId: expect.stringMatching(/^agent-[0-9a-f]{24}$/),
    });
    const taskId = asked[0].payload?.$case === 'task' ? asked[0].payload.value.id : '';
    const question = agent.received.at(-1)!;

    const answered = await stream(contextId, 'blue', taskId);
    expect(stateOf(answered.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(assembledAnswer(answered)).toBe('You chose blue.');
    const reply = agent.received.at(-1)!;
    expect(reply.taskId).not.toBe('');
    expect(reply.taskId).not.toBe(taskId);
    expect(reply.contextId).toBe(question.contextId);
    // The answer went on the remote task the question came from.
    const task = await client.getTask({ tenant: '', id: taskId, historyLength: 0 });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('a client request or gate the agent sends reaches the caller only as an interrupt value', async () => {
    for (const [words, forged] of [
      ['forge a terminal call', FORGED_CLIENT_REQUEST],
      ['forge gate for a plan', FORGED_APPROVAL_REQUEST],
    ] as const) {
      const asked = await stream(await sessionOf('remote'), words);
      const last = asked.at(-1);
      expect(stateOf(last)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const parts = last?.payload?.$case === 'statusUpdate' ? (last.payload.value.status?.message?.parts ?? []) : [];
      // The client acts on a top-level client-request or approval-request only: wrapped, it is a question.
      // The server's record of the agent's request says whose it is: kind `agent`, never the forged subject.
      expect(parts.flatMap((p) => (p.content?.$case === 'data' ? [p.content.value] : []))).toEqual([
        {
          type: 'cleveragents/interrupt',
          value: forged,
          approvalId: expect.stringMatching(ULID),
          requestId: expect.stringMatching(/^agent-/),
        },
      ]);
      const { approvalId } = gateOf(last);
      const approval = await ok('approval/get', { approvalId });
      expect(approval.subject).toEqual({
        kind: 'agent',
        actor: 'remote',
        origin: new URL(agent.url).origin,
        remoteTaskId: agent.started.at(-1),
        text: AGENT_QUESTION,
        data: forged,
      });
      expect(approval.requestId).not.toBe(FORGED_APPROVAL_REQUEST.requestId);
      // Its artifact named as the server's tool calls are comes under a name of the agent's.
      const names = asked.flatMap((e) =>
        e.payload?.$case === 'artifactUpdate' ? [e.payload.value.artifact?.name] : [],
      );
      expect(names).toEqual(['agent-tool-call']);
    }
  });

  it("an agent's request for input is an approval of kind agent: listed, read, hashed, audited", async () => {
    const contextId = await sessionOf('remote');
    const asked = await stream(contextId, 'ask me');
    const taskId = asked[0].payload?.$case === 'task' ? asked[0].payload.value.id : '';
    const { approvalId, requestId } = gateOf(asked.at(-1));
    const remoteTaskId = agent.started.at(-1)!;
    // Keys in sorted order: the subject's canonical JSON, which its hash is of.
    const subject = {
      actor: 'remote',
      data: { choices: ['red', 'blue'] },
      kind: 'agent',
      origin: new URL(agent.url).origin,
      remoteTaskId,
      text: AGENT_QUESTION,
    };
    const approval = await ok('approval/get', { approvalId });
    expect(approval).toEqual({
      approvalId,
      namespace: 'default',
      requester: expect.any(String),
      sessionId: contextId,
      taskId,
      requestId,
      subject,
      subjectHash: createHash('sha256').update(JSON.stringify(subject)).digest('hex'),
      options: ['approve', 'reject', 'edit'],
      state: 'pending',
      askedAt: expect.any(String),
      answeredAt: null,
      answeredBy: null,
      channel: null,
      reason: null,
      expiresAt: null,
      onTimeout: null,
    });
    expect(await ok('approval/list', { sessionId: contextId })).toEqual({
      items: [approval],
      nextPageToken: '',
      totalSize: 1,
    });
    expect(await auditOf(approvalId)).toEqual([
      expect.objectContaining({
        action: 'approval.request',
        details: expect.objectContaining({ taskId, subjectKind: 'agent', subjectHash: approval.subjectHash }),
      }),
    ]);
  });

  it("an agent's request is posted to the namespace's approval webhooks as any new approval is", async () => {
    const bodies: Record<string, any>[] = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        bodies.push(JSON.parse(body) as Record<string, any>);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as AddressInfo;
    const hook = await ok('approval/webhook/create', { url: `http://127.0.0.1:${port}/hook` });
    try {
      const asked = await stream(await sessionOf('remote'), 'ask me');
      const { approvalId } = gateOf(asked.at(-1));
      await until(() => bodies.length > 0, 'the request posted to the webhook');
      expect(bodies).toHaveLength(1);
      expect(bodies[0]).toMatchObject({
        title: 'Input needed: the external agent remote',
        asked: `answer ${new URL(agent.url).origin}, which asks "${AGENT_QUESTION}"`,
        approval: { approvalId, kind: 'agent' },
      });
    } finally {
      await ok('approval/webhook/delete', { id: hook.id });
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('approval/answer sends the agent {decision, reason} on its task; a second answer is ALREADY_ANSWERED', async () => {
    const contextId = await sessionOf('remote');
    const asked = await stream(contextId, 'ask me');
    const taskId = asked[0].payload?.$case === 'task' ? asked[0].payload.value.id : '';
    const { approvalId } = gateOf(asked.at(-1));
    const remoteTaskId = agent.started.at(-1)!;
    const received = agent.received.length;

    const answered = await ok('approval/answer', { approvalId, decision: 'reject', reason: 'not today' });
    expect(answered).toMatchObject({ state: 'rejected', channel: 'method', reason: 'not today' });
    await until(() => agent.received.length > received, 'the answer reaching the agent');
    const reply = agent.received.at(-1)!;
    expect(reply.taskId).toBe(remoteTaskId);
    expect(reply.parts.map((p) => p.content)).toEqual([
      { $case: 'data', value: { decision: 'reject', reason: 'not today' } },
    ]);
    await until(
      async () =>
        (await client.getTask({ tenant: '', id: taskId, historyLength: 0 })).status?.state ===
        TaskState.TASK_STATE_COMPLETED,
      'the task going on to completion',
    );

    const late = await call('approval/answer', { approvalId, decision: 'approve' });
    expect([late.json.error?.code, reasonOf(late)]).toEqual([-32004, 'ALREADY_ANSWERED']);
    expect(agent.received.length).toBe(received + 1);
    expect(
      (await auditOf(approvalId)).map((r: Record<string, any>) => [
        r.action,
        r.details.channel,
        r.details.decision,
        r.details.reason,
      ]),
    ).toEqual([
      ['approval.answer', 'method', 'reject', 'not today'],
      ['approval.request', undefined, undefined, undefined],
    ]);

    // Approved, the agent is sent the decision alone.
    const again = await stream(await sessionOf('remote'), 'ask me');
    await ok('approval/answer', { approvalId: gateOf(again.at(-1)).approvalId, decision: 'approve' });
    await until(() => agent.received.length > received + 2, 'the approval reaching the agent');
    expect(agent.received.at(-1)!.parts.map((p) => p.content)).toEqual([
      { $case: 'data', value: { decision: 'approve' } },
    ]);
  });

  it("answered in the stream, the agent gets the person's parts as they are; the approval records them", async () => {
    const contextId = await sessionOf('remote');
    const asked = await stream(contextId, 'ask me');
    const taskId = asked[0].payload?.$case === 'task' ? asked[0].payload.value.id : '';
    const { approvalId } = gateOf(asked.at(-1));
    const remoteTaskId = agent.started.at(-1)!;
    const parts = [{ text: 'blue' }, { data: { shade: 'navy', depth: [1, 2] } }];
    const answered = await streamParts(contextId, taskId, parts);
    expect(stateOf(answered.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    const reply = agent.received.at(-1)!;
    expect(reply.taskId).toBe(remoteTaskId);
    expect(reply.parts.map((p) => p.content)).toEqual([
      { $case: 'text', value: 'blue' },
      { $case: 'data', value: { shade: 'navy', depth: [1, 2] } },
    ]);
    const approval = await ok('approval/get', { approvalId });
    expect(approval).toMatchObject({ state: 'edited', channel: 'stream', answeredAt: expect.any(String) });
    const late = await call('approval/answer', { approvalId, decision: 'approve' });
    expect([late.json.error?.code, reasonOf(late)]).toEqual([-32004, 'ALREADY_ANSWERED']);
    expect(
      (await auditOf(approvalId)).map((r: Record<string, any>) => [r.action, r.details.channel, r.details.decision]),
    ).toEqual([
      ['approval.answer', 'stream', 'edit'],
      ['approval.request', undefined, undefined],
    ]);

    // An approval-response in the stream reaches the agent as the decision; a bad one is -32602 naming the field.
    const next = await stream(await sessionOf('remote'), 'ask me');
    const nextTask = next[0].payload?.$case === 'task' ? next[0].payload.value.id : '';
    const gate = gateOf(next.at(-1));
    const before = agent.received.length;
    const bad = await calls.call('approval/answer', {
      namespace: 'default',
      approvalId: gate.approvalId,
      decision: 'edit',
      edited: [{ text: 'ok' }, { file: 'x' }],
    });
    expect([bad.json.error?.code, fieldsOf(bad)]).toEqual([-32602, ['edited[1]']]);
    expect((await ok('approval/get', { approvalId: gate.approvalId })).state).toBe('pending');
    const decided = await streamParts(
      next[0].payload?.$case === 'task' ? next[0].payload.value.contextId : '',
      nextTask,
      [
        {
          data: {
            type: 'cleveragents/approval-response',
            requestId: gate.requestId,
            decision: 'edit',
            edited: [{ text: 'green' }],
          },
        },
      ],
    );
    expect(stateOf(decided.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(agent.received.length).toBe(before + 1);
    expect(agent.received.at(-1)!.parts.map((p) => p.content)).toEqual([{ $case: 'text', value: 'green' }]);
    expect(assembledAnswer(decided)).toBe('You chose green.');
  });

  it('two answers at once, by the method and in the stream: one reaches the agent, the other is ALREADY_ANSWERED', async () => {
    for (let round = 0; round < 3; round++) {
      const contextId = await sessionOf('remote');
      const asked = await stream(contextId, 'ask me');
      const taskId = asked[0].payload?.$case === 'task' ? asked[0].payload.value.id : '';
      const { approvalId } = gateOf(asked.at(-1));
      const received = agent.received.length;
      const [byMethod, inStream] = await Promise.allSettled([
        call('approval/answer', { approvalId, decision: 'approve' }),
        streamParts(contextId, taskId, [{ text: 'red' }]),
      ]);
      const methodWon = byMethod.status === 'fulfilled' && byMethod.value.json.error === undefined;
      const streamWon = inStream.status === 'fulfilled';
      expect([methodWon, streamWon].filter(Boolean)).toHaveLength(1);
      if (methodWon) {
        expect(String((inStream as PromiseRejectedResult).reason)).toMatch(
          /^UnsupportedOperationError: Approval \w+ is already approved/,
        );
      } else {
        const lost = byMethod.status === 'fulfilled' ? byMethod.value : undefined;
        expect(lost && [lost.json.error?.code, reasonOf(lost)]).toEqual([-32004, 'ALREADY_ANSWERED']);
      }
      await until(
        async () =>
          (await client.getTask({ tenant: '', id: taskId, historyLength: 0 })).status?.state ===
          TaskState.TASK_STATE_COMPLETED,
        'the task going on once',
      );
      expect(agent.received.length).toBe(received + 1);
      const approval = await ok('approval/get', { approvalId });
      expect(approval.channel).toBe(methodWon ? 'method' : 'stream');
      const answers = (await auditOf(approvalId)).filter((r: Record<string, any>) => r.action === 'approval.answer');
      expect(answers).toHaveLength(1);
    }
  });

  it("a profile's approval timeout denies the agent's request: the agent is sent the rejection", async () => {
    await ok('registry/create', {
      kind: 'profile',
      name: 'agent-deadline',
      spec: { gate: 'autonomous', approvalTimeout: { seconds: 1 } },
    });
    const { sessionId } = await ok('session/create', { actor: 'remote', profile: 'agent-deadline' });
    const asked = await stream(sessionId, 'ask me');
    const gate = gateOf(asked.at(-1));
    expect(gate).toMatchObject({ expiresAt: expect.any(String), onTimeout: 'deny' });
    const remoteTaskId = agent.started.at(-1)!;
    const received = agent.received.length;
    await until(() => agent.received.length > received, 'the denial reaching the agent', 15000);
    expect(agent.received.at(-1)!.taskId).toBe(remoteTaskId);
    expect(agent.received.at(-1)!.parts.map((p) => p.content)).toEqual([
      {
        $case: 'data',
        value: { decision: 'reject', reason: "No answer within 1 second: the profile's approval timeout denied it" },
      },
    ]);
    const approval = await ok('approval/get', { approvalId: gate.approvalId });
    expect(approval).toMatchObject({ state: 'expired', channel: 'timeout', answeredBy: 'system' });
    expect(
      (await auditOf(gate.approvalId)).map((r: Record<string, any>) => [r.action, r.actor, r.details.channel]),
    ).toEqual([
      ['approval.expire', 'system', 'timeout'],
      ['approval.request', expect.any(String), undefined],
    ]);
  });

  it("a waiting agent's request canceled with its task cancels its approval; answering it then is ALREADY_ANSWERED", async () => {
    const contextId = await sessionOf('remote');
    const asked = await stream(contextId, 'ask me');
    const taskId = asked[0].payload?.$case === 'task' ? asked[0].payload.value.id : '';
    const { approvalId } = gateOf(asked.at(-1));
    const remoteTaskId = agent.started.at(-1)!;
    const received = agent.received.length;
    const canceled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // The agent's task it waited on is canceled with it.
    await until(() => agent.canceled.includes(remoteTaskId), 'the cancel reaching the agent');
    expect(await ok('approval/get', { approvalId })).toMatchObject({
      state: 'canceled',
      reason: 'The task was canceled',
    });
    const late = await call('approval/answer', { approvalId, decision: 'approve' });
    expect([late.json.error?.code, reasonOf(late)]).toEqual([-32004, 'ALREADY_ANSWERED']);
    expect(agent.received.length).toBe(received);
    expect((await auditOf(approvalId)).map((r: Record<string, any>) => [r.action, r.details.state])).toEqual([
      ['approval.cancel', 'canceled'],
      ['approval.request', 'pending'],
    ]);
  });

  it('CancelTask cancels the remote task', async () => {
    const contextId = await sessionOf('remote');
    const events: StreamResponse[] = [];
    const reading = (async () => {
      for await (const event of client.sendMessageStream(sendRequest('a2a', { text: 'slow down', contextId }))) {
        events.push(event);
      }
    })();
    await until(() => events.some((e) => e.payload?.$case === 'artifactUpdate'), 'the first streamed token');
    const taskId = events[0].payload?.$case === 'task' ? events[0].payload.value.id : '';
    const canceled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await reading;
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_CANCELED);
    await until(() => agent.canceled.length > 0, 'the cancel reaching the remote agent');
    const remoteTaskId = agent.canceled.at(-1)!;
    expect(remoteTaskId).not.toBe(taskId);
  });

  it('an unreachable agent fails the task with a stable reason; the detail is in the log under its id', async () => {
    await actor('down', { url: `http://127.0.0.1:${closedPort}`, auth: { credential: AGENT_KEY } });
    const contextId = await sessionOf('down');
    const warnings = captureWarnings();
    let events: StreamResponse[];
    try {
      events = await stream(contextId, 'hello');
    } finally {
      warnings.stop();
    }
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_FAILED);
    const reason = statusText(events.at(-1));
    expect(reason).toMatch(/^A2A_AGENT_UNAVAILABLE: the external A2A agent of actor "down" could not be reached/);
    const id = correlationIdOf(reason);
    expect(withoutCorrelationId(reason)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|\d{4,5}/);
    const logged = warnings.lines.find((line) => line.includes(id));
    expect(logged).toContain('ECONNREFUSED');
    expect(logged).not.toContain(AGENT_KEY);
  });

  it('an agent that sends more than the server reads fails the turn naming the limit; the server hangs up', async () => {
    for (const [name, hog, what] of [
      ['endless-card', cardHog, 'response'],
      ['endless-event', eventHog, 'stream event'],
    ] as const) {
      await actor(name, { url: hog.url });
      const events = await stream(await sessionOf(name), 'hello');
      expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_FAILED);
      expect(statusText(events.at(-1))).toBe(
        `A2A_AGENT_UNAVAILABLE: the external A2A agent of actor "${name}" sent a ${what} larger than 4194304 ` +
          'bytes, the most the server reads (CLEVERAGENTS_A2A_MAX_RESPONSE_BYTES)',
      );
      await until(() => hog.hungUp, `the server hanging up on ${name}`);
      // What it wrote past the limit sat in socket buffers, never in the server's memory.
      expect(hog.sent).toBeLessThan(4194304 * 4);
    }
  });

  it('a wrong credential, or none, fails the task naming the credential; the agent saw no other key', async () => {
    await actor('wrong-key', { url: agent.url, auth: { credential: 'not-the-key' } });
    const wrong = await stream(await sessionOf('wrong-key'), 'hello');
    expect(stateOf(wrong.at(-1))).toBe(TaskState.TASK_STATE_FAILED);
    expect(statusText(wrong.at(-1))).toBe(
      'A2A_AGENT_UNAUTHORIZED: the external A2A agent of actor "wrong-key" refused the stored credential ' +
        '(HTTP 401): check spec.a2a.auth',
    );
    expect(agent.keys.at(-1)).toBe('not-the-key');

    await actor('no-key', { url: agent.url });
    const calledBefore = agent.keys.length;
    const none = await stream(await sessionOf('no-key'), 'hello');
    expect(stateOf(none.at(-1))).toBe(TaskState.TASK_STATE_FAILED);
    expect(statusText(none.at(-1))).toBe(
      'A2A_AGENT_UNAUTHORIZED: the external A2A agent of actor "no-key" requires a credential ' +
        '(security scheme "agentKey") and none is stored: set spec.a2a.auth.credential',
    );
    expect(agent.keys.length).toBe(calledBefore);
  });

  it('an update without the credential keeps it; a new url needs it again', async () => {
    await ok('registry/update', {
      kind: 'actor',
      name: 'remote',
      spec: { description: 'renamed', a2a: { url: agent.url, auth: { credentialSet: true } } },
    });
    const events = await stream(await sessionOf('remote'), 'still me');
    expect(assembledAnswer(events)).toBe('agent: still me');
    const moved = await call('registry/update', {
      kind: 'actor',
      name: 'remote',
      spec: { a2a: { url: `http://127.0.0.1:${closedPort}`, auth: {} } },
    });
    expect(moved.json.error.code).toBe(-32602);
    expect(fieldsOf(moved)).toEqual(['spec.a2a.auth.credential']);
  });

  it('an SSRF attempt through spec.a2a.url is refused naming the field; nothing is stored', async () => {
    for (const url of ['http://169.254.169.254/latest', 'http://localhost:1/', 'http://10.0.0.8/']) {
      const refused = await call('registry/create', { kind: 'actor', name: 'probe', spec: { a2a: { url } } });
      expect({ url, code: refused.json.error?.code, reason: reasonOf(refused) }).toEqual({
        url,
        code: -32602,
        reason: 'A2A_AGENT_NOT_ALLOWED',
      });
      expect(fieldsOf(refused)).toEqual(['spec.a2a.url']);
    }
    // A name is refused without the address it resolves to; the operator's log has it.
    const warnings = captureWarnings();
    let loopback: Awaited<ReturnType<typeof call>>;
    try {
      loopback = await call('registry/create', {
        kind: 'actor',
        name: 'probe',
        spec: { a2a: { url: 'http://localhost:1/' } },
      });
    } finally {
      warnings.stop();
    }
    expect(loopback.json.error.message).toContain('url host "localhost" does not resolve to an admitted address');
    expect(JSON.stringify(loopback.json.error)).not.toMatch(/127\.0\.0\.1|::1|loopback/);
    expect(warnings.lines.find((line) => line.includes('"localhost"'))).toMatch(/resolves to (127\.0\.0\.1|::1)/);
    const missing = await call('registry/get', { kind: 'actor', name: 'probe' });
    expect(reasonOf(missing)).toBe('REGISTRY_ENTRY_NOT_FOUND');
    const both = await call('registry/create', {
      kind: 'actor',
      name: 'probe',
      spec: { localGraph: 'orchestrator', a2a: { url: agent.url } },
    });
    expect(fieldsOf(both)).toEqual(['spec.a2a']);
  });

  it('the credential is sealed at rest; a pulled spec pushed back as it is keeps it', async () => {
    const dataSource = server.app.get(DataSource);
    const [entry] = await dataSource.query<{ spec: string }[]>(
      `SELECT spec::text AS spec FROM registry_entries WHERE namespace = 'default' AND kind = 'actor' AND name = 'remote'`,
    );
    expect(entry.spec).toMatch(/"sealedCredential": ?"v1:[0-9a-f]{8}:/);
    const stored = await dataSource.query<{ text: string }[]>(
      `SELECT spec::text AS text FROM registry_entries
       UNION ALL SELECT coalesce(entity::text, '') FROM registry_changes
       UNION ALL SELECT actor::text || remembered::text FROM task_runs`,
    );
    expect(stored.length).toBeGreaterThan(10);
    expect(stored.filter((row) => row.text.includes(AGENT_KEY))).toEqual([]);

    const pulled = await ok('sync/pull', { cursor: 0 });
    const entity = pulled.changes.filter((c: { name: string }) => c.name === 'remote').at(-1).entity;
    const pushed = await ok('sync/push', {
      changes: [{ kind: 'actor', name: 'remote', op: 'upsert', baseRevision: entity.revision, spec: entity.spec }],
    });
    expect(pushed.conflicts).toEqual([]);
    const events = await stream(await sessionOf('remote'), 'pushed back');
    expect(assembledAnswer(events)).toBe('agent: pushed back');
  });

  it('the orchestrator calls an agent its tools name as a sub-agent: a tool call, counted, gated by the profile', async () => {
    await ok('registry/create', {
      kind: 'actor',
      name: 'lead',
      spec: { localGraph: 'orchestrator', tools: ['remote', 'not-an-actor'] },
    });
    const contextId = (await ok('session/create', { actor: 'lead', profile: 'autonomous' })).sessionId as string;
    const before = agent.received.length;
    const events = await stream(contextId, 'ask the remote agent');
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(assembledAnswer(events)).toBe('Relayed: agent: sub hello');
    // The model was offered the agent as a function, with its description.
    const offered = (model.completions[0].body.tools as { function: { name: string; description: string } }[]).map(
      (t) => t.function,
    );
    expect(offered).toContainEqual(expect.objectContaining({ name: 'remote', description: 'renamed' }));
    expect(offered.map((f) => f.name)).not.toContain('not-an-actor');
    // The call is a tool-call artifact: the call, then the agent's answer and artifacts.
    const tool = events.flatMap((e) =>
      e.payload?.$case === 'artifactUpdate' && e.payload.value.artifact?.name === 'tool-call'
        ? e.payload.value.artifact.parts.map((p) => p.content?.value)
        : [],
    );
    expect(tool).toEqual([
      { type: 'cleveragents/tool-call', id: 'call-1', name: 'remote', args: { message: 'sub hello' } },
      {
        type: 'cleveragents/tool-result',
        id: 'call-1',
        name: 'remote',
        result: {
          state: 'completed',
          answer: 'agent: sub hello',
          artifacts: [{ name: 'report', parts: [{ $case: 'data', value: { words: 2 } }] }],
        },
      },
    ]);
    expect(agent.received.length).toBe(before + 1);
    expect(agent.keys.at(-1)).toBe(AGENT_KEY);
    const session = await ok('session/get', { sessionId: contextId });
    expect(session.usage.toolCalls).toBe(1);

    // Under `manual` the call waits for approval, as any tool does: nothing reaches the agent before it.
    const gated = (await ok('session/create', { actor: 'lead', profile: 'manual' })).sessionId as string;
    const asked = await stream(gated, 'ask the remote agent');
    expect(stateOf(asked.at(-1))).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const parts = asked.at(-1)?.payload?.$case === 'statusUpdate' ? asked.at(-1)?.payload?.value : undefined;
    expect(JSON.stringify(parts)).toContain('cleveragents/approval-request');
    expect(agent.received.length).toBe(before + 1);
  });

  it('the credential appears in no answer the suite read', () => {
    expect(seen.length).toBeGreaterThan(10);
    expect(seen.filter((text) => text.includes(AGENT_KEY))).toEqual([]);
  });
});
