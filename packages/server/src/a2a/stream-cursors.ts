import { Injectable } from '@nestjs/common';
import type { ServerCallContext } from '@a2a-js/sdk/server';

/**
 * The sequence number a resuming SubscribeToTask names (`lastSequence`, or HTTP's `Last-Event-ID`), kept
 * beside the call's context: the SDK's transport handlers read the params as the A2A request, which has no
 * such field, so the invoker hands it over here for the request handler (docs/protocol.md §10.1).
 */
@Injectable()
export class StreamCursors {
  private readonly cursors = new WeakMap<ServerCallContext, number>();

  keep(context: ServerCallContext, lastSequence: number): void {
    this.cursors.set(context, lastSequence);
  }

  /** The call's cursor, once; undefined for a subscription from the start. */
  take(context: ServerCallContext): number | undefined {
    const cursor = this.cursors.get(context);
    this.cursors.delete(context);
    return cursor;
  }
}
