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
import {
  DatabaseUnavailableError,
  EventsExpiredError,
  TaskHandoverPendingError,
  ValidationError,
} from '../common/domain.errors.js';
import { LAST_SEQUENCE_PARAM, SEQUENCE_KEY } from '@cleveragents/contract';
import { isTransientDatabaseError } from '../database/database-retry.js';
import { isFinishedState } from '../database/finished-task.cache.js';
import { TaskEventLog, type TaskRef } from '../database/task-event-log.js';
import { statusEvent, textPart } from '../execution/agent-events.js';
import {
  endsAfter,
  endsStream,
  recordedOf,
  TakenOverError,
  withSequence,
  type RecordedEvent,
  type TaskRecording,
} from '../turn/task-recording.js';
import { StreamCursors } from './stream-cursors.js';
import type { Principal } from '../common/principal.js';
import { AppConfig } from '../config/app.config.js';
import { resolveStoreScope } from '../database/store-scope.js';
import { TypeOrmTaskStore } from '../database/typeorm-task.store.js';
import { GuardedPushNotificationSender } from '../push/guarded-push-notification.sender.js';
import { ValidatingPushNotificationStore } from '../push/validating-push-notification.store.js';
import { RemoteTaskEvents } from '../replica/remote-task-events.js';
import type { TaskEventRelay } from '../replica/event-relay.js';
import { RemoteTurnControls } from '../replica/remote-turn-controls.js';
import { SessionEventBuses } from '../turn/session-event-buses.js';
import { SessionWorkflow } from '../turn/session.workflow.js';
import { MessageAdmissions } from '../turn/message-admissions.js';
import { AgentCardService } from './agent-card/agent-card.service.js';
import { CallFailures } from './call-failures.js';

/** How long a CancelTask relayed to another replica waits for the task to show `canceled`. */
const REMOTE_CANCEL_WAIT_MS = 15_000;

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

/** The sequence number a stream event carries (docs/protocol.md §10.1), if any. */
function sequenceOf(response: StreamResponse): number | undefined {
  const seq: unknown = response.payload?.value.metadata?.[SEQUENCE_KEY];
  return typeof seq === 'number' ? seq : undefined;
}

/** The status a CancelTask of a task at rest stores, as the SDK words it. */
function canceledEvent(task: Task) {
  return statusEvent(task.id, task.contextId, TaskState.TASK_STATE_CANCELED, [
    textPart('Task cancellation requested by user.'),
  ]);
}

/**
 * The SDK's DefaultRequestHandler, with seven changes:
 * - a task's events are stored by the recording of its bus (TaskRecording, one per task, whether or not anyone
 *   listens), in order and numbered: SendMessage, SendStreamingMessage, CancelTask and SubscribeToTask follow
 *   that recording instead of the SDK's per-call ResultManager, so what any call is shown is a prefix of the
 *   task's log; SubscribeToTask with `lastSequence` resumes from the log (docs/protocol.md §10.1);
 * - every message is admitted before the SDK makes or continues a task (MessageAdmissions): one that
 *   starts a task goes to its session, new (whose id the message then carries) or named, and a closed
 *   session refuses it; one that answers a waiting task is checked against what the task waits for. A
 *   refusal is kept in CallFailures for the invoker to answer with its own code;
 * - the one place where SDK 1.3.0 departs from the A2A spec put back: cancelling a task that is already
 *   canceled answers TaskNotCancelable (-32002), as A2A v1.0 §3.1.5 says ("already completed, failed, or
 *   canceled") and the TCK checks; the SDK returns the task;
 * - a CancelTask for a task running on another replica (no bus here) is relayed to that replica, which
 *   stops the run; the SDK alone would mark the task canceled here while it ran on there (docs/protocol.md §10);
 * - a SubscribeToTask for a task running on another replica gets that replica's live events, relayed,
 *   after the task as stored; the SDK alone would answer the task and end the stream (docs/protocol.md §10);
 * - a v0.3 `tasks/pushNotificationConfig/get` may omit the config id: it gets the task's first config;
 * - an A2A error with ErrorInfo metadata (a push config refused) is kept in CallFailures, as other
 *   refusals are: the SDK's v0.3 layer would answer it without them.
 * It also answers a ListTasks page as JSON text (listTasksText), for the invoker to write as it is.
 */
@Injectable()
export class SpecRequestHandler extends DefaultRequestHandler {
  constructor(
    cards: AgentCardService,
    private readonly store: TypeOrmTaskStore,
    private readonly workflow: SessionWorkflow,
    private readonly buses: SessionEventBuses,
    @Inject(ValidatingPushNotificationStore) private readonly pushStore: PushNotificationStore,
    pushSender: GuardedPushNotificationSender,
    private readonly turnControls: RemoteTurnControls,
    private readonly remoteEvents: RemoteTaskEvents,
    private readonly config: AppConfig,
    private readonly admissions: MessageAdmissions,
    private readonly failures: CallFailures,
    private readonly log: TaskEventLog,
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
    for await (const event of this.followed(run.recording, run.from)) {
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
    for await (const event of this.followed(run.recording, run.from)) {
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
   * A recording's events after `from`, its loss told as the retryable error a client resumes after: the
   * database away past the turn's wait, or the task taken over by another replica.
   */
  private async *followed(
    recording: TaskRecording,
    from: number | undefined,
  ): AsyncGenerator<RecordedEvent, void, undefined> {
    try {
      yield* recording.follow(from);
    } catch (err) {
      if (err instanceof TakenOverError) throw new TaskHandoverPendingError(recording.ref.id, 0);
      if (isTransientDatabaseError(err)) throw new DatabaseUnavailableError(err);
      throw err;
    }
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
    const taskId = params.id;
    if (!taskId) return super.resubscribe(params, context);
    if (after !== undefined) return this.resume(context, taskId, after);
    const recording = this.buses.recordingOf(this.scopeOf(context), taskId);
    if (recording) return this.subscribeHere(params, recording);
    return this.resubscribeElsewhere(params, context, taskId);
  }

  /**
   * SubscribeToTask of a task whose recording is here: the task as last committed, carrying the number of
   * the last event it includes, then the events after it. A task that has ended gets the SDK's answer.
   */
  private async *subscribeHere(
    params: SubscribeToTaskRequest,
    recording: TaskRecording,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    await this.checkStreaming();
    await recording.settled();
    const held = recording.task;
    const at = recording.position;
    const { task, last } =
      held && at !== undefined ? { task: held, last: at } : await this.storedSnapshot(recording.ref, params.id);
    this.refuseFinished(task);
    yield withSequence({ payload: { $case: 'task', value: task } }, last);
    for await (const event of this.followed(recording, last)) yield event.response;
  }

  /** The task as stored with the number of the last event it includes: what a subscription starts with. */
  private async storedSnapshot(ref: TaskRef, id: string): Promise<{ task: Task; last: number }> {
    const stored = await this.log.snapshot(ref);
    if (!stored) throw new TaskNotFoundError(`Task not found: ${id}`);
    return { task: Task.fromJSON(stored.task), last: stored.last };
  }

  /** A subscription without `lastSequence` to a task that ended is refused, as the SDK does. */
  private refuseFinished(task: Task): void {
    if (isFinishedState(task.status?.state)) {
      throw new UnsupportedOperationError(
        `Task ${task.id} is in a terminal state (${task.status?.state}) and cannot be subscribed to.`,
      );
    }
  }

  /**
   * SubscribeToTask with `lastSequence` (or `Last-Event-ID`): the stored events after it, then the live ones,
   * each once, no snapshot (docs/protocol.md §10.1). A task that rests and whose last event the client saw
   * ends at once; events no longer stored are refused with EVENTS_EXPIRED, never skipped.
   */
  private async *resume(
    context: ServerCallContext,
    taskId: string,
    after: number,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    await this.checkStreaming();
    const scope = this.scopeOf(context);
    const ref = { namespace: scope.namespace, owner: scope.owner, id: taskId };
    const bounds = await this.log.bounds(ref);
    if (!bounds) throw new TaskNotFoundError(`Task not found: ${taskId}`);
    if (after > bounds.last) {
      throw new ValidationError([
        {
          field: LAST_SEQUENCE_PARAM,
          description: `is past the last event of task ${taskId} (${bounds.last})`,
        },
      ]);
    }
    if (after < bounds.last && (bounds.oldest === undefined || bounds.oldest > after + 1)) {
      throw new EventsExpiredError(taskId, after, bounds.oldest ?? bounds.last + 1);
    }
    let seen = after;
    // The stored events first, page by page, until the log is read to its end as it stood.
    while (seen < bounds.last) {
      const page = await this.log.after(ref, seen);
      if (page.length === 0) break;
      for (const stored of page) {
        const event = recordedOf(stored);
        yield event.response;
        seen = stored.seq;
        if (endsAfter(event.response)) return;
      }
    }
    const recording = this.buses.recordingOf(scope, taskId);
    if (recording) {
      for await (const event of this.followed(recording, seen)) yield event.response;
      return;
    }
    // Not running here: as stored, then (on another replica) relayed, each event once.
    const task = await this.store.load(taskId, context);
    if (!task || endsStream(task.status?.state)) {
      yield* this.storedAfter(ref, seen);
      return;
    }
    const relay = await this.remoteEvents
      .open(scope, taskId, () => this.store.load(taskId, context))
      .catch(() => undefined);
    if (!relay) {
      yield* this.storedAfter(ref, seen);
      return;
    }
    yield* this.relayed(ref, relay, seen);
  }

  /**
   * The events of a task another replica runs, after `after`: first what the log holds, then the relayed
   * events, each once and in order. A relayed event beyond the next number has the ones between filled from
   * the log; a relay's own snapshot or end (its holder changed, or the task ended) is replaced by what the log
   * holds, so every event sent carries its number.
   */
  private async *relayed(
    ref: TaskRef,
    relay: TaskEventRelay,
    after: number,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    let seen = after;
    const mark = (seq: number): void => {
      seen = seq;
    };
    try {
      if (yield* this.storedAfter(ref, seen, mark)) return;
      for await (const response of relay.events()) {
        const seq = sequenceOf(response);
        if (seq === undefined) {
          if ((yield* this.storedAfter(ref, seen, mark)) || endsAfter(response)) return;
          continue;
        }
        if (seq <= seen) continue;
        if (seq > seen + 1 && (yield* this.storedAfter(ref, seen, mark, seq - 1))) return;
        seen = seq;
        yield response;
        if (endsAfter(response)) return;
      }
    } finally {
      relay.close();
    }
  }

  /**
   * The stored events of `ref` after `after` (up to `until`), each as a stream sends it, each number told to
   * `seen`. True when one of them ends the stream.
   */
  private async *storedAfter(
    ref: TaskRef,
    after: number,
    seen?: (seq: number) => void,
    until = Number.MAX_SAFE_INTEGER,
  ): AsyncGenerator<StreamResponse, boolean, undefined> {
    let last = after;
    for (;;) {
      const page = (await this.log.after(ref, last)).filter((stored) => stored.seq <= until);
      if (page.length === 0) return false;
      for (const stored of page) {
        const event = recordedOf(stored);
        yield event.response;
        last = stored.seq;
        seen?.(last);
        if (endsAfter(event.response)) return true;
      }
    }
  }

  private async checkStreaming(): Promise<void> {
    const card = await this.getAgentCard();
    if (!card.capabilities?.streaming) {
      throw new UnsupportedOperationError('Streaming (and thus resubscription) is not supported.');
    }
  }

  private async *resubscribeElsewhere(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
    taskId: string,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    await this.checkStreaming();
    this.sdk._requireValidTaskId(taskId);
    const scope = this.scopeOf(context);
    const ref = { namespace: scope.namespace, owner: scope.owner, id: taskId };
    // As the SDK attaches its queue to a local bus before it reads the task, the relay is attached (the
    // running replica acknowledged it) before the task is read here; what falls between is in the log.
    const relay = await this.remoteEvents
      .open(scope, taskId, () => this.store.load(taskId, context))
      .catch(() => undefined);
    try {
      const { task, last } = await this.storedSnapshot(ref, params.id);
      this.refuseFinished(task);
      yield withSequence({ payload: { $case: 'task', value: task } }, last);
      if (relay) yield* this.relayed(ref, relay, last);
    } finally {
      relay?.close();
    }
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
      for await (const event of this.followed(recording, from)) if (endsAfter(event.response)) break;
      return this.canceledOrRefused(params.id, context);
    }
    const elsewhere = await this.turnControls.requestElsewhere(scope, task.id, 'cancel');
    if (elsewhere) {
      const deadline = Date.now() + REMOTE_CANCEL_WAIT_MS;
      while (Date.now() < deadline) {
        const now = await this.store.load(task.id, context);
        const at = now?.status?.state;
        if (at === TaskState.TASK_STATE_CANCELED) return now!;
        // It ended otherwise, or waits for input there: as for any such task.
        if (at !== TaskState.TASK_STATE_WORKING && at !== TaskState.TASK_STATE_SUBMITTED) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return this.canceledOrRefused(params.id, context);
    }
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
    return resolveStoreScope(context, this.config.defaultNamespace);
  }
}
