import { Inject, Injectable } from '@nestjs/common';
import {
  DefaultRequestHandler,
  type ExecutionEventBus,
  type PushNotificationStore,
  type RequestContext,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import type {
  CancelTaskRequest,
  ListTasksRequest,
  GetTaskPushNotificationConfigRequest,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { Message, Task, TaskState } from '@a2a-js/sdk';
import {
  A2AError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import { isFinishedState } from '../database/finished-task.cache.js';
import { statusEvent, textPart } from '../execution/agent-events.js';
import { endsAfter, followCommitted, type TaskRecording } from '../turn/task-recording.js';
import { StreamCursors } from './stream-cursors.js';
import type { Principal } from '../common/principal.js';
import { GuardedPushNotificationSender } from '../push/guarded-push-notification.sender.js';
import { ValidatingPushNotificationStore } from '../push/validating-push-notification.store.js';
import { TaskSubscriptions } from '../replica/task-subscriptions.js';
import { TurnStops } from '../replica/turn-stops.js';
import { SessionEventBuses } from '../turn/session-event-buses.js';
import { TurnTaskStore } from '../turn/turn-task.store.js';
import { SessionWorkflow } from '../turn/session.workflow.js';
import { MessageAdmissions } from '../turn/message-admissions.js';
import { AgentCardService } from './agent-card/agent-card.service.js';
import { CallFailures } from './call-failures.js';

/**
 * The steps of the SDK's DefaultRequestHandler (1.3.0, pinned) that its own methods are made of, and that
 * this handler's methods take as they are: the request context of a message, the executor run with its
 * failure published and its bus settled, and the checks and history trimming of its answers.
 */
interface SdkSteps {
  _createRequestContext(request: SendMessageRequest, context: ServerCallContext): Promise<RequestContext>;
  _runExecutor(taskId: string, bus: ExecutionEventBus, requestContext: RequestContext, message: Message): void;
  _runStreamExecutor(taskId: string, bus: ExecutionEventBus, requestContext: RequestContext): void;
  _applyHistoryLengthSemantics(task: Task, config: { historyLength?: number }): void;
  _requireValidTaskId(taskId: string): void;
}

/** A message's run, about to start: its task's bus and recording, and where its events begin there. */
interface StartedRun {
  taskId: string;
  requestContext: RequestContext;
  bus: ExecutionEventBus;
  recording: TaskRecording;
  from: number | undefined;
}

/** The status a CancelTask of a task at rest stores, as the SDK words it. */
function canceledEvent(task: Task) {
  return statusEvent(task.id, task.contextId, TaskState.TASK_STATE_CANCELED, [
    textPart('Task cancellation requested by user.'),
  ]);
}

/**
 * The SDK's DefaultRequestHandler with seven changes (docs/architecture.md, "The request handler"): messages
 * admitted first, every call following the task's recording, and cancel and subscribe across replicas.
 */
@Injectable()
export class SpecRequestHandler extends DefaultRequestHandler {
  // Eleven: the first six are what the SDK's own constructor takes; the core's are the five after them.
  constructor(
    cards: AgentCardService,
    private readonly store: TurnTaskStore,
    private readonly workflow: SessionWorkflow,
    private readonly buses: SessionEventBuses,
    @Inject(ValidatingPushNotificationStore) private readonly pushStore: PushNotificationStore,
    pushSender: GuardedPushNotificationSender,
    private readonly stops: TurnStops,
    private readonly subscriptions: TaskSubscriptions,
    private readonly admissions: MessageAdmissions,
    private readonly failures: CallFailures,
    private readonly cursors: StreamCursors,
  ) {
    super(cards.sdkCard(), store, workflow, buses, pushStore, pushSender, (context) =>
      cards.extendedCard(context.user as Principal),
    );
  }

  /** The SDK's own steps (SdkSteps), typed. */
  private get sdk(): SdkSteps {
    return this as unknown as SdkSteps;
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    try {
      return await this.sendAndWait(await this.admit(params, context), context);
    } catch (err) {
      this.keepFailure(context, err);
      throw err;
    }
  }

  /**
   * SendMessage as the SDK runs it, its answer read from the task's recording (TaskRecording): a blocking
   * call is answered once the task rests (final, input-required or auth-required) or the executor answered
   * with a Message, with the task as committed; `returnImmediately` once the first event is committed.
   */
  private async sendAndWait(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    if (!params.message?.messageId) throw new RequestMalformedError('message.messageId is required.');
    const blocking = params.configuration?.returnImmediately !== true;
    const run = await this.startRun(params, context);
    this.sdk._runExecutor(run.taskId, run.bus, run.requestContext, run.requestContext.userMessage);
    let message: Message | undefined;
    for await (const event of followCommitted(run.recording, run.from)) {
      const payload = event.response.payload;
      if (payload?.$case === 'message') {
        message = payload.value;
        break;
      }
      if (!blocking || endsAfter(event.response)) break;
      const state = payload?.$case === 'statusUpdate' ? payload.value.status?.state : undefined;
      if (state === TaskState.TASK_STATE_AUTH_REQUIRED) break;
    }
    if (message) return message;
    const task = run.recording.task;
    if (!task) throw new A2AError('Agent execution finished without a result, and no task context found.');
    this.sdk._applyHistoryLengthSemantics(task, params.configuration ?? {});
    return task;
  }

  override async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    let run: StartedRun;
    try {
      const admitted = await this.admit(params, context);
      const card = await this.getAgentCard();
      if (!card.capabilities?.streaming) throw new UnsupportedOperationError('Streaming is not supported.');
      if (!admitted.message?.messageId) {
        throw new RequestMalformedError('message.messageId is required for streaming.');
      }
      run = await this.startRun(admitted, context);
    } catch (err) {
      this.keepFailure(context, err);
      throw err;
    }
    this.sdk._runStreamExecutor(run.taskId, run.bus, run.requestContext);
    // Each event is sent once committed, with its sequence number: the stream is a prefix of the task's log.
    const configuration: { historyLength?: number } = params.configuration ?? {};
    for await (const event of followCommitted(run.recording, run.from)) {
      const payload = event.response.payload;
      if (payload?.$case !== 'task' || configuration.historyLength === undefined) {
        yield event.response;
        continue;
      }
      // Every follower shares the recorded event: its history is trimmed on a copy.
      const task = structuredClone(payload.value);
      this.sdk._applyHistoryLengthSemantics(task, configuration);
      yield { payload: { $case: 'task', value: task } };
    }
  }

  /**
   * The steps the SDK takes before it runs the executor for a message: the request context (a message to a
   * task appends itself to the task's history), a push config the request carries, the task's bus and so its
   * recording, which is told the message. `from` is where the call's events begin in the recording.
   */
  private async startRun(params: SendMessageRequest, context: ServerCallContext): Promise<StartedRun> {
    const requestContext = await this.sdk._createRequestContext(params, context);
    const taskId = requestContext.taskId;
    const card = await this.getAgentCard();
    const pushConfig = params.configuration?.taskPushNotificationConfig;
    if (pushConfig && card.capabilities?.pushNotifications) {
      await this.pushStore.save(taskId, context, { ...structuredClone(pushConfig), taskId });
    }
    const bus = this.buses.createOrGetByTaskId(taskId, context);
    const recording = this.buses.recordingOf(this.scopeOf(context), taskId);
    if (!recording) throw new Error(`task ${taskId} has a bus without its recording`);
    // What an earlier call published is committed first: this call's events are the ones after it.
    await recording.settled();
    recording.expect(requestContext.userMessage);
    return { taskId, requestContext, bus, recording, from: recording.position };
  }

  /**
   * The message as admitted: a message that starts a task carries its session's id. v1.0 and v0.3 calls
   * both arrive here as v1.0 requests; the admission reads the message as v1.0 JSON, as it came.
   */
  private async admit(params: SendMessageRequest, context: ServerCallContext): Promise<SendMessageRequest> {
    const message = params.message;
    if (!message) return params;
    const contextId = await this.admissions.admit(
      this.scopeOf(context),
      Message.toJSON(message) as Record<string, unknown>,
      context,
    );
    return contextId === undefined || contextId === message.contextId
      ? params
      : { ...params, message: { ...message, contextId } };
  }

  /**
   * The SDK answers its own errors well, save that its v0.3 layer drops their ErrorInfo metadata (a push
   * config refusal's `field` and `setting`): those, and any other error, are kept so that code and
   * details survive, the same on both versions.
   */
  private keepFailure(context: ServerCallContext, err: unknown): void {
    if (!(err instanceof A2AError) || err.metadata !== undefined) this.failures.keep(context, err);
  }

  override resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const after = this.cursors.take(context);
    // A call the SDK would refuse (no id) gets the SDK's answer.
    if (!params.id) return super.resubscribe(params, context);
    return this.subscribe(context, params.id, after);
  }

  /** SubscribeToTask of a task here, elsewhere, or from `lastSequence` on (TaskSubscriptions). */
  private async *subscribe(
    context: ServerCallContext,
    taskId: string,
    after: number | undefined,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const card = await this.getAgentCard();
    if (!card.capabilities?.streaming) {
      throw new UnsupportedOperationError('Streaming (and thus resubscription) is not supported.');
    }
    const scope = this.scopeOf(context);
    if (after !== undefined) return yield* this.subscriptions.resume(scope, taskId, after);
    const recording = this.buses.recordingOf(scope, taskId);
    if (recording) return yield* this.subscriptions.here(recording, taskId);
    this.sdk._requireValidTaskId(taskId);
    yield* this.subscriptions.elsewhere(scope, taskId);
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    this.sdk._requireValidTaskId(params.id);
    const task = await this.store.load(params.id, context);
    if (!task) throw new TaskNotFoundError(`Task not found: ${params.id}`);
    const state = task.status?.state;
    if (state !== undefined && isFinishedState(state)) {
      // Already canceled, too (A2A v1.0 §3.1.5; the SDK would answer the task).
      throw new TaskNotCancelableError(`Task not cancelable: ${params.id}`);
    }
    const scope = this.scopeOf(context);
    const bus = this.buses.getByTaskId(task.id, context);
    const recording = this.buses.recordingOf(scope, task.id);
    if (bus && recording) {
      await recording.settled();
      const from = recording.position;
      await this.workflow.cancelTask(task.id, bus);
      for await (const event of followCommitted(recording, from)) if (endsAfter(event.response)) break;
      return this.canceledOrRefused(params.id, context);
    }
    // Running on another replica: asked there, answered once the task rested there (TurnStops).
    if (await this.stops.cancelElsewhere(scope, task.id)) return this.canceledOrRefused(params.id, context);
    // No turn of it anywhere: canceled as it stands, stored through its recording (its log holds the event),
    // and what the executor does for a canceled task is done here.
    await this.buses.publishAtRest(scope, task, canceledEvent(task));
    await this.workflow.canceledAtRest(scope, task);
    return this.canceledOrRefused(params.id, context);
  }

  private async canceledOrRefused(taskId: string, context: ServerCallContext): Promise<Task> {
    const latest = await this.store.load(taskId, context);
    if (!latest) throw new A2AError(`Task ${taskId} not found after cancellation.`);
    if (latest.status?.state !== TaskState.TASK_STATE_CANCELED) {
      throw new TaskNotCancelableError(`Task not cancelable: ${taskId}`);
    }
    return latest;
  }

  override async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    try {
      return await super.createTaskPushNotificationConfig(params, context);
    } catch (err) {
      this.keepFailure(context, err);
      throw err;
    }
  }

  override async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    // Only v0.3 can leave the id out (v1.0 requires it): the SDK's compat layer then asks for id ''.
    if (params.id === '' && params.taskId) {
      const { configs } = await this.listTaskPushNotificationConfigs(
        { tenant: params.tenant, taskId: params.taskId, pageSize: 0, pageToken: '' },
        context,
      );
      // None: the SDK's own answer, naming the task.
      if (configs.length > 0) return configs[0];
    }
    return super.getTaskPushNotificationConfig(params, context);
  }

  /**
   * ListTasks as listTasks answers it, given as the text of its JSON-RPC result: each task is its stored
   * wire JSON, parsed and serialised by nobody (TypeOrmTaskStore.listText). The checks are the SDK's own.
   * History comes whole, so a call with `historyLength` takes listTasks.
   */
  async listTasksText(params: ListTasksRequest, context: ServerCallContext): Promise<string> {
    if (params.historyLength !== undefined) {
      throw new Error('listTasksText gives whole histories; a historyLength call takes listTasks');
    }
    if (params.status === TaskState.UNRECOGNIZED) {
      throw new RequestMalformedError(`Invalid status filter: ${String(params.status)}`);
    }
    if (params.statusTimestampAfter && isNaN(Date.parse(params.statusTimestampAfter))) {
      throw new RequestMalformedError('statusTimestampAfter must be a valid ISO 8601 date string');
    }
    const page = await this.store.listText(params, context);
    return (
      `{"tasks":[${page.tasks.join(',')}],"nextPageToken":${JSON.stringify(page.nextPageToken)},` +
      `"pageSize":${page.pageSize},"totalSize":${page.totalSize}}`
    );
  }

  private scopeOf(context: ServerCallContext) {
    return this.buses.scopeOf(context);
  }
}
