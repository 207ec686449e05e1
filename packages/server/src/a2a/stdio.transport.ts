import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { PrincipalResolver } from '../auth/principal.resolver.js';
import { RequestContext } from '../common/logging/request-context.js';
import { JsonRpcDispatcher } from './jsonrpc.dispatcher.js';
import { responseText, type DispatchOutcome } from './jsonrpc.types.js';
import { OpenStreams } from './open-streams.js';

export { STREAM_END_METHOD } from '@cleveragents/contract';
import { STREAM_END_METHOD } from '@cleveragents/contract';

/**
 * Local mode (docs/protocol.md §2): newline-delimited JSON-RPC on stdin/stdout, one message per line, served
 * by the same dispatcher as HTTP. Requests run concurrently; each output line is written whole.
 * A stream writes each event as its own line, then a `_cleveragents/stream/end` notification.
 */
@Injectable()
export class StdioTransport {
  private readonly logger = new Logger(StdioTransport.name);

  constructor(
    private readonly dispatcher: JsonRpcDispatcher,
    private readonly principals: PrincipalResolver,
    private readonly openStreams: OpenStreams,
  ) {}

  /** Serves until `input` ends and every call it started has answered. */
  async serve(input: Readable, output: Writable): Promise<void> {
    const principal = this.principals.forStdio();
    const inFlight = new Set<Promise<void>>();
    const write = (message: unknown): void => {
      output.write(`${JSON.stringify(message)}\n`);
    };
    const lines = createInterface({ input, crlfDelay: Infinity, terminal: false });
    for await (const line of lines) {
      if (line.trim() === '') continue;
      const requestId = randomUUID();
      const call = RequestContext.run({ requestId, transport: 'stdio', principal: principal.subject }, async () => {
        const outcome = await this.dispatcher.dispatch({
          body: line,
          transport: 'stdio',
          principal,
          requestId,
          headers: {},
        });
        if (outcome.kind === 'single') {
          output.write(`${responseText(outcome.response)}\n`);
          return;
        }
        await this.pipeStream(outcome, write);
      });
      const tracked = call.catch((err: unknown) => {
        this.logger.error({ msg: 'stdio call failed' }, err instanceof Error ? err : undefined);
      });
      inFlight.add(tracked);
      void tracked.finally(() => inFlight.delete(tracked));
    }
    await Promise.all([...inFlight]);
  }

  private async pipeStream(
    { id, events, slot }: Extract<DispatchOutcome, { kind: 'stream' }>,
    write: (m: unknown) => void,
  ): Promise<void> {
    const iterator = events[Symbol.asyncIterator]();
    // Set by OpenStreams' close, which may run while the loop awaits the next event.
    const stream = { closed: false };
    const untrack = this.openStreams.add({
      id,
      slot,
      close: (last) => {
        if (stream.closed) return;
        stream.closed = true;
        write(last);
        write({ jsonrpc: '2.0', method: STREAM_END_METHOD, params: { id } });
        void iterator.return?.(undefined);
      },
    });
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done || stream.closed) break;
        write(next.value);
      }
    } finally {
      untrack();
      if (!stream.closed) {
        stream.closed = true;
        write({ jsonrpc: '2.0', method: STREAM_END_METHOD, params: { id } });
      }
    }
  }
}
