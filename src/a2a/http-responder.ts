import { Injectable, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { AppConfig } from '../config/app.config.js';
import type { DispatchOutcome } from './jsonrpc.types.js';
import type { JsonRpcResponse } from './jsonrpc.types.js';
import { isFailure } from './jsonrpc.types.js';
import { OpenStreams } from './open-streams.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../common/domain.errors.js';
import { RPC_CODES } from '../rpc/rpc-error.mapper.js';

/**
 * HTTP status for a single JSON-RPC answer: 200 for protocol errors, as A2A's JSON-RPC binding does;
 * 500 for an internal error, 503 for a database away.
 */
function statusFor(response: JsonRpcResponse): number {
  if (!isFailure(response)) return 200;
  if (response.error.code === RPC_CODES.UNAVAILABLE) return 503;
  return response.error.code === RPC_CODES.INTERNAL_ERROR ? 500 : 200;
}

function startEventStream(res: Response): void {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
}

/** Writes a dispatch outcome to an Express response: JSON, or an SSE stream with heartbeats. */
@Injectable()
export class HttpResponder {
  private readonly logger = new Logger(HttpResponder.name);

  constructor(
    private readonly config: AppConfig,
    private readonly openStreams: OpenStreams,
  ) {}

  async send(outcome: DispatchOutcome, res: Response): Promise<void> {
    for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
    if (outcome.kind === 'single') {
      const status = outcome.httpStatus ?? statusFor(outcome.response);
      // An error with an HTTP status of its own (403, 500, 503…) stays JSON, so that the status is read.
      if (outcome.asStream && status === 200) {
        startEventStream(res);
        res.end(`data: ${JSON.stringify(outcome.response)}\n\n`);
        return;
      }
      if (status === 503) res.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
      res.status(status).json(outcome.response);
      return;
    }
    // Writes of one tick (the headers, events that came together, the last event and the end) leave in one
    // socket write: corked here and at every event, uncorked once the tick's promise callbacks have run.
    const corkForTick = (): void => {
      if (res.writableCorked > 0) return;
      res.cork();
      process.nextTick(() => res.uncork());
    };
    corkForTick();
    startEventStream(res);

    const iterator = outcome.events[Symbol.asyncIterator]();
    // Set by `end`, which the response's 'close' event and OpenStreams may call while the loop awaits.
    const stream = { closed: false };
    const heartbeat = setInterval(() => {
      if (!stream.closed) res.write(': keep-alive\n\n');
    }, this.config.sseHeartbeatMs);
    heartbeat.unref();
    const end = (): void => {
      if (stream.closed) return;
      stream.closed = true;
      clearInterval(heartbeat);
      untrack();
      // The client went away or we are done: stop reading events; the task itself keeps running.
      void iterator.return?.(undefined);
      if (!res.writableEnded) res.end();
    };
    const untrack = this.openStreams.add({
      id: outcome.id,
      slot: outcome.slot,
      close: (last) => {
        if (!stream.closed && !res.writableEnded) res.write(`data: ${JSON.stringify(last)}\n\n`);
        end();
      },
    });
    res.on('close', end);
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done || stream.closed) break;
        corkForTick();
        res.write(`data: ${JSON.stringify(next.value)}\n\n`);
      }
    } catch (err) {
      this.logger.error({ msg: 'stream failed' }, err instanceof Error ? err : undefined);
    } finally {
      end();
    }
  }
}
