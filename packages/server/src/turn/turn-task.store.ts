import { Injectable } from '@nestjs/common';
import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { TaskRef } from '../database/task-event-log.js';
import { TypeOrmTaskStore, type TaskPage } from '../database/typeorm-task.store.js';

/**
 * The TaskStore the SDK's request handler is given, and the one place a call's reads and the recordings'
 * commits meet the stored rows: TypeOrmTaskStore holds the rows and knows no call; this knows the calls.
 */
@Injectable()
export class TurnTaskStore implements TaskStore {
  /** A task read for a call before the SDK reads it (see loadForCall), held for that one read. */
  private readonly readForCall = new WeakMap<ServerCallContext, Task>();

  constructor(private readonly rows: TypeOrmTaskStore) {}

  /**
   * Loads a task that the SDK is about to load for the same call (a reply's admission, before the SDK
   * continues the task): the SDK's next load of it in this call gets this copy instead of a second read.
   */
  async loadForCall(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const task = await this.rows.load(taskId, context);
    if (task) this.readForCall.set(context, task);
    return task;
  }

  load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const read = this.readForCall.get(context);
    if (read !== undefined) {
      this.readForCall.delete(context);
      if (read.id === taskId) return Promise.resolve(read);
    }
    return this.rows.load(taskId, context);
  }

  save(task: Task, context: ServerCallContext): Promise<void> {
    return this.rows.save(task, context);
  }

  list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return this.rows.list(params, context);
  }

  /** ListTasks as JSON text (TypeOrmTaskStore.listText). */
  listText(params: ListTasksRequest, context: ServerCallContext): Promise<TaskPage<string>> {
    return this.rows.listText(params, context);
  }

  /** A task's recording committed it: a finished task is held for the loads that follow. */
  committed(ref: TaskRef, state: string, json: string): void {
    this.rows.keepCommitted(ref, state, json);
  }
}
