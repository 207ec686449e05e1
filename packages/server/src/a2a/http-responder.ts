import { SEQUENCE_KEY } from '@cleveragents/contract';
import { Injectable, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { AppConfig } from '../config/app.config.js';
import type { DispatchOutcome, JsonRpcId, JsonRpcResponse, StreamSlot } from './jsonrpc.types.js';
import { isFailure, responseText } from './jsonrpc.types.js';
import { OpenStreams, type OpenStream } from './open-streams.js';
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

const untracked = (): void => undefined;

/** Open streams are spread over this many groups, one beaten per tick: a period's writes, not one burst. */
const HEARTBEAT_GROUPS = 16;

/**
 * Writes of one tick (the headers, events that came together, the last event and the end) leave in one
 * socket write: corked at the stream's start and at every event, uncorked once the tick's promise
 * callbacks have run.
 */
function corkForTick(res: Response): void {
  if (res.writableCorked > 0) return;
  res.cork();
  process.nextTick(() => res.uncork());
}

/**
 * The sequence number a stream event's JSON-RPC result carries in its metadata (docs/protocol.md §10.1): a v1.0
 * result holds the event under its kind (`statusUpdate`, `artifactUpdate`, `task`, `message`), a v0.3 one is the
 * event itself.
 */
function sequenceOfResult(response: JsonRpcResponse): number | undefined {
  if (!('result' in response)) return undefined;
  const result = response.result as Record<string, unknown> | null | undefined;
  if (!result || typeof result !== 'object') return undefined;
  const inner = ['statusUpdate', 'artifactUpdate', 'task', 'message'].map((kind) => result[kind]).find(Boolean);
  const event = (inner ?? result) as { metadata?: Record<string, unknown> };
  const seq = event.metadata?.[SEQUENCE_KEY];
  return typeof seq === 'number' && Number.isSafeInteger(seq) ? seq : undefined;
}

/**
 * One open SSE response: tracked by OpenStreams (a shutdown closes it with a last event) and beaten by
 * the responder's shared heartbeat. A class, so that an idle stream holds one object and one listener.
 */
class SseStream implements OpenStream {
  closed = false;
  untrack: () => void = untracked;
  /** The response's 'close' listener: the client went away. */
  readonly end = (): void => this.finish();

  constructor(
    readonly id: JsonRpcId,
    readonly slot: StreamSlot | undefined,
    private readonly res: Response,
    private readonly iterator: AsyncIterator<JsonRpcResponse>,
    /** Its heartbeat group, which it leaves when it ends. */
    private readonly group: Set<SseStream>,
  ) {}

  write(event: JsonRpcResponse): void {
    corkForTick(this.res);
    const seq = sequenceOfResult(event);
    // The event's number in its task's log is its SSE id: a client resumes with `Last-Event-ID`.
    this.res.write(`${seq === undefined ? '' : `id: ${seq}\n`}data: ${JSON.stringify(event)}\n\n`);
  }

  beat(): void {
    if (!this.closed) this.res.write(': keep-alive\n\n');
  }

  close(last: JsonRpcResponse): void {
    if (!this.closed && !this.res.writableEnded) this.write(last);
    this.finish();
  }

  /** We are done or the client went away: stop reading events; the task itself keeps running. */
  finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.group.delete(this);
    this.untrack();
    void this.iterator.return?.(undefined);
    if (this.res.writableEnded) return;
    // What the tick corked goes out before the end: on Node 24 a response ended while corked lost the
    // chunks the tick had buffered, and the client's stream ended without its last event.
    while (this.res.writableCorked > 0) this.res.uncork();
    this.res.end();
  }
}

/**
 * Writes a dispatch outcome to an Express response: JSON, or an SSE stream. One heartbeat timer serves
 * every open stream (a comment each CLEVERAGENTS_SSE_HEARTBEAT_MS at most apart), running only while
 * one is open; it ticks HEARTBEAT_GROUPS times a period and beats one group of streams each time.
 */
@Injectable()
export class HttpResponder {
  private readonly logger = new Logger(HttpResponder.name);
  private readonly groups = Array.from({ length: HEARTBEAT_GROUPS }, () => new Set<SseStream>());
  private nextGroup = 0;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly openStreams: OpenStreams,
  ) {}

  /** Answers at once; a stream goes on writing its events after this returns, until it ends. */
  send(outcome: DispatchOutcome, res: Response): void {
    for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
    if (outcome.kind === 'single') {
      const status = outcome.httpStatus ?? statusFor(outcome.response);
      // An error with an HTTP status of its own (403, 500, 503…) stays JSON, so that the status is read.
      if (outcome.asStream && status === 200) {
        startEventStream(res);
        res.end(`data: ${responseText(outcome.response)}\n\n`);
        return;
      }
      if (status === 503) res.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
      // As Express' res.json would, but a JsonText result is written as it is.
      if (!res.get('Content-Type')) res.type('application/json');
      res.status(status).send(responseText(outcome.response));
      return;
    }
    corkForTick(res);
    startEventStream(res);
    const iterator = outcome.events[Symbol.asyncIterator]();
    const group = this.groups[this.nextGroup];
    this.nextGroup = (this.nextGroup + 1) % HEARTBEAT_GROUPS;
    const stream = new SseStream(outcome.id, outcome.slot, res, iterator, group);
    group.add(stream);
    this.heartbeat ??= this.startHeartbeat();
    stream.untrack = this.openStreams.add(stream);
    res.on('close', stream.end);
    // Not awaited: the request handler (and Nest's and Express' promises around it) ends here, and an
    // idle stream holds only its own loop's promises.
    void this.pump(stream, iterator);
  }

  private async pump(stream: SseStream, iterator: AsyncIterator<JsonRpcResponse>): Promise<void> {
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done || stream.closed) break;
        stream.write(next.value);
      }
    } catch (err) {
      this.logger.error({ msg: 'stream failed' }, err instanceof Error ? err : undefined);
    } finally {
      stream.finish();
    }
  }

  private startHeartbeat(): NodeJS.Timeout {
    let tick = 0;
    const timer = setInterval(
      () => {
        if (this.groups.every((group) => group.size === 0)) {
          clearInterval(timer);
          this.heartbeat = undefined;
          return;
        }
        for (const stream of this.groups[tick]) stream.beat();
        tick = (tick + 1) % HEARTBEAT_GROUPS;
      },
      Math.max(1, Math.floor(this.config.sseHeartbeatMs / HEARTBEAT_GROUPS)),
    );
    timer.unref();
    return timer;
  }
}
