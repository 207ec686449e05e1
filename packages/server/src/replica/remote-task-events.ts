import { randomUUID } from 'node:crypto';
import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Subscription } from 'rxjs';
import { AppConfig } from '../config/app.config.js';
import { isFinishedState } from '../database/finished-task.cache.js';
import { ownerCallContext } from '../database/store-scope.js';
import { TypeOrmTaskStore } from '../database/typeorm-task.store.js';
import { DatabaseNotifications, type ChannelSubscription } from '../database/database-notifications.js';
import { endsAfter } from '../turn/task-recording.js';
import { encode, Inbox, noticeOf, type EventNotice } from './event-inbox.js';
import { ACK_WAIT_MS, Relay, type Attachment, type TaskEventRelay } from './event-relay.js';
import { RemoteTurnControls, type WatchRequest } from './remote-turn-controls.js';
import { SessionEventBuses } from '../turn/session-event-buses.js';
import type { SessionScope } from '../session/session.service.js';
import { TaskRuns } from '../turn/task-runs.js';

/** The channel on which the replica running a task forwards its live events to replicas watching it. */
export const TASK_EVENTS_CHANNEL = 'cleveragents_task_events';

/**
 * Characters of base64 per notification: with its envelope a piece stays well under PostgreSQL's
 * 8000-byte NOTIFY payload limit, whatever the event holds (base64 is ASCII: a character is a byte).
 */
const PIECE_CHARS = 6000;

/**
 * SubscribeToTask across replicas (docs/protocol.md §10). A replica serving a subscription to a task that runs
 * on another replica asks the holder of its lease, on the turn-control channel, to `watch` it; the
 * holder follows the task's bus and forwards each event, serialised with the SDK's codec and cut into
 * numbered pieces, on `cleveragents_task_events`, from its one listening connection (so in order),
 * until a final or input-required status, the bus closing (an `end`), or `unwatch`.
 */
@Injectable()
export class RemoteTaskEvents implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RemoteTaskEvents.name);
  private subscription: ChannelSubscription | undefined;
  /** What this replica hears on the turn-control channel: watch requests, tasks taken up elsewhere. */
  private readonly heardControls: Subscription[] = [];
  /** Subscriptions of this replica waiting for relayed events, by id. */
  private readonly inboxes = new Map<string, Inbox>();
  /** Watches this replica serves (watcher and subscription): what stops each. */
  private readonly watches = new Map<string, () => void>();
  private following = 0;
  /** The notifications being sent, in order. */
  private outbox: Promise<void> = Promise.resolve();

  constructor(
    private readonly notifications: DatabaseNotifications,
    private readonly turnControls: RemoteTurnControls,
    private readonly buses: SessionEventBuses,
    private readonly runs: TaskRuns,
    private readonly config: AppConfig,
    private readonly tasks: TypeOrmTaskStore,
  ) {}

  /** Opened while the other modules start; the application starts once it listens (onApplicationBootstrap). */
  private listening: Promise<ChannelSubscription> | undefined;

  onModuleInit(): void {
    // The embedded database serves one process: every task runs here, and its bus is local.
    if (!this.notifications.deliveredAtCommit) this.listening = this.listen();
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.notifications.deliveredAtCommit) return;
    this.heardControls.push(
      this.turnControls.watchRequests.subscribe((request) => this.watchRequested(request)),
      this.turnControls.takenUpElsewhere.subscribe(({ scope, taskId }) => void this.followTakenUp(scope, taskId)),
    );
    this.subscription = await (this.listening ??= this.listen());
  }

  private listen(): Promise<ChannelSubscription> {
    return this.notifications.listen(TASK_EVENTS_CHANNEL, {
      notify: (payload) => this.heard(payload),
      reset: (live) => {
        // Pieces may have been missed: every relay here re-checks where its task stands.
        if (!live) for (const inbox of this.inboxes.values()) inbox.push({ type: 'lost' });
      },
    });
  }

  async onApplicationShutdown(): Promise<void> {
    for (const heard of this.heardControls) heard.unsubscribe();
    for (const stop of this.watches.values()) stop();
    this.watches.clear();
    await this.subscription?.close();
  }

  /** How many watches of other replicas' subscriptions this replica serves (diagnostics, tests). */
  get watching(): number {
    return this.watches.size;
  }

  /**
   * Relays the live events of `taskId`, running on another live replica, once that replica attached
   * them; of a run left by a replica that died, once another takes it over. Undefined when the task has
   * no running run, or this replica runs it.
   */
  async open(
    scope: SessionScope,
    taskId: string,
    load: () => Promise<Task | undefined>,
  ): Promise<TaskEventRelay | undefined> {
    if (!this.subscription) return undefined;
    const holder = await this.runs.holderOf(scope, taskId);
    if (holder === this.runs.replica) return undefined;
    const first = holder ? await this.attach(scope, taskId, holder) : undefined;
    // No live holder that answers, but a run left running (its replica died): wait for its take-over.
    if (!first && !(await this.runs.isRunning(scope, taskId))) return undefined;
    return new Relay(taskId, first, this.config.taskLeaseSeconds * 1000, {
      load,
      holder: () => this.runs.holderOf(scope, taskId),
      attach: (holder) => this.attach(scope, taskId, holder),
    });
  }

  /** Asks `holder` to watch the task for a new subscription here; the subscription once acknowledged. */
  private async attach(scope: SessionScope, taskId: string, holder: string): Promise<Attachment | undefined> {
    const sub = randomUUID();
    const inbox = new Inbox();
    this.inboxes.set(sub, inbox);
    const request = (action: 'watch' | 'unwatch'): WatchRequest => ({
      namespace: scope.namespace,
      owner: scope.owner,
      taskId,
      action,
      watcher: this.runs.replica,
      subscription: sub,
    });
    let detached = false;
    const detach = (): void => {
      if (detached) return;
      detached = true;
      this.inboxes.delete(sub);
      this.turnControls.requestWatch(holder, request('unwatch')).catch(() => undefined);
    };
    const sent = await this.turnControls.requestWatch(holder, request('watch')).catch(() => false);
    if (!sent) {
      this.inboxes.delete(sub);
      return undefined;
    }
    const answer = await inbox.next(ACK_WAIT_MS);
    if (answer?.type !== 'ack') {
      detach();
      return undefined;
    }
    return { holder, inbox, detach };
  }

  /**
   * Another replica took up a task that waited for input here (an answer or `plan/resume` reached it):
   * the subscribers of the task's bus here get that turn's events, relayed, and the bus is closed when
   * the task ends (kept when it waits for input again).
   */
  private async followTakenUp(scope: SessionScope, taskId: string): Promise<void> {
    const recording = this.buses.recordingOf(scope, taskId);
    if (!recording || !this.buses.busOf(scope, taskId)) return;
    try {
      const context = ownerCallContext(scope);
      const load = () => this.tasks.load(taskId, context);
      const relay = await this.open(scope, taskId, load);
      if (!relay) {
        // Not taken up by a turn but ended there (canceled as it stood): its last events, as stored.
        const task = await load();
        if (task && isFinishedState(task.status?.state)) {
          await recording.catchUp();
          this.buses.finish(scope, taskId);
        }
        return;
      }
      this.following += 1;
      let last: TaskState | undefined;
      try {
        // The other replica stored these events: the subscribers here are shown them, nothing is stored again.
        for await (const response of relay.events()) {
          const payload = response.payload;
          if (payload?.$case === 'statusUpdate') last = payload.value.status?.state;
          await recording.mirror(response);
        }
      } finally {
        this.following -= 1;
      }
      if (last !== undefined && last !== TaskState.TASK_STATE_INPUT_REQUIRED) this.buses.finish(scope, taskId);
    } catch (err) {
      this.logger.warn({ msg: 'could not follow a task taken up by another replica', taskId, error: String(err) });
    }
  }

  /** How many tasks this replica follows for its own subscribers, taken up by another (tests). */
  get followingTakenUp(): number {
    return this.following;
  }

  private heard(payload: string): void {
    const notice = noticeOf(payload);
    if (!notice || notice.to !== this.runs.replica) return;
    this.inboxes.get(notice.sub)?.heard(notice);
  }

  /** A watch or unwatch from another replica (or this one), for a task whose lease this replica holds. */
  private watchRequested(request: WatchRequest): void {
    const key = `${request.watcher}\u0000${request.subscription}`;
    if (request.action === 'unwatch') {
      this.watches.get(key)?.();
      this.watches.delete(key);
      return;
    }
    if (this.watches.has(key)) return;
    let seq = 0;
    const forget = (): void => {
      this.watches.get(key)?.();
      this.watches.delete(key);
    };
    const stop = this.buses.watch(request, request.taskId, {
      event: (response) => {
        this.send(request, ++seq, 'event', encode(response));
        if (endsAfter(response)) forget();
      },
      end: () => {
        this.watches.delete(key);
        this.send(request, ++seq, 'end');
      },
    });
    if (!stop) {
      this.send(request, 0, 'end');
      return;
    }
    this.watches.set(key, stop);
    // Sent on the same connection as the events, after attaching: the ack reaches the watcher first.
    this.send(request, 0, 'ack');
  }

  /**
   * Sends one message to a watcher, in pieces. Every notification of this replica goes out on its one
   * connection listening on the channel, one after the other: they reach the watchers in that order.
   */
  private send(request: WatchRequest, seq: number, type: EventNotice['type'], data?: string): void {
    const subscription = this.subscription;
    if (!subscription) return;
    const pieces: (string | undefined)[] = [];
    if (data === undefined) pieces.push(undefined);
    else {
      for (let at = 0; at < data.length || at === 0; at += PIECE_CHARS) pieces.push(data.slice(at, at + PIECE_CHARS));
    }
    pieces.forEach((piece, part) => {
      const notice: EventNotice = {
        to: request.watcher,
        sub: request.subscription,
        seq,
        type,
        part,
        parts: pieces.length,
      };
      if (piece !== undefined) notice.data = piece;
      const text = JSON.stringify(notice);
      this.outbox = this.outbox
        .then(() => subscription.notify(text))
        .catch((err: unknown) =>
          this.logger.warn({
            msg: 'could not forward a task event to another replica',
            taskId: request.taskId,
            error: String(err),
          }),
        );
    });
  }
}
