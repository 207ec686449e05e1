import { beforeEach, describe, expect, it } from '@jest/globals';
import { Role, TaskState, type AgentCard, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import { TaskNotCancelableError } from '@a2a-js/sdk/errors';
import { DefaultRequestHandler, InMemoryTaskStore, ServerCallContext } from '@a2a-js/sdk/server';
import { ConformanceAgentExecutor } from './conformance.executor.js';

const card: AgentCard = {
  name: 'conformance test agent',
  description: 'drives the conformance executor through the SDK request handler',
  supportedInterfaces: [
    { url: 'http://127.0.0.1/a2a', protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
  ],
  provider: undefined,
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [],
  signatures: [],
};

function userMessage(messageId: string, text = 'hello', extra: Partial<Message> = {}): Message {
  return {
    messageId,
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, mediaType: '', filename: '', metadata: undefined }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  };
}

const request = (message: Message) => ({ tenant: '', message, configuration: undefined, metadata: undefined });

function textOf(part: Part | undefined): string | undefined {
  return part?.content?.$case === 'text' ? part.content.value : undefined;
}

function asTask(result: Message | Task): Task {
  if (!('status' in result)) throw new Error(`expected a Task, got a Message: ${JSON.stringify(result)}`);
  return result;
}

/** A readable trace of a stream: `task`, `status:WORKING`, `artifact`, `status:COMPLETED`, … */
function trace(events: StreamResponse[]): string[] {
  return events.map((e) => {
    const p = e.payload;
    if (p?.$case === 'statusUpdate') return `status:${TaskState[p.value.status!.state].replace('TASK_STATE_', '')}`;
    if (p?.$case === 'artifactUpdate') return 'artifact';
    return p?.$case ?? 'empty';
  });
}

async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('ConformanceAgentExecutor (through the SDK DefaultRequestHandler)', () => {
  let handler: DefaultRequestHandler;
  let context: ServerCallContext;

  beforeEach(() => {
    handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new ConformanceAgentExecutor());
    context = new ServerCallContext({ requestedVersion: '1.0' });
  });

  const send = async (messageId: string, text?: string) =>
    handler.sendMessage(request(userMessage(messageId, text)), context);

  describe('SendMessage: resulting task per messageId prefix', () => {
    const textArtifacts: [string, string][] = [
      ['tck-artifact-text-001', 'Generated text content'],
      ['tck-stream-001-x', 'Stream hello from TCK'],
      ['tck-stream-003-x', 'Stream task lifecycle'],
      ['tck-stream-ordering-001-x', 'Ordered output'],
      ['tck-stream-artifact-text-x', 'Streamed text content'],
    ];
    it.each(textArtifacts)('%s completes with the text artifact "%s"', async (messageId, expected) => {
      const task = asTask(await send(messageId));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(task.artifacts).toHaveLength(1);
      expect(task.artifacts[0].parts.map(textOf)).toEqual([expected]);
    });

    it.each(['tck-artifact-file-001', 'tck-stream-artifact-file-001'])(
      '%s completes with a raw file part "tck" (text/plain, output.txt)',
      async (messageId) => {
        const task = asTask(await send(messageId));
        expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        const [part] = task.artifacts[0].parts;
        expect(part.content?.$case).toBe('raw');
        expect(Buffer.from(part.content?.value as Uint8Array).toString()).toBe('tck');
        expect(part.mediaType).toBe('text/plain');
        expect(part.filename).toBe('output.txt');
      },
    );

    it('tck-artifact-file-url (not claimed by tck-artifact-file) completes with a url file part', async () => {
      const task = asTask(await send('tck-artifact-file-url-001'));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const [part] = task.artifacts[0].parts;
      expect(part.content).toEqual({ $case: 'url', value: 'https://example.com/output.txt' });
      expect(part.mediaType).toBe('text/plain');
      expect(part.filename).toBe('output.txt');
    });

    it('tck-artifact-data completes with the data part {"key":"value","count":42}', async () => {
      const task = asTask(await send('tck-artifact-data-001'));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(task.artifacts[0].parts[0].content).toEqual({ $case: 'data', value: { key: 'value', count: 42 } });
    });

    it('tck-stream-artifact-chunked aggregates both chunks under one artifact', async () => {
      const task = asTask(await send('tck-stream-artifact-chunked-001'));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(task.artifacts).toHaveLength(1);
      expect(task.artifacts[0].parts.map(textOf)).toEqual(['chunk-1 ', 'chunk-2']);
    });

    it('tck-complete-task completes with the agent message "Hello from TCK"', async () => {
      const task = asTask(await send('tck-complete-task-001'));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(task.status?.message?.role).toBe(Role.ROLE_AGENT);
      expect(textOf(task.status?.message?.parts[0])).toBe('Hello from TCK');
      expect(task.artifacts).toEqual([]);
    });

    it('tck-stream-002 completes with no artifact', async () => {
      const task = asTask(await send('tck-stream-002-x'));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(task.artifacts).toEqual([]);
    });

    it.each([
      ['tck-reject-task-001', TaskState.TASK_STATE_REJECTED],
      ['tck-task-failure-001', TaskState.TASK_STATE_FAILED],
      ['tck-input-required-001', TaskState.TASK_STATE_INPUT_REQUIRED],
    ])('%s ends in state %s', async (messageId, state) => {
      const task = asTask(await send(messageId));
      expect(task.status?.state).toBe(state);
      expect(task.status?.timestamp).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    });

    it('the task keeps the user message in its history', async () => {
      const task = asTask(await send('tck-complete-task-002', 'first words'));
      expect(task.history.map((m) => m.messageId)).toContain('tck-complete-task-002');
      expect(task.contextId).not.toBe('');
    });

    it('tck-message-response answers with a Message and creates no task', async () => {
      const result = await send('tck-message-response-001');
      expect('status' in result).toBe(false);
      const message = result as Message;
      expect(message.role).toBe(Role.ROLE_AGENT);
      expect(textOf(message.parts[0])).toBe('Direct message response');
      expect(message.taskId).toBe('');
      expect(message.contextId).not.toBe('');
    });

    it('an unknown prefix completes with an echo that names the messageId', async () => {
      const task = asTask(await send('no-such-scenario-7', 'ping pong'));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const said = textOf(task.status?.message?.parts[0]);
      expect(said).toContain('ping pong');
      expect(said).toContain('no-such-scenario-7');
    });

    it('a follow-up without a scenario prefix supplies the input: the task completes, acknowledging it', async () => {
      const first = asTask(await send('tck-input-required-001'));
      const followUp = userMessage('client-follow-up-1', 'more', {
        taskId: first.id,
        contextId: first.contextId,
      });
      const task = asTask(await handler.sendMessage(request(followUp), context));
      expect(task.id).toBe(first.id);
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(textOf(task.status?.message?.parts[0])).toBe('Received: more');
      expect(task.history.map((m) => m.messageId)).toEqual(
        expect.arrayContaining(['tck-input-required-001', 'client-follow-up-1']),
      );
    });

    it('a follow-up is routed by its prefix, as the reference SUT does', async () => {
      const first = asTask(await send('tck-input-required-002'));
      const again = asTask(
        await handler.sendMessage(
          request(userMessage('tck-input-required-again', 'still', { taskId: first.id, contextId: first.contextId })),
          context,
        ),
      );
      expect(again.id).toBe(first.id);
      expect(again.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const done = asTask(
        await handler.sendMessage(
          request(userMessage('tck-complete-task-then', 'done', { taskId: first.id, contextId: first.contextId })),
          context,
        ),
      );
      expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(textOf(done.status?.message?.parts[0])).toBe('Hello from TCK');
    });
  });

  describe('SendStreamingMessage: event order', () => {
    const orders: [string, string[]][] = [
      ['tck-stream-001-a', ['task', 'status:WORKING', 'artifact', 'status:COMPLETED']],
      ['tck-stream-002-a', ['task', 'status:COMPLETED']],
      ['tck-stream-003-a', ['task', 'status:WORKING', 'artifact', 'status:COMPLETED']],
      ['tck-stream-ordering-001-a', ['task', 'status:WORKING', 'artifact', 'status:COMPLETED']],
      ['tck-stream-artifact-text-a', ['task', 'status:WORKING', 'artifact', 'status:COMPLETED']],
      ['tck-stream-artifact-file-a', ['task', 'status:WORKING', 'artifact', 'status:COMPLETED']],
      ['tck-stream-artifact-chunked-a', ['task', 'status:WORKING', 'artifact', 'artifact', 'status:COMPLETED']],
      ['tck-artifact-file-url-a', ['task', 'artifact', 'status:COMPLETED']],
      ['tck-input-required-a', ['task', 'status:INPUT_REQUIRED']],
      ['tck-message-response-a', ['message']],
    ];
    it.each(orders)('%s streams %j', async (messageId, expected) => {
      const events = await collect(handler.sendMessageStream(request(userMessage(messageId)), context));
      expect(trace(events)).toEqual(expected);
    });

    it('the first event is a Task built from the user message, in state submitted', async () => {
      const [first] = await collect(handler.sendMessageStream(request(userMessage('tck-stream-001-b')), context));
      expect(first.payload?.$case).toBe('task');
      const task = first.payload?.value as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
      expect(task.history[0].messageId).toBe('tck-stream-001-b');
    });

    it('every status update carries a timestamp and the task and context ids', async () => {
      const events = await collect(handler.sendMessageStream(request(userMessage('tck-stream-003-b')), context));
      const task = events[0].payload?.value as Task;
      const updates = events.flatMap((e) => (e.payload?.$case === 'statusUpdate' ? [e.payload.value] : []));
      expect(updates.length).toBeGreaterThan(0);
      for (const update of updates) {
        expect(update.taskId).toBe(task.id);
        expect(update.contextId).toBe(task.contextId);
        expect(Number.isNaN(Date.parse(update.status?.timestamp ?? ''))).toBe(false);
      }
    });

    it('tck-stream-artifact-chunked sends "chunk-1 " then "chunk-2" as appends to one artifact, the last flagged', async () => {
      const events = await collect(
        handler.sendMessageStream(request(userMessage('tck-stream-artifact-chunked-b')), context),
      );
      const chunks = events.flatMap((e) => (e.payload?.$case === 'artifactUpdate' ? [e.payload.value] : []));
      expect(chunks.map((c) => [textOf(c.artifact?.parts[0]), c.append, c.lastChunk])).toEqual([
        ['chunk-1 ', true, false],
        ['chunk-2', true, true],
      ]);
      expect(chunks[0].artifact?.artifactId).toBe(chunks[1].artifact?.artifactId);
    });
  });

  describe('CancelTask', () => {
    it('cancels a running test-resubscribe-message-id task at once, and it stays canceled', async () => {
      const stream = handler.sendMessageStream(request(userMessage('test-resubscribe-message-id-1')), context);
      const first = await stream.next();
      const taskId =
        (first.value as StreamResponse).payload?.$case === 'task'
          ? ((first.value as StreamResponse).payload!.value as Task).id
          : '';
      expect(taskId).not.toBe('');

      // Still running: a resubscriber sees the live task.
      const resubscribed = handler.resubscribe({ tenant: '', id: taskId }, context);
      const snapshot = await resubscribed.next();
      expect(((snapshot.value as StreamResponse).payload?.value as Task).status?.state).not.toBe(
        TaskState.TASK_STATE_COMPLETED,
      );
      await resubscribed.return(undefined);

      const started = Date.now();
      const canceled = await handler.cancelTask({ tenant: '', id: taskId, metadata: undefined }, context);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);

      const rest: StreamResponse[] = [];
      for await (const event of stream) rest.push(event);
      expect(trace(rest).at(-1)).toBe('status:CANCELED');
      expect(Date.now() - started).toBeLessThan(1000);

      await new Promise((resolve) => setTimeout(resolve, 50));
      const later = await handler.getTask({ tenant: '', id: taskId }, context);
      expect(later.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    });

    it('stop() (the server stopping) ends a held turn where it is: no hold outlives the application', async () => {
      // An hour's hold: without stop() the stream would not end within the test's timeout.
      const executor = new ConformanceAgentExecutor({ resubscribeHoldMs: 3_600_000 });
      const held = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
      const stream = held.sendMessageStream(request(userMessage('test-resubscribe-message-id-stop')), context);
      const opened: StreamResponse[] = [];
      for (let i = 0; i < 2; i++) opened.push((await stream.next()).value as StreamResponse);
      expect(trace(opened)).toEqual(['task', 'status:WORKING']);

      executor.stop();
      const rest = await collect(stream);
      // The turn stopped at its hold: it never completed.
      expect(trace(rest)).not.toContain('status:COMPLETED');
    }, 20000);

    it('cancels a task waiting for input', async () => {
      const task = asTask(await send('tck-input-required-9'));
      const canceled = await handler.cancelTask({ tenant: '', id: task.id, metadata: undefined }, context);
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      expect(canceled.status?.timestamp).toBeDefined();
    });

    it('leaves a finished task to the SDK, which answers TaskNotCancelable', async () => {
      const task = asTask(await send('tck-complete-task-9'));
      await expect(
        handler.cancelTask({ tenant: '', id: task.id, metadata: undefined }, context),
      ).rejects.toBeInstanceOf(TaskNotCancelableError);
    });
  });
});
