import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { Client, ClientFactory } from '@a2a-js/sdk/client';
import { Client as LangGraphClient } from '@langchain/langgraph-sdk';
import { langGraphThreadId } from '../../packages/server/src/execution/langgraph/langgraph.mapping.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { startLangGraphServer, type LangGraphServer } from '../support/langgraph-server.js';
import { rawCall, startServer, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { sendRequest } from '../factories/messages.js';
import { assembledAnswer, collect, partText, stateOf } from '../support/streams.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * Sessions on the `langgraph` backend, end to end (docs/protocol.md §4, §5, §6.4): the official SDK client drives
 * the server, which runs each turn on a real LangGraph API server (test/support/langgraph-server.ts)
 * serving the deterministic graph of test/fixtures/langgraph/graph.mjs.
 */

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const SLOW_ANSWER = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ') + '.';

async function rpc(server: TestServer, method: string, params: Record<string, unknown>): Promise<any> {
  const { json } = await rawCall(server.endpoint, { jsonrpc: '2.0', id: 1, method, params });
  return json;
}

describe.each(databaseTargets())('sessions on the langgraph backend, through the SDK client, on $kind', (target) => {
  let langgraph: LangGraphServer;
  let remote: LangGraphClient;
  let db: TestDatabase;
  let server: TestServer;
  let client: Client;
  const env = (): Record<string, string> => ({
    CLEVERAGENTS_ACTOR_BACKEND: 'langgraph',
    CLEVERAGENTS_LANGGRAPH_URL: langgraph.url,
    // A restart mid-run must find the run still going: no waiting for it at shutdown.
    CLEVERAGENTS_SHUTDOWN_GRACE_MS: '100',
  });

  beforeAll(async () => {
    langgraph = await startLangGraphServer();
    remote = new LangGraphClient({ apiUrl: langgraph.url, apiKey: null });
    db = await target.create();
    server = await startServer(db, env());
    client = await new ClientFactory().createFromUrl(server.baseUrl);
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(langgraph)?.close();
  });

  it('a message without contextId starts a session and streams the answer token by token, in order', async () => {
    const events = await collect(client.sendMessageStream(sendRequest('m', { text: 'hello' })));
    const cases = events.map((e) => e.payload?.$case);
    expect(cases[0]).toBe('task');
    expect(stateOf(events[1])).toBe(TaskState.TASK_STATE_WORKING);
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    // Token by token: one artifact update per character streamed, then the whole answer once more.
    const updates = events.filter((e) => e.payload?.$case === 'artifactUpdate');
    expect(updates.length).toBeGreaterThan('Echo #1: hello'.length);
    expect(assembledAnswer(events)).toBe('Echo #1: hello');
    const last = updates.at(-1)!.payload!;
    expect(last.$case === 'artifactUpdate' && last.value.lastChunk).toBe(true);

    const task = (events[0].payload as { value: Task }).value;
    expect(task.contextId).toMatch(ULID);
    const session = await rpc(server, '_cleveragents/session/get', { sessionId: task.contextId });
    expect(session.result).toMatchObject({ sessionId: task.contextId, status: 'open', origin: 'message' });

    // The same session goes on: the thread holds the first turn.
    const second = await collect(
      client.sendMessageStream(sendRequest('m', { text: 'again', contextId: task.contextId })),
    );
    expect(assembledAnswer(second)).toBe('Echo #2: again');
    const context = await rpc(server, '_cleveragents/context/assemble', { sessionId: task.contextId });
    expect(context.result).toMatchObject({ sessionId: task.contextId, backend: 'langgraph', actor: 'default' });
    expect(context.result.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'hello'],
      ['assistant', 'Echo #1: hello'],
      ['user', 'again'],
      ['assistant', 'Echo #2: again'],
    ]);
    const history = await rpc(server, '_cleveragents/session/history', { sessionId: task.contextId });
    expect(history.result.totalSize).toBe(2);
    expect(history.result.items.map((t: { status: { state: string } }) => t.status.state)).toEqual([
      'TASK_STATE_COMPLETED',
      'TASK_STATE_COMPLETED',
    ]);
  });

  it('an interrupt becomes input-required with its question; the answer resumes the same run to completed', async () => {
    const events = await collect(client.sendMessageStream(sendRequest('m', { text: 'please ask me' })));
    const rest = events.at(-1)!.payload!;
    expect(rest.$case).toBe('statusUpdate');
    if (rest.$case !== 'statusUpdate') return;
    expect(rest.value.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const parts = rest.value.status?.message?.parts ?? [];
    expect(partText(parts[0] as never)).toBe('What name should I use?');
    expect(parts[1]?.content).toEqual({
      $case: 'data',
      value: { type: 'cleveragents/interrupt', value: { question: 'What name should I use?' } },
    });

    const answered = (await client.sendMessage(
      sendRequest('m', { text: 'Ada', taskId: rest.value.taskId, contextId: rest.value.contextId }),
    )) as Task;
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(partText(answered.artifacts.at(-1)?.parts[0] as never)).toBe('Thank you, Ada.');
    // One thread for the session; its runs: the interrupted first, the resumed second, nothing started twice.
    const runs = await remote.runs.list(langGraphThreadId('default', 'anonymous', rest.value.contextId));
    expect(runs.map((r) => r.status).sort()).toEqual(['success', 'success']);
  });

  it('CancelTask stops the remote run promptly; the task ends canceled', async () => {
    const stream = client.sendMessageStream(sendRequest('m', { text: 'slow please' }));
    const seen: StreamResponse[] = [];
    let taskId = '';
    let contextId = '';
    let cancelAsked = false;
    for await (const event of stream) {
      seen.push(event);
      if (event.payload?.$case === 'task') ({ id: taskId, contextId } = event.payload.value);
      if (event.payload?.$case === 'artifactUpdate' && taskId && !cancelAsked) {
        cancelAsked = true;
        const canceled = await client.cancelTask({ id: taskId, tenant: '', metadata: undefined });
        expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      }
    }
    expect(stateOf(seen.at(-1))).toBe(TaskState.TASK_STATE_CANCELED);
    expect(assembledAnswer(seen).length).toBeLessThan(SLOW_ANSWER.length);
    const runs = await remote.runs.list(langGraphThreadId('default', 'anonymous', contextId));
    expect(runs).toHaveLength(1);
    await until(
      async () => (await remote.runs.get(runs[0].thread_id, runs[0].run_id)).status === 'interrupted',
      'the LangGraph run to be cancelled',
    );
    const stored = await client.getTask({ id: taskId, tenant: '', historyLength: undefined });
    expect(stored.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('a client that leaves a stream does not cancel the run: the task completes and is stored whole', async () => {
    const controller = new AbortController();
    const res = await fetch(server.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'SendStreamingMessage',
        params: {
          message: { messageId: 'leaver-1', role: 'ROLE_USER', parts: [{ text: 'slow, then leave' }] },
        },
      }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    let buffered = '';
    let taskId: string | undefined;
    while (!taskId) {
      const { value } = await reader.read();
      buffered += new TextDecoder().decode(value);
      taskId = /"id":"([0-9a-f-]{36})"/.exec(buffered)?.[1];
    }
    controller.abort();
    await until(
      async () => (await client.getTask({ id: taskId, tenant: '' })).status?.state === TaskState.TASK_STATE_COMPLETED,
      'the task to complete after its client left',
      20000,
    );
    const done = await client.getTask({ id: taskId, tenant: '' });
    expect(partText(done.artifacts[0]?.parts[0] as never)).toBe(SLOW_ANSWER);
  });

  it('after a restart mid-run, the server re-joins the run (never starts it again) and a resubscribe sees it end', async () => {
    const stream = client.sendMessageStream(sendRequest('m', { text: 'slow across a restart' }));
    let task: Task | undefined;
    for await (const event of stream) {
      if (event.payload?.$case === 'task') task = event.payload.value;
      if (event.payload?.$case === 'artifactUpdate') break; // the run is under way
    }
    expect(task).toBeDefined();
    await server.close();
    server = await startServer(db, env());
    client = await new ClientFactory().createFromUrl(server.baseUrl);

    const resumed = await collect(client.resubscribeTask({ id: task!.id, tenant: '' }));
    expect(resumed[0].payload?.$case).toBe('task');
    expect(stateOf(resumed.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    const done = await client.getTask({ id: task!.id, tenant: '' });
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(partText(done.artifacts[0]?.parts[0] as never)).toBe(SLOW_ANSWER);
    const runs = await remote.runs.list(langGraphThreadId('default', 'anonymous', task!.contextId));
    expect(runs).toHaveLength(1);
    expect(runs[0].status).toBe('success');
  });

  it('a closed session refuses new messages with -32004 SESSION_CLOSED, and nothing is stored for them', async () => {
    const created = await rpc(server, '_cleveragents/session/create', { title: 'short-lived' });
    const sessionId = created.result.sessionId as string;
    expect(sessionId).toMatch(ULID);
    const closed = await rpc(server, '_cleveragents/session/close', { sessionId });
    expect(closed.result).toMatchObject({ status: 'closed', revision: 2 });
    const refused = await rawCall(
      server.endpoint,
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'SendMessage',
        params: { message: { messageId: 'late-1', contextId: sessionId, role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
      },
      { 'a2a-version': '1.0' },
    );
    expect(refused.json.error.code).toBe(-32004);
    expect(refused.json.error.data[0]).toMatchObject({ reason: 'SESSION_CLOSED', metadata: { sessionId } });
    const history = await rpc(server, '_cleveragents/session/history', { sessionId });
    expect(history.result.totalSize).toBe(0);
  });
});
