import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { Subject, type Observable, type Subscription } from 'rxjs';
import { DatabaseNotifications, payloadObject, type ChannelSubscription } from '../database/database-notifications.js';
import type { SessionScope } from '../session/session.service.js';
import { RunningTurns } from '../turn/running-turns.js';
import { TaskRuns } from '../turn/task-runs.js';

/** The channel on which a replica asks the one running a task's turn to cancel or pause it. */
export const TURN_CONTROL_CHANNEL = 'cleveragents_turn_control';

/** What the replica running the turn is asked to do: CancelTask (`cancel`) or `plan/pause` (`pause`). */
export type TurnControlAction = 'cancel' | 'pause';

/**
 * What a replica serving SubscribeToTask asks of the one running the task: to forward the task's live
 * events to it (`watch`), or to stop (`unwatch`). See RemoteTaskEvents.
 */
export type WatchAction = 'watch' | 'unwatch';

interface TurnControlRequest extends SessionScope {
  taskId: string;
  /** The replica asked: the one holding the task's lease (`taken`: the replica that took the task up). */
  replica: string;
  /** Absent in a request from a replica that relayed cancels only: a cancel. */
  action?: TurnControlAction | WatchAction | 'taken';
  /** watch, unwatch: the replica asking for the events, and its subscription's id. */
  watcher?: string;
  subscription?: string;
}

/** A watch or unwatch request, as the replica asked hears it. */
export interface WatchRequest extends SessionScope {
  taskId: string;
  action: WatchAction;
  watcher: string;
  subscription: string;
}

/** Another replica (`taker`) took up a task that was waiting for input. */
export interface TakenUpElsewhere {
  scope: SessionScope;
  taskId: string;
  taker: string;
}

/** The request a payload carries, or undefined when it is not one. */
function requestOf(payload: string): TurnControlRequest | undefined {
  const request = payloadObject<TurnControlRequest>(payload);
  if (!request) return undefined;
  const strings = [request.namespace, request.owner, request.taskId, request.replica];
  return strings.every((s) => typeof s === 'string') ? (request as TurnControlRequest) : undefined;
}

/**
 * CancelTask and `plan/pause` across replicas (docs/protocol.md §6.5, §10): a call that reaches a replica not
 * running the task's turn asks the replica holding the task's lease, through a database notification,
 * to stop the turn; that replica stops it as if the call had reached it (its own stream stores the
 * final `canceled`, or the `input-required` of a paused plan).
 */
@Injectable()
export class RemoteTurnControls implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RemoteTurnControls.name);
  private subscription: ChannelSubscription | undefined;
  private readonly watchRequested = new Subject<WatchRequest>();
  private readonly takenUp = new Subject<TakenUpElsewhere>();
  private tookUpHere: Subscription | undefined;

  /**
   * The watch and unwatch requests addressed to this replica, as they are heard (RemoteTaskEvents
   * serves them). Heard with no subscriber, a request is dropped.
   */
  readonly watchRequests: Observable<WatchRequest> = this.watchRequested.asObservable();
  /** Each task waiting for input that another replica took up, as it is heard. */
  readonly takenUpElsewhere: Observable<TakenUpElsewhere> = this.takenUp.asObservable();

  constructor(
    private readonly notifications: DatabaseNotifications,
    private readonly running: RunningTurns,
    private readonly runs: TaskRuns,
  ) {}

  /** Opened while the other modules start; the application starts once it listens (onApplicationBootstrap). */
  private listening: Promise<ChannelSubscription> | undefined;

  onModuleInit(): void {
    this.tookUpHere = this.running.takenUp.subscribe(({ scope, taskId }) => this.announce(scope, taskId));
    this.listening = this.listen();
  }

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = await (this.listening ??= this.listen());
  }

  private listen(): Promise<ChannelSubscription> {
    return this.notifications.listen(TURN_CONTROL_CHANNEL, {
      notify: (payload) => this.heard(payload),
      reset: () => undefined,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.tookUpHere?.unsubscribe();
    await this.subscription?.close();
    this.watchRequested.complete();
    this.takenUp.complete();
  }

  /** A turn here taking up a waiting task: every other replica hears it (`taken`, `replica` the taker). */
  private announce(scope: SessionScope, taskId: string): void {
    const request: TurnControlRequest = { ...scope, taskId, replica: this.runs.replica, action: 'taken' };
    this.subscription
      ?.notify(JSON.stringify(request))
      .catch((err: unknown) =>
        this.logger.warn({ msg: 'could not announce a task taken up here', taskId, error: String(err) }),
      );
  }

  /**
   * Asks the replica running `taskId`'s turn to `action` it. False when no other live replica runs it
   * (then the caller deals with the task as it stands).
   */
  async requestElsewhere(scope: SessionScope, taskId: string, action: TurnControlAction): Promise<boolean> {
    const holder = await this.runs.holderOf(scope, taskId);
    if (!holder || holder === this.runs.replica || !this.subscription) return false;
    const request: TurnControlRequest = {
      namespace: scope.namespace,
      owner: scope.owner,
      taskId,
      replica: holder,
      action,
    };
    await this.subscription.notify(JSON.stringify(request));
    return true;
  }

  /**
   * Asks `replica` (the holder of the task's lease; this one included) to start or stop forwarding the
   * task's live events to `watcher`'s `subscription`. False when this replica is not listening.
   */
  async requestWatch(replica: string, request: WatchRequest): Promise<boolean> {
    if (!this.subscription?.live) return false;
    const sent: TurnControlRequest = { ...request, replica };
    await this.subscription.notify(JSON.stringify(sent));
    return true;
  }

  private heard(payload: string): void {
    const request = requestOf(payload);
    if (!request) return;
    if (request.action === 'taken') {
      // Addressed to every replica but the taker.
      if (request.replica !== this.runs.replica) {
        this.takenUp.next({
          scope: { namespace: request.namespace, owner: request.owner },
          taskId: request.taskId,
          taker: request.replica,
        });
      }
      return;
    }
    if (request.replica !== this.runs.replica) return;
    const scope = { namespace: request.namespace, owner: request.owner };
    const { taskId } = request;
    switch (request.action ?? 'cancel') {
      case 'cancel':
        if (this.running.cancelHere(scope, taskId)) {
          this.logger.log({ msg: 'task canceled at the request of another replica', taskId });
        }
        return;
      case 'pause':
        void this.running.pauseHere(scope, taskId).then(
          (paused) => {
            if (paused) this.logger.log({ msg: 'task paused at the request of another replica', taskId });
          },
          (err: unknown) =>
            this.logger.warn({ msg: 'could not pause a task for another replica', taskId, error: String(err) }),
        );
        return;
      case 'watch':
      case 'unwatch':
        if (typeof request.watcher === 'string' && typeof request.subscription === 'string') {
          this.watchRequested.next({
            ...scope,
            taskId,
            action: request.action as WatchAction,
            watcher: request.watcher,
            subscription: request.subscription,
          });
        }
        return;
      default:
        // An action this version does not know (a newer replica's): left alone.
        return;
    }
  }
}
