import { Injectable } from '@nestjs/common';
import { DefaultRequestHandler, type ServerCallContext } from '@a2a-js/sdk/server';
import type {
  CancelTaskRequest,
  ListTasksRequest,
  GetTaskPushNotificationConfigRequest,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { Message, TaskState } from '@a2a-js/sdk';
import { A2AError, RequestMalformedError, TaskNotCancelableError } from '@a2a-js/sdk/errors';
import type { Principal } from '../common/principal.js';
import { AppConfig } from '../config/app.config.js';
import { resolveStoreScope } from '../database/store-scope.js';
import { TypeOrmTaskStore } from '../database/typeorm-task.store.js';
import { GuardedPushNotificationSender } from '../push/guarded-push-notification.sender.js';
import { ValidatingPushNotificationStore } from '../push/validating-push-notification.store.js';
import { RemoteTaskEvents } from '../replica/remote-task-events.js';
import { RemoteTurnControls } from '../replica/remote-turn-controls.js';
import { SessionEventBuses } from '../turn/session-event-buses.js';
import { SessionWorkflow } from '../turn/session.workflow.js';
import { MessageAdmissions } from '../turn/message-admissions.js';
import { AgentCardService } from './agent-card/agent-card.service.js';
import { CallFailures } from './call-failures.js';
import { afterCommit } from './after-commit.js';

/** How long a CancelTask relayed to another replica waits for the task to show `canceled`. */
const REMOTE_CANCEL_WAIT_MS = 15_000;

/**
 * The SDK's DefaultRequestHandler, with six changes:
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
 * It also answers a ListTasks page as JSON text (listTasksText), for the invoker to write as it is, and
 * lets a blocking SendMessage's save of its task just submitted wait for the next (TypeOrmTaskStore.deferSaves)
 * and a stream's saves go behind its events (writeBehind), each event sent after its commit (afterCommit).
 */
@Injectable()
export class SpecRequestHandler extends DefaultRequestHandler {
  constructor(
    cards: AgentCardService,
    private readonly store: TypeOrmTaskStore,
    private readonly workflow: SessionWorkflow,
    private readonly buses: SessionEventBuses,
    pushStore: ValidatingPushNotificationStore,
    pushSender: GuardedPushNotificationSender,
    private readonly turnControls: RemoteTurnControls,
    private readonly remoteEvents: RemoteTaskEvents,
    private readonly config: AppConfig,
    private readonly admissions: MessageAdmissions,
    private readonly failures: CallFailures,
  ) {
    super(cards.sdkCard(), store, workflow, buses, pushStore, pushSender, (context) =>
      cards.extendedCard(context.user as Principal),
    );
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    // A blocking call is answered once its task rests or its run ends: its task's submitted state is
    // nobody's to see, and its save may give way to the next (TypeOrmTaskStore.deferSaves).
    const blocking = params.configuration?.returnImmediately !== true;
    let answer: Message | Task;
    try {
      const admitted = await this.admit(params, context);
      if (blocking) {
        const newTask = !admitted.message?.taskId;
        this.store.deferSaves(context, newTask && !admitted.configuration?.taskPushNotificationConfig);
      }
      answer = await super.sendMessage(admitted, context);
    } catch (err) {
      this.keepFailure(context, err);
      // What the run stored before it failed is kept, as it would be without deferred saves.
      if (blocking) await this.store.flushSaves(context).catch(() => undefined);
      throw err;
    }
    // The answer follows the commit of every state it shows.
    if (blocking) await this.store.flushSaves(context);
    return answer;
  }

  override async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    let admitted: SendMessageRequest;
    try {
      admitted = await this.admit(params, context);
    } catch (err) {
      this.keepFailure(context, err);
      throw err;
    }
    // The run's events are stored as they come, without waiting for a commit each; each is sent once its
    // save has committed, and those that came during one commit share the next (TypeOrmTaskStore.writeBehind).
    this.store.writeBehind(context);
    yield* afterCommit(super.sendMessageStream(admitted, context), () => this.store.flushSaves(context));
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
    // A task with a bus here is the SDK's alone: its generator, with no layer of ours held per stream.
    // A call the SDK would refuse (no id) gets the SDK's answer.
    const taskId = params.id;
    if (!taskId || this.buses.getByTaskId(taskId, context) !== undefined) return super.resubscribe(params, context);
    return this.resubscribeElsewhere(params, context, taskId);
  }

  private async *resubscribeElsewhere(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
    taskId: string,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    // As the SDK attaches its queue to a local bus before it reads the task, the relay is attached (the
    // running replica acknowledged it) before the SDK reads the task here: no event falls in between.
    // A call the SDK would refuse (an id the database cannot hold) gets the SDK's answer.
    const relay = await this.remoteEvents
      .open(this.scopeOf(context), taskId, () => this.store.load(taskId, context))
      .catch(() => undefined);
    if (!relay) {
      yield* super.resubscribe(params, context);
      return;
    }
    try {
      // With no bus here, the SDK checks the call, yields the task as stored and ends (a final task: an error).
      yield* super.resubscribe(params, context);
      yield* relay.events();
    } finally {
      relay.close();
    }
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const task = params.id ? await this.store.load(params.id, context) : undefined;
    if (task?.status?.state === TaskState.TASK_STATE_CANCELED) {
      throw new TaskNotCancelableError(`Task not cancelable: ${params.id}`);
    }
    const atRest = task !== undefined && this.buses.getByTaskId(task.id, context) === undefined;
    const elsewhere = atRest && (await this.turnControls.requestElsewhere(this.scopeOf(context), task.id, 'cancel'));
    if (elsewhere) {
      const deadline = Date.now() + REMOTE_CANCEL_WAIT_MS;
      while (Date.now() < deadline) {
        const now = await this.store.load(task.id, context);
        const state = now?.status?.state;
        if (state === TaskState.TASK_STATE_CANCELED) return now!;
        // It ended otherwise, or waits for input there: the SDK answers as for any such task.
        if (state !== TaskState.TASK_STATE_WORKING && state !== TaskState.TASK_STATE_SUBMITTED) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    const canceled = await super.cancelTask(params, context);
    // With no bus here the SDK stored `canceled` without the executor (a task waiting for its client
    // after a restart, or one another replica watched): what the executor does for it is done here.
    if (atRest && !elsewhere && canceled.status?.state === TaskState.TASK_STATE_CANCELED) {
      await this.workflow.canceledAtRest(this.scopeOf(context), task);
    }
    return canceled;
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
