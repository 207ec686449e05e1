import { Injectable } from '@nestjs/common';
import {
  DefaultExecutionEventBus,
  type AgentExecutionEvent,
  type ExecutionEventBus,
  type ExecutionEventBusManager,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { AppConfig } from '../config/app.config.js';
import { resolveStoreScope, type StoreScope } from '../database/store-scope.js';

/** Someone following a task's bus from outside the request that runs it (another replica, by relay). */
export interface BusWatcher {
  event(event: AgentExecutionEvent): void;
  /** The bus finished or was cleaned up: no more events will come. Called once. */
  end(): void;
}

/**
 * The live event buses of running tasks, keyed by the task store's own scope (namespace, owner, task):
 * a request naming its tenant and one relying on the default namespace find the same bus (the SDK's
 * manager keys on the raw tenant, so they would not), and recovery after a restart can open the bus
 * that SubscribeToTask will then find.
 */
@Injectable()
export class SessionEventBuses implements ExecutionEventBusManager {
  private readonly buses = new Map<string, ExecutionEventBus>();
  /** What to tell watchers when a bus is cleaned up (its listeners are then removed unannounced). */
  private readonly cleanups = new Map<string, Set<() => void>>();

  constructor(private readonly config: AppConfig) {}

  private key(taskId: string, context: ServerCallContext | undefined): string {
    return this.scopedKey(resolveStoreScope(context, this.config.defaultNamespace), taskId);
  }

  private scopedKey(scope: StoreScope, taskId: string): string {
    return `${scope.namespace}\u0000${scope.owner}\u0000${taskId}`;
  }

  createOrGetByTaskId(taskId: string, context?: ServerCallContext): ExecutionEventBus {
    const key = this.key(taskId, context);
    let bus = this.buses.get(key);
    if (!bus) {
      bus = new DefaultExecutionEventBus();
      this.buses.set(key, bus);
    }
    return bus;
  }

  getByTaskId(taskId: string, context?: ServerCallContext): ExecutionEventBus | undefined {
    return this.buses.get(this.key(taskId, context));
  }

  cleanupByTaskId(taskId: string, context?: ServerCallContext): void {
    this.cleanup(this.key(taskId, context));
  }

  /** The live bus of `scope`'s task `taskId` here, if any. */
  busOf(scope: StoreScope, taskId: string): ExecutionEventBus | undefined {
    return this.buses.get(this.scopedKey(scope, taskId));
  }

  /** Closes and forgets the bus of `scope`'s task `taskId`, as the SDK's cleanup does. */
  finish(scope: StoreScope, taskId: string): void {
    const key = this.scopedKey(scope, taskId);
    this.buses.get(key)?.finished();
    this.cleanup(key);
  }

  private cleanup(key: string): void {
    const ends = this.cleanups.get(key);
    this.cleanups.delete(key);
    for (const end of ends ?? []) end();
    this.buses.get(key)?.removeAllListeners();
    this.buses.delete(key);
  }

  /**
   * Follows the live bus of `scope`'s task `taskId`: every event it publishes from now on, then `end`
   * once it finishes or is cleaned up. Returns what stops following it, or undefined when the task has
   * no live bus here.
   */
  watch(scope: StoreScope, taskId: string, watcher: BusWatcher): (() => void) | undefined {
    const key = this.scopedKey(scope, taskId);
    const bus = this.buses.get(key);
    if (!bus) return undefined;
    let watching = true;
    const onEvent = (event: AgentExecutionEvent): void => {
      if (watching) watcher.event(event);
    };
    const stop = (): void => {
      if (!watching) return;
      watching = false;
      bus.off('event', onEvent);
      bus.off('finished', onFinished);
      const ends = this.cleanups.get(key);
      ends?.delete(onFinished);
      if (ends?.size === 0) this.cleanups.delete(key);
    };
    const onFinished = (): void => {
      if (!watching) return;
      stop();
      watcher.end();
    };
    bus.on('event', onEvent);
    bus.on('finished', onFinished);
    let ends = this.cleanups.get(key);
    if (!ends) this.cleanups.set(key, (ends = new Set()));
    ends.add(onFinished);
    return stop;
  }

  /** How many tasks have a live bus (diagnostics, tests). */
  get size(): number {
    return this.buses.size;
  }
}
