import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost, type AbstractHttpAdapter } from '@nestjs/core';
import type { Server } from 'node:http';
import { AppConfig } from '../config/app.config.js';
import { OpenStreams } from './open-streams.js';
import { SessionWorkflow } from '../turn/session.workflow.js';
import { GuardedPushNotificationSender } from '../push/guarded-push-notification.sender.js';

/** Calls the dispatcher is answering right now, so that a shutdown can let them finish. */
@Injectable()
export class InFlightCalls {
  private count = 0;
  private waiters: (() => void)[] = [];

  async track<T>(call: Promise<T>): Promise<T> {
    this.count++;
    try {
      return await call;
    } finally {
      if (--this.count === 0) for (const wake of this.waiters.splice(0)) wake();
    }
  }

  get size(): number {
    return this.count;
  }

  /** Resolves true once nothing is in flight, or false when `timeoutMs` passes first. */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

/**
 * SIGTERM (docs/protocol.md §9): stop accepting connections, end open streams with a last event, let in-flight
 * calls finish within CLEVERAGENTS_SHUTDOWN_GRACE_MS, then let go of the actor turns still running
 * (their task leases released, so that the next process or another replica resumes them) and wait
 * (within the grace too) for the push notifications being sent; then Nest
 * closes the server and the database.
 */
@Injectable()
export class GracefulShutdown implements BeforeApplicationShutdown {
  private readonly logger = new Logger(GracefulShutdown.name);

  constructor(
    private readonly config: AppConfig,
    private readonly openStreams: OpenStreams,
    private readonly inFlight: InFlightCalls,
    private readonly adapterHost: HttpAdapterHost,
    private readonly workflow: SessionWorkflow,
    private readonly pushes: GuardedPushNotificationSender,
  ) {}

  async beforeApplicationShutdown(signal?: string): Promise<void> {
    // No HTTP adapter in the stdio application context, whatever HttpAdapterHost's type says.
    const adapter = this.adapterHost.httpAdapter as AbstractHttpAdapter | undefined;
    const server = adapter?.getHttpServer() as Server | undefined;
    if (server?.listening) {
      server.close();
      server.closeIdleConnections();
    }
    const streams = this.openStreams.closeAll();
    const calls = this.inFlight.size;
    const drained = await this.inFlight.drained(this.config.shutdownGraceMs);
    const turns = this.workflow.runningTurns;
    await this.workflow.detachAll();
    // Calls that waited on a detached turn now end (with the task as it stands).
    if (!drained) await this.inFlight.drained(1000);
    // Push notifications of the last events read their configs from the database, closed next.
    const pushesSent = await this.pushes.drained(this.config.shutdownGraceMs);
    this.logger.log({
      msg: 'shutting down',
      signal,
      streamsClosed: streams,
      callsInFlight: calls,
      drained,
      turnsDetached: turns,
      pushesSent,
    });
  }
}
