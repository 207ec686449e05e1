import { Logger } from '@nestjs/common';
import { taskStateToJSON, type TaskState } from '@a2a-js/sdk';
import { LRUCache } from 'lru-cache';
import type { ChannelSubscription, DatabaseNotifications } from './database-notifications.js';

/** The channel the FinishedTaskNotifications triggers notify on. */
export const FINISHED_TASKS_CHANNEL = 'cleveragents_tasks';

/** The A2A states after which a task never changes. */
export const FINISHED_STATES: ReadonlySet<string> = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);

/** Whether a task in `state` has finished (it never changes again). */
export function isFinishedState(state: TaskState | undefined): boolean {
  return state !== undefined && FINISHED_STATES.has(taskStateToJSON(state));
}

/** What is kept at most: tasks, and bytes of task JSON; a task above `maxTaskBytes` is never kept. */
export interface FinishedTaskCacheLimits {
  maxTasks: number;
  maxBytes: number;
  maxTaskBytes: number;
}

const LIMITS: FinishedTaskCacheLimits = { maxTasks: 10_000, maxBytes: 64 * 1024 * 1024, maxTaskBytes: 256 * 1024 };

/**
 * Finished tasks kept in memory as their stored JSON, trusted only while `cleveragents_tasks` is heard
 * (docs/architecture.md#persistence).
 */
export class FinishedTaskCache {
  private readonly logger = new Logger(FinishedTaskCache.name);
  private readonly entries: LRUCache<string, string>;
  private readonly maxTaskBytes: number;
  private live = false;
  private generation = 0;
  private subscription: ChannelSubscription | undefined;

  constructor(limits: Partial<FinishedTaskCacheLimits> = {}) {
    const { maxTasks, maxBytes, maxTaskBytes } = { ...LIMITS, ...limits };
    this.maxTaskBytes = maxTaskBytes;
    this.entries = new LRUCache({ max: maxTasks, maxSize: maxBytes, sizeCalculation: (json) => json.length });
  }

  async start(notifications: DatabaseNotifications): Promise<void> {
    this.subscription = await notifications.listen(FINISHED_TASKS_CHANNEL, {
      notify: () => this.clear(),
      reset: (live, closed) => {
        this.live = live;
        this.clear();
        // Closed at shutdown is no interruption; only a connection lost is.
        if (!live && !closed) {
          this.logger.warn('Finished-task notifications interrupted: tasks are read from the database');
        }
      },
    });
  }

  async stop(): Promise<void> {
    this.live = false;
    await this.subscription?.close();
  }

  /** The generation a read starts in; pass it to `keep` so that a read overtaken by a change is not kept. */
  get currentGeneration(): number {
    return this.generation;
  }

  /** The stored JSON of a finished task, if held. */
  get(key: string): string | undefined {
    return this.live ? this.entries.get(key) : undefined;
  }

  /** Keeps a task's stored JSON if it is finished; forgets it otherwise. */
  keep(key: string, state: string, json: string, generation = this.generation): void {
    this.entries.delete(key);
    if (!this.live || generation !== this.generation || !FINISHED_STATES.has(state)) return;
    if (json.length > this.maxTaskBytes) return;
    this.entries.set(key, json);
  }

  private clear(): void {
    this.generation += 1;
    this.entries.clear();
  }
}
