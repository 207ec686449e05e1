import { Injectable } from '@nestjs/common';
import {
  DefaultExecutionEventBus,
  type ExecutionEventBus,
  type ExecutionEventBusManager,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import { AppConfig } from '../config/app.config.js';
import { resolveStoreScope } from '../database/store-scope.js';

/**
 * The live event buses of running tasks, keyed by the task store's own scope (namespace, owner, task):
 * a request naming its tenant and one relying on the default namespace find the same bus (the SDK's
 * manager keys on the raw tenant, so they would not), and recovery after a restart can open the bus
 * that SubscribeToTask will then find.
 */
@Injectable()
export class SessionEventBuses implements ExecutionEventBusManager {
  private readonly buses = new Map<string, ExecutionEventBus>();

  constructor(private readonly config: AppConfig) {}

  private key(taskId: string, context: ServerCallContext | undefined): string {
    const scope = resolveStoreScope(context, this.config.defaultNamespace);
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
    const key = this.key(taskId, context);
    this.buses.get(key)?.removeAllListeners();
    this.buses.delete(key);
  }

  /** How many tasks have a live bus (diagnostics, tests). */
  get size(): number {
    return this.buses.size;
  }
}
