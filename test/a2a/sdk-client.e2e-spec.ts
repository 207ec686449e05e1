import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import { Client, ClientFactory } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { startServer, type TestServer } from '../support/server.js';
import { sendRequest } from '../factories/messages.js';
import { ifAssigned } from '../support/assigned.js';
import { eventually } from '../support/wait.js';

function isTask(result: Message | Task): result is Task {
  return 'status' in result && 'id' in result && !('messageId' in result);
}

function partText(part: { content?: { $case: string; value: unknown } } | undefined): unknown {
  return part?.content?.value;
}

/** Collects every event of a stream. */
async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

/** A loopback webhook that records what it receives. */
async function startWebhook(): Promise<{
  url: string;
  received: { headers: IncomingMessage['headers']; body: any }[];
  close(): Promise<void>;
}> {
  const received: { headers: IncomingMessage['headers']; body: any }[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body: JSON.parse(body) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, received, close: () => new Promise((r) => server.close(() => r())) };
}

describe.each(databaseTargets())('the official @a2a-js/sdk clients against the server on $kind', (target) => {
  let db: TestDatabase;
  let server: TestServer;
  let client: Client;
  let legacy: Client;

  beforeAll(async () => {
    db = await target.create();
    server = await startServer(db, { CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1', CLEVERAGENTS_PUSH_RETRIES: '0' });
    client = await new ClientFactory().createFromUrl(server.baseUrl);
    legacy = new Client(new LegacyJsonRpcTransport({ endpoint: server.endpoint }), await client.getAgentCard());
  });

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  describe('v1.0 JSON-RPC transport', () => {
    it('negotiates v1.0 JSON-RPC from the Agent Card', () => {
      expect(client.transport.protocolName).toBe('JSONRPC');
      expect(client.protocolVersion).toBe('1.0');
    });

    it('SendMessage completes a task with the agent message', async () => {
      const result = await client.sendMessage(sendRequest('tck-complete-task'));
      expect(isTask(result)).toBe(true);
      const task = result as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(partText(task.status?.message?.parts[0] as never)).toBe('Hello from TCK');
    });

    it('SendMessage answers with a bare Message when the agent replies directly', async () => {
      const result = await client.sendMessage(sendRequest('tck-message-response'));
      expect('messageId' in result).toBe(true);
      expect(partText((result as Message).parts[0] as never)).toBe('Direct message response');
    });

    it('produces text, file, url and data artifacts', async () => {
      const text = (await client.sendMessage(sendRequest('tck-artifact-text'))) as Task;
      expect(partText(text.artifacts[0]?.parts[0] as never)).toBe('Generated text content');
      const data = (await client.sendMessage(sendRequest('tck-artifact-data'))) as Task;
      expect(partText(data.artifacts[0]?.parts[0] as never)).toEqual({ key: 'value', count: 42 });
      const url = (await client.sendMessage(sendRequest('tck-artifact-file-url'))) as Task;
      expect(partText(url.artifacts[0]?.parts[0] as never)).toBe('https://example.com/output.txt');
      const file = (await client.sendMessage(sendRequest('tck-artifact-file'))) as Task;
      expect(Buffer.from(partText(file.artifacts[0]?.parts[0] as never) as Uint8Array).toString()).toBe('tck');
    });

    it('SendStreamingMessage streams task, working, artifact and completed in order', async () => {
      const events = await collect(client.sendMessageStream(sendRequest('tck-stream-001')));
      expect(events.map((e) => e.payload?.$case)).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
      const last = events.at(-1)!.payload!;
      expect(last.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const artifact = events[2].payload!;
      expect(artifact.$case === 'artifactUpdate' && partText(artifact.value.artifact?.parts[0] as never)).toBe(
        'Stream hello from TCK',
      );
    });

    it('GetTask returns the stored task, history trimmed by historyLength', async () => {
      const sent = (await client.sendMessage(sendRequest('tck-complete-task'))) as Task;
      const got = await client.getTask({ tenant: '', id: sent.id, historyLength: 1 });
      expect(got.id).toBe(sent.id);
      expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(got.history).toHaveLength(1);
    });

    it('GetTask of an unknown task answers TaskNotFound', async () => {
      await expect(client.getTask({ tenant: '', id: 'no-such-task' })).rejects.toMatchObject({
        name: 'TaskNotFoundError',
      });
    });

    it('ListTasks filters by context and state and pages without skipping or repeating', async () => {
      const first = (await client.sendMessage(sendRequest('tck-complete-task'))) as Task;
      const contextId = first.contextId;
      const ids = new Set([first.id]);
      for (let i = 0; i < 4; i++) {
        const t = (await client.sendMessage(sendRequest('tck-complete-task', { contextId }))) as Task;
        ids.add(t.id);
      }
      await client.sendMessage(sendRequest('tck-reject-task', { contextId }));
      const completed = TaskState.TASK_STATE_COMPLETED;
      const seen: string[] = [];
      let pageToken = '';
      let pages = 0;
      do {
        const page = await client.listTasks({
          tenant: '',
          contextId,
          status: completed,
          pageSize: 2,
          pageToken,
          statusTimestampAfter: undefined,
        });
        expect(page.totalSize).toBe(5);
        expect(page.tasks.length).toBeLessThanOrEqual(2);
        for (const t of page.tasks) {
          expect(t.contextId).toBe(contextId);
          expect(t.status?.state).toBe(completed);
          seen.push(t.id);
        }
        pageToken = page.nextPageToken;
        pages++;
      } while (pageToken);
      expect(pages).toBe(3);
      expect(new Set(seen)).toEqual(ids);
      expect(seen).toHaveLength(5);
      const all = await client.listTasks({
        tenant: '',
        contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 50,
      } as never);
      expect(all.totalSize).toBe(6);
    });

    it('ListTasks gives each task as GetTask does: artifacts when asked for, history cut when asked', async () => {
      // A task that waited for input and was answered: two messages of the client's in its history.
      const asked = (await client.sendMessage(sendRequest('tck-input-required'))) as Task;
      const sent = (await client.sendMessage(
        sendRequest('tck-artifact-file', { taskId: asked.id, contextId: asked.contextId }),
      )) as Task;
      const stored = await client.getTask({ tenant: '', id: sent.id });
      expect(stored.artifacts.length).toBeGreaterThan(0);
      expect(stored.history.length).toBeGreaterThan(1);
      const list = async (params: object) =>
        (
          await client.listTasks({
            tenant: '',
            contextId: sent.contextId,
            status: TaskState.TASK_STATE_UNSPECIFIED,
            pageSize: 10,
            ...params,
          } as never)
        ).tasks;
      expect(await list({})).toEqual([{ ...stored, artifacts: [] }]);
      expect(await list({ includeArtifacts: true })).toEqual([stored]);
      expect(await list({ includeArtifacts: true, historyLength: 1 })).toEqual([
        { ...stored, history: stored.history.slice(-1) },
      ]);
      expect(await list({ historyLength: 0 })).toEqual([{ ...stored, artifacts: [], history: [] }]);
    });

    it('CancelTask cancels a working task; a canceled or completed one is not cancelable', async () => {
      const started = (await client.sendMessage(
        sendRequest('test-resubscribe-message-id', { returnImmediately: true }),
      )) as Task;
      expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(started.status?.state);
      const canceled = await client.cancelTask({ tenant: '', id: started.id } as never);
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      const reread = await client.getTask({ tenant: '', id: started.id });
      expect(reread.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      await expect(client.cancelTask({ tenant: '', id: started.id } as never)).rejects.toMatchObject({
        name: 'TaskNotCancelableError',
      });
      const completed = (await client.sendMessage(sendRequest('tck-complete-task'))) as Task;
      await expect(client.cancelTask({ tenant: '', id: completed.id } as never)).rejects.toMatchObject({
        name: 'TaskNotCancelableError',
      });
    });

    it('SubscribeToTask joins a running task and follows it to completion', async () => {
      const started = (await client.sendMessage(
        sendRequest('test-resubscribe-message-id', { returnImmediately: true }),
      )) as Task;
      const events = await collect(client.resubscribeTask({ tenant: '', id: started.id }));
      expect(events[0]?.payload?.$case).toBe('task');
      const last = events.at(-1)!.payload!;
      expect(last.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });

    it('push notification configs: create, get, list, delete, and delivery to an allow-listed webhook', async () => {
      const hook = await startWebhook();
      try {
        const started = (await client.sendMessage(
          sendRequest('tck-input-required', {
            push: { url: hook.url, token: 'tok-1', authentication: { scheme: 'Bearer', credentials: 'secret-1' } },
          }),
        )) as Task;
        expect(started.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
        const created = await client.createTaskPushNotificationConfig({
          tenant: '',
          id: '',
          taskId: started.id,
          url: `${hook.url}/second`,
          token: 'tok-2',
          authentication: undefined,
        });
        expect(created.id).not.toBe('');
        const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: started.id, id: created.id });
        expect(got.url).toBe(`${hook.url}/second`);
        const listed = await client.listTaskPushNotificationConfig({ tenant: '', taskId: started.id } as never);
        expect(listed.configs.map((c) => c.url).sort()).toEqual([hook.url, `${hook.url}/second`].sort());

        // The follow-up completes the task; both webhooks hear of it.
        await client.sendMessage(
          sendRequest('tck-complete-task', { taskId: started.id, contextId: started.contextId }),
        );
        const delivered = await eventually(
          () =>
            hook.received.filter((r) => JSON.stringify(r.body).includes('TASK_STATE_COMPLETED')).length >= 2
              ? hook.received
              : undefined,
          'both webhooks to hear of the completion',
          10_000,
        );
        const toFirst = delivered.find((r) => r.headers.authorization === 'Bearer secret-1');
        expect(toFirst).toBeDefined();

        await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: started.id, id: created.id });
        const after = await client.listTaskPushNotificationConfig({ tenant: '', taskId: started.id } as never);
        expect(after.configs.map((c) => c.url)).toEqual([hook.url]);
      } finally {
        await hook.close();
      }
    });

    it("notifies a stream's events in order, each once stored, also to a config made while it runs", async () => {
      const hook = await startWebhook();
      const stateOf = (body: any): string | undefined => body?.statusUpdate?.status?.state ?? body?.task?.status?.state;
      try {
        // A config in the request: every event of the stream, in order.
        const streamed = await collect(
          client.sendMessageStream(
            sendRequest('tck-stream-001', { push: { url: `${hook.url}/request`, token: 'tok-r' } }),
          ),
        );
        const taskId = (streamed[0].payload as { value: Task }).value.id;
        const fromRequest = await eventually(
          () => {
            const got = hook.received.filter((r) => r.headers['x-a2a-notification-token'] === 'tok-r');
            return got.length >= 4 ? got : undefined;
          },
          "the four notifications of the request's config",
          10_000,
        );
        expect(fromRequest.map((r) => Object.keys(r.body)[0])).toEqual([
          'task',
          'statusUpdate',
          'artifactUpdate',
          'statusUpdate',
        ]);
        expect(stateOf(fromRequest[3].body)).toBe('TASK_STATE_COMPLETED');
        expect(fromRequest.every((r) => JSON.stringify(r.body).includes(taskId))).toBe(true);

        // A config made by another call once the stream has shown its task: the events after it are notified.
        const held: StreamResponse[] = [];
        for await (const event of client.sendMessageStream(sendRequest('test-resubscribe-message-id'))) {
          held.push(event);
          if (event.payload?.$case === 'task') {
            await client.createTaskPushNotificationConfig({
              tenant: '',
              id: '',
              taskId: event.payload.value.id,
              url: `${hook.url}/later`,
              token: 'tok-l',
              authentication: undefined,
            });
          }
        }
        const last = held.at(-1)!.payload!;
        expect(last.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        const completed = await eventually(
          () =>
            hook.received.find(
              (r) => r.headers['x-a2a-notification-token'] === 'tok-l' && stateOf(r.body) === 'TASK_STATE_COMPLETED',
            ),
          'the later config to hear of the completion',
          10_000,
        );
        expect(JSON.stringify(completed.body)).toContain((held[0].payload as { value: Task }).value.id);
      } finally {
        await hook.close();
      }
    });

    it('refuses a push webhook on a private address that is not allow-listed', async () => {
      const started = (await client.sendMessage(sendRequest('tck-input-required'))) as Task;
      await expect(
        client.createTaskPushNotificationConfig({
          tenant: '',
          id: '',
          taskId: started.id,
          url: 'http://10.1.2.3/hook',
          token: '',
          authentication: undefined,
        }),
      ).rejects.toThrow(/CLEVERAGENTS_PUSH_ALLOWED_HOSTS/);
      const listed = await client.listTaskPushNotificationConfig({ tenant: '', taskId: started.id } as never);
      expect(listed.configs).toHaveLength(0);
    });

    it('GetExtendedAgentCard lists one interface per namespace the caller may use, with tenant set', async () => {
      const card = await client.getAgentCard();
      expect(card.capabilities?.extendedAgentCard).toBe(true);
      const extended = await client.transport.getExtendedAgentCard({ tenant: '' });
      // The `none` scheme's anonymous caller may use every namespace: here, the bootstrap's default one.
      expect(extended.supportedInterfaces.filter((i) => i.tenant !== '')).toEqual([
        expect.objectContaining({
          url: `${server.endpoint}`,
          protocolBinding: 'JSONRPC',
          tenant: 'default',
          protocolVersion: '1.0',
        }),
      ]);
      expect(extended.name).toBe(card.name);
    });
  });

  describe('v0.3 legacy JSON-RPC client', () => {
    it('speaks v0.3', () => {
      expect(legacy.protocolVersion).toBe('0.3');
    });

    it('message/send, tasks/get and artifacts', async () => {
      const task = (await legacy.sendMessage(sendRequest('tck-artifact-text'))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(partText(task.artifacts[0]?.parts[0] as never)).toBe('Generated text content');
      const got = await legacy.getTask({ tenant: '', id: task.id });
      expect(got.id).toBe(task.id);
      expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });

    it('message/stream delivers the same event sequence', async () => {
      const events = await collect(legacy.sendMessageStream(sendRequest('tck-stream-003')));
      const cases = events.map((e) => e.payload?.$case);
      expect(cases[0]).toBe('task');
      expect(cases).toContain('artifactUpdate');
      const last = events.at(-1)!.payload!;
      expect(last.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });

    it('tasks/cancel and tasks/resubscribe', async () => {
      const running = (await legacy.sendMessage(
        sendRequest('test-resubscribe-message-id', { returnImmediately: true }),
      )) as Task;
      const followed = (await legacy.sendMessage(
        sendRequest('test-resubscribe-message-id', { returnImmediately: true }),
      )) as Task;
      const canceled = await legacy.cancelTask({ tenant: '', id: running.id } as never);
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      const events = await collect(legacy.resubscribeTask({ tenant: '', id: followed.id }));
      const last = events.at(-1)!.payload!;
      expect(last.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });

    it('tasks/pushNotificationConfig set, get, list and delete', async () => {
      const task = (await legacy.sendMessage(sendRequest('tck-input-required'))) as Task;
      const created = await legacy.createTaskPushNotificationConfig({
        tenant: '',
        id: 'cfg-legacy',
        taskId: task.id,
        url: 'http://127.0.0.1:9/legacy-hook',
        token: 't',
        authentication: undefined,
      });
      expect(created.id).toBe('cfg-legacy');
      const got = await legacy.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-legacy' });
      expect(got.url).toBe('http://127.0.0.1:9/legacy-hook');
      const listed = await legacy.listTaskPushNotificationConfig({ tenant: '', taskId: task.id } as never);
      expect(listed.configs.map((c) => c.id)).toEqual(['cfg-legacy']);
      await legacy.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-legacy' });
      const after = await legacy.listTaskPushNotificationConfig({ tenant: '', taskId: task.id } as never);
      expect(after.configs).toHaveLength(0);
    });

    it('a task written over v0.3 is read over v1.0 and the other way round', async () => {
      const viaLegacy = (await legacy.sendMessage(sendRequest('tck-complete-task'))) as Task;
      const viaV1 = (await client.sendMessage(sendRequest('tck-complete-task'))) as Task;
      expect((await client.getTask({ tenant: '', id: viaLegacy.id })).status?.state).toBe(
        TaskState.TASK_STATE_COMPLETED,
      );
      expect((await legacy.getTask({ tenant: '', id: viaV1.id })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });
  });
});
