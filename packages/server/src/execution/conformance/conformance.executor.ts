import { randomUUID } from 'node:crypto';
import { TaskState, type Message, type Part, type Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { agentMessage, statusEvent, submittedTask, textPart } from '../agent-events.js';

/** How long a `test-resubscribe-message-id` task stays working: the TCK needs ≥ 2 × its 2 s streaming timeout. */
export const RESUBSCRIBE_HOLD_MS = 4000;

type Step =
  | { do: 'status'; state: TaskState; say?: string }
  | { do: 'artifact'; key: string; parts: () => Part[]; append?: boolean; lastChunk?: boolean }
  | { do: 'hold' };

/** A scenario either answers with a bare Message (`reply`) or runs a task through `steps`. */
type Scenario = { prefix: string; reply: string } | { prefix: string; steps: readonly Step[] };

const rawFile = (): Part => ({
  content: { $case: 'raw', value: Buffer.from('tck') },
  mediaType: 'text/plain',
  filename: 'output.txt',
  metadata: undefined,
});
const urlFile = (): Part => ({
  content: { $case: 'url', value: 'https://example.com/output.txt' },
  mediaType: 'text/plain',
  filename: 'output.txt',
  metadata: undefined,
});
const data = (): Part => ({
  content: { $case: 'data', value: { key: 'value', count: 42 } },
  mediaType: 'application/json',
  filename: '',
  metadata: undefined,
});

const working: Step = { do: 'status', state: TaskState.TASK_STATE_WORKING };
const completed: Step = { do: 'status', state: TaskState.TASK_STATE_COMPLETED };
const artifact = (parts: () => Part[]): Step => ({ do: 'artifact', key: 'output', parts, lastChunk: true });

/** The TCK's reference SUT behaviours, keyed by `messageId` prefix. */
const SCENARIOS: readonly Scenario[] = [
  {
    prefix: 'tck-stream-artifact-chunked',
    steps: [
      working,
      { do: 'artifact', key: 'chunked', parts: () => [textPart('chunk-1 ')], append: true, lastChunk: false },
      { do: 'artifact', key: 'chunked', parts: () => [textPart('chunk-2')], append: true, lastChunk: true },
      completed,
    ],
  },
  { prefix: 'test-resubscribe-message-id', steps: [working, { do: 'hold' }, completed] },
  {
    prefix: 'tck-stream-artifact-text',
    steps: [working, artifact(() => [textPart('Streamed text content')]), completed],
  },
  { prefix: 'tck-stream-artifact-file', steps: [working, artifact(() => [rawFile()]), completed] },
  { prefix: 'tck-stream-ordering-001', steps: [working, artifact(() => [textPart('Ordered output')]), completed] },
  { prefix: 'tck-artifact-file-url', steps: [artifact(() => [urlFile()]), completed] },
  { prefix: 'tck-message-response', reply: 'Direct message response' },
  {
    prefix: 'tck-input-required',
    steps: [{ do: 'status', state: TaskState.TASK_STATE_INPUT_REQUIRED, say: 'Input required' }],
  },
  {
    prefix: 'tck-complete-task',
    steps: [{ do: 'status', state: TaskState.TASK_STATE_COMPLETED, say: 'Hello from TCK' }],
  },
  { prefix: 'tck-artifact-text', steps: [artifact(() => [textPart('Generated text content')]), completed] },
  { prefix: 'tck-artifact-file', steps: [artifact(() => [rawFile()]), completed] },
  { prefix: 'tck-artifact-data', steps: [artifact(() => [data()]), completed] },
  { prefix: 'tck-reject-task', steps: [{ do: 'status', state: TaskState.TASK_STATE_REJECTED, say: 'rejected' }] },
  { prefix: 'tck-stream-001', steps: [working, artifact(() => [textPart('Stream hello from TCK')]), completed] },
  { prefix: 'tck-stream-002', steps: [completed] },
  { prefix: 'tck-stream-003', steps: [working, artifact(() => [textPart('Stream task lifecycle')]), completed] },
  {
    prefix: 'tck-task-failure',
    steps: [{ do: 'status', state: TaskState.TASK_STATE_FAILED, say: 'Task failed (tck-task-failure)' }],
  },
];

// Longest prefix first, so `tck-artifact-file-url` is never claimed by `tck-artifact-file`.
const BY_PREFIX = [...SCENARIOS].sort((a, b) => b.prefix.length - a.prefix.length);

interface TrackedTask {
  contextId: string;
  runs: Set<AbortController>;
}

/**
 * A deterministic AgentExecutor for the official A2A TCK (v1.0): the user message's `messageId`
 * prefix selects the behaviour of the reference SUT. For protocol conformance runs only.
 */
export class ConformanceAgentExecutor implements AgentExecutor {
  // Tasks with a run in flight or waiting for input: cancelTask needs their contextId and runs.
  private readonly tasks = new Map<string, TrackedTask>();

  constructor(private readonly options: { resubscribeHoldMs?: number } = {}) {}

  async execute(requestContext: RequestContext, eventBus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage, task } = requestContext;
    const scenario = this.scenarioFor(userMessage, task);
    if ('reply' in scenario) {
      eventBus.publish(AgentEvent.message(agentMessage(contextId, '', [textPart(scenario.reply)])));
      return;
    }

    const controller = new AbortController();
    const tracked = this.tasks.get(taskId) ?? { contextId, runs: new Set<AbortController>() };
    tracked.runs.add(controller);
    this.tasks.set(taskId, tracked);
    const turn = new Turn(taskId, contextId, eventBus, controller.signal);
    try {
      // The SDK requires a Task (or Message) as the first event of every call, follow-ups included.
      eventBus.publish(AgentEvent.task(task ?? submittedTask(taskId, contextId, userMessage)));
      for (const step of scenario.steps) {
        if (controller.signal.aborted) return;
        await turn.run(step, this.options.resubscribeHoldMs ?? RESUBSCRIBE_HOLD_MS);
      }
    } finally {
      tracked.runs.delete(controller);
      const waitingForInput = turn.lastState === TaskState.TASK_STATE_INPUT_REQUIRED;
      if (tracked.runs.size === 0 && !waitingForInput && this.tasks.get(taskId) === tracked) {
        this.tasks.delete(taskId);
      }
    }
  }

  /**
   * The server stops: every run still going ends where it is (a held turn stops holding), so that no
   * timer of ours outlives the application. Tasks keep the state they reached; nothing is published.
   */
  stop(): void {
    for (const tracked of this.tasks.values()) for (const run of tracked.runs) run.abort();
  }

  cancelTask(taskId: string, eventBus: ExecutionEventBus): Promise<void> {
    const tracked = this.tasks.get(taskId);
    this.tasks.delete(taskId);
    // Publish before aborting, so the canceled status is the last word on the bus.
    const contextId = tracked?.contextId ?? '';
    eventBus.publish(statusEvent(taskId, contextId, TaskState.TASK_STATE_CANCELED, [textPart('Task canceled.')]));
    for (const run of tracked?.runs ?? []) run.abort();
    return Promise.resolve();
  }

  private scenarioFor(userMessage: Message, task: Task | undefined): Scenario {
    // Follow-ups are routed by prefix like first messages, as the TCK's reference SUT does
    // (a `tck-input-required-*` follow-up asks for input again).
    const found = BY_PREFIX.find((s) => userMessage.messageId.startsWith(s.prefix));
    if (found) return found;
    // Any other follow-up to an input-required task supplies the input: acknowledge it and complete.
    if (task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      const say = `Received: ${textOf(userMessage)}`;
      return { prefix: '', steps: [{ do: 'status', state: TaskState.TASK_STATE_COMPLETED, say }] };
    }
    const say = `Echo: ${textOf(userMessage)} (no conformance scenario for messageId "${userMessage.messageId}")`;
    return { prefix: '', steps: [{ do: 'status', state: TaskState.TASK_STATE_COMPLETED, say }] };
  }
}

/** One execution of one scenario on one task. */
class Turn {
  lastState: TaskState | undefined;
  private readonly artifactIds = new Map<string, string>();

  constructor(
    private readonly taskId: string,
    private readonly contextId: string,
    private readonly bus: ExecutionEventBus,
    private readonly signal: AbortSignal,
  ) {}

  async run(step: Step, holdMs: number): Promise<void> {
    switch (step.do) {
      case 'status':
        this.lastState = step.state;
        this.bus.publish(
          statusEvent(
            this.taskId,
            this.contextId,
            step.state,
            step.say === undefined ? undefined : [textPart(step.say)],
          ),
        );
        return;
      case 'artifact':
        this.bus.publish(
          AgentEvent.artifactUpdate({
            taskId: this.taskId,
            contextId: this.contextId,
            artifact: {
              artifactId: this.artifactId(step.key),
              name: step.key,
              description: '',
              parts: step.parts(),
              metadata: undefined,
              extensions: [],
            },
            append: step.append ?? false,
            lastChunk: step.lastChunk ?? false,
            metadata: undefined,
          }),
        );
        return;
      case 'hold':
        await abortableDelay(holdMs, this.signal);
        return;
      default: {
        const unhandled: never = step;
        throw new Error(`Unknown conformance step ${JSON.stringify(unhandled)}`);
      }
    }
  }

  private artifactId(key: string): string {
    let id = this.artifactIds.get(key);
    if (!id) {
      id = randomUUID();
      this.artifactIds.set(key, id);
    }
    return id;
  }
}

function textOf(message: Message): string {
  return message.parts
    .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
    .filter((t) => t.length > 0)
    .join(' ');
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
