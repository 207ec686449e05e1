import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { Client, ClientFactory } from '@a2a-js/sdk/client';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { rawCall, startServer, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { sendRequest } from '../factories/messages.js';
import { assembledAnswer, collect, partText, stateOf } from '../support/streams.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * Sessions on the `local` backend, end to end (docs/protocol.md §4, §5, §6.4): the official SDK client drives the
 * server, whose in-process orchestrator graph calls a real ChatOpenAI client against an OpenAI-compatible
 * endpoint this suite serves on loopback (test/support/openai-endpoint.ts), so the real HTTP client code
 * runs. The checkpoints are in the server's own database.
 */

type ChatMessage = { role: string; content: string };

describe.each(databaseTargets())('sessions on the local backend with an on-prem model, on $kind', (target) => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let client: Client;
  const rpc = async (method: string, params: Record<string, unknown>) =>
    (await rawCall(server.endpoint, { jsonrpc: '2.0', id: 1, method, params })).json;

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start({ tokens: ['Hel', 'lo', ', ', 'Ada', '.'] });
    db = await target.create();
    server = await startServer(db, {
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'llama-3.1-8b-instruct',
      CLEVERAGENTS_MODEL_API_KEY: 'sk-onprem-test-key',
    });
    client = await new ClientFactory().createFromUrl(server.baseUrl);
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
  });

  it('streams the model’s tokens as artifact updates, in order, and completes with the whole answer', async () => {
    model.answerWith({ tokens: ['Hel', 'lo', ', ', 'Ada', '.'] });
    const sent = model.requests.length;
    const events = await collect(client.sendMessageStream(sendRequest('m', { text: 'Say hello to Ada' })));
    expect(events[0].payload?.$case).toBe('task');
    expect(stateOf(events[1])).toBe(TaskState.TASK_STATE_WORKING);
    const chunks = events
      .filter((e) => e.payload?.$case === 'artifactUpdate')
      .map((e) => (e.payload as { value: { append: boolean; lastChunk: boolean; artifact: any } }).value);
    // One update per token as it arrived, then the whole answer once more as the last chunk.
    expect(chunks.map((c) => [partText(c.artifact.parts[0]), c.append, c.lastChunk])).toEqual([
      ['Hel', false, false],
      ['lo', true, false],
      [', ', true, false],
      ['Ada', true, false],
      ['.', true, false],
      ['Hello, Ada.', false, true],
    ]);
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(assembledAnswer(events)).toBe('Hello, Ada.');

    // What went over the wire to the model: the model name, the bearer key, a system prompt, the message.
    expect(model.requests.length).toBe(sent + 1);
    const request = model.requests.at(-1)!;
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.headers.authorization).toBe('Bearer sk-onprem-test-key');
    expect(request.body).toMatchObject({ model: 'llama-3.1-8b-instruct', stream: true });
    const messages = request.body.messages as ChatMessage[];
    expect(messages[0].role).toBe('system');
    expect(messages.slice(1)).toEqual([{ role: 'user', content: 'Say hello to Ada' }]);
  });

  it('a session goes on: the next turn carries the conversation, exactly as context/assemble showed it', async () => {
    model.answerWith({ tokens: ['First ', 'answer.'] });
    const first = (await client.sendMessage(sendRequest('m', { text: 'first question' }))) as Task;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const contextId = first.contextId;

    const assembledBefore = await rpc('_cleveragents/context/assemble', { sessionId: contextId });
    expect(assembledBefore.result).toMatchObject({ sessionId: contextId, actor: 'default', backend: 'local' });
    expect(assembledBefore.result.model).toBe('llama-3.1-8b-instruct');
    const shown = assembledBefore.result.messages as ChatMessage[];
    expect(shown.slice(1)).toEqual([
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'First answer.' },
    ]);

    model.answerWith({ tokens: ['Second.'] });
    const second = (await client.sendMessage(sendRequest('m', { text: 'second question', contextId }))) as Task;
    expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const sentToModel = model.requests.at(-1)!.body.messages as ChatMessage[];
    expect(sentToModel).toEqual([...shown, { role: 'user', content: 'second question' }]);

    const trimmed = await rpc('_cleveragents/context/assemble', { sessionId: contextId, maxTokens: 5 });
    expect(trimmed.result.omittedMessages).toBeGreaterThan(0);
    expect(trimmed.result.messages.length).toBeLessThan(shown.length + 2);
  });

  it('CancelTask stops the model call at once; the task ends canceled; the endpoint saw the hang-up', async () => {
    model.answerWith({ tokens: Array.from({ length: 200 }, (_, i) => `t${i} `), delayMs: 20 });
    const hangUps = model.hangUps;
    let taskId = '';
    let canceled = false;
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(sendRequest('m', { text: 'a long answer please' }))) {
      events.push(event);
      if (event.payload?.$case === 'task') taskId = event.payload.value.id;
      if (event.payload?.$case === 'artifactUpdate' && !canceled) {
        canceled = true;
        const result = await client.cancelTask({ id: taskId, tenant: '' } as never);
        expect(result.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      }
    }
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_CANCELED);
    await until(() => model.hangUps === hangUps + 1, 'the model endpoint to see the client hang up');
    const stored = await client.getTask({ id: taskId, tenant: '' });
    expect(stored.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('SubscribeToTask mid-answer gets the task as it stands, then the live events in order to the end', async () => {
    const tokens = Array.from({ length: 30 }, (_, i) => `s${i} `);
    model.answerWith({ tokens, delayMs: 15 });
    const sender = client.sendMessageStream(sendRequest('m', { text: 'stream for a subscriber' }));
    let taskId = '';
    for await (const event of sender) {
      if (event.payload?.$case === 'task') taskId = event.payload.value.id;
      if (event.payload?.$case === 'artifactUpdate') break; // leave: the run goes on
    }
    const other = await new ClientFactory().createFromUrl(server.baseUrl);
    const events = await collect(other.resubscribeTask({ id: taskId, tenant: '' }));
    const first = events[0].payload!;
    expect(first.$case).toBe('task');
    expect(first.$case === 'task' && first.value.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    // Live token updates in order (the SDK attaches the subscriber before it reads the task, so the first
    // few may also be in the task it sent), then the whole answer once more as the last chunk.
    const live = events
      .slice(1)
      .filter((e) => e.payload?.$case === 'artifactUpdate')
      .map((e) => (e.payload as { value: { append: boolean; lastChunk: boolean; artifact: any } }).value);
    const appended = live.filter((u) => u.append).map((u) => partText(u.artifact.parts[0]));
    expect(appended.length).toBeGreaterThan(0);
    const firstIndex = tokens.indexOf(appended[0]);
    expect(appended).toEqual(tokens.slice(firstIndex));
    const last = live.at(-1)!;
    expect([last.append, last.lastChunk, partText(last.artifact.parts[0])]).toEqual([false, true, tokens.join('')]);
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('a model endpoint that fails: the task fails with MODEL_UNAVAILABLE, no key, address or status', async () => {
    model.answerWith({ status: 401, error: 'Incorrect API key provided: sk-onprem-test-key' });
    const task = (await client.sendMessage(sendRequest('m', { text: 'hello?' }))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    const reason = partText(task.status?.message?.parts[0]);
    expect(reason).toMatch(/^MODEL_UNAVAILABLE: .*correlation id [0-9a-f-]{36}/);
    // The correlation id is random hex, which may hold "401": the rest of the text is what must not.
    const said = reason.replace(/correlation id [0-9a-f-]{36}/, 'correlation id');
    expect(said).not.toMatch(/401|127\.0\.0\.1/);
    expect(said).not.toContain('sk-onprem-test-key');
  });
});

describe.each(databaseTargets())('the local backend with no model configured, on $kind', (target) => {
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    db = await target.create();
    server = await startServer(db, { CLEVERAGENTS_ACTOR_BACKEND: 'local' });
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('starts; /readyz and diagnostics/health name the missing settings; a task fails at once saying which', async () => {
    const ready = await fetch(`${server.baseUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.stringify(await ready.json())).toMatch(/CLEVERAGENTS_MODEL_BASE_URL.*CLEVERAGENTS_MODEL\b/);
    const health = await rawCall(server.endpoint, {
      jsonrpc: '2.0',
      id: 1,
      method: '_cleveragents/diagnostics/health',
    });
    expect(health.json.result).toMatchObject({
      status: 'degraded',
      checks: {
        actorBackend: { ok: false, name: 'local', detail: expect.stringMatching(/CLEVERAGENTS_MODEL_BASE_URL/) },
      },
    });
    const client = await new ClientFactory().createFromUrl(server.baseUrl);
    const task = (await client.sendMessage(sendRequest('m', { text: 'anyone there?' }))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(partText(task.status?.message?.parts[0] as never)).toMatch(/CLEVERAGENTS_MODEL_BASE_URL/);
  });
});

describe.each(databaseTargets())('a turn recovered after a restart, on $kind', (target) => {
  it('completes from its checkpoint and its webhook hears the ending, as for a request', async () => {
    const model = await OpenAiCompatibleEndpoint.start({
      tokens: Array.from({ length: 100 }, (_, i) => `r${i} `),
      delayMs: 30,
    });
    const received: string[] = [];
    const hook = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push(body);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
    const db = await target.create();
    const env = {
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'onprem-model',
      CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1',
      CLEVERAGENTS_SHUTDOWN_GRACE_MS: '0',
    };
    let server = await startServer(db, env);
    try {
      let client = await new ClientFactory().createFromUrl(server.baseUrl);
      const started = (await client.sendMessage(
        sendRequest('m', {
          text: 'long, across a restart',
          returnImmediately: true,
          push: { url: hookUrl, token: 'tok' },
        }),
      )) as Task;
      await until(
        async () => (await client.getTask({ id: started.id, tenant: '' })).artifacts.length > 0,
        'the answer to start streaming',
        10000,
      );
      await server.close(); // the turn is let go mid-answer, its lease released
      model.answerWith({ tokens: ['Done ', 'after ', 'restart.'] });
      server = await startServer(db, env);
      client = await new ClientFactory().createFromUrl(server.baseUrl);
      await until(
        async () =>
          (await client.getTask({ id: started.id, tenant: '' })).status?.state === TaskState.TASK_STATE_COMPLETED,
        'the recovered task to complete',
        20000,
      );
      const done = await client.getTask({ id: started.id, tenant: '' });
      expect(partText(done.artifacts[0]?.parts[0] as never)).toBe('Done after restart.');
      await until(
        () => received.some((b) => b.includes('TASK_STATE_COMPLETED')),
        'the webhook to hear the ending',
        10000,
      );
    } finally {
      await server.close();
      await db.cleanup();
      await model.close();
      await new Promise((resolve) => hook.close(resolve));
    }
  }, 60000);
});
