import { Injectable } from '@nestjs/common';
import type { ServerCallContext } from '@a2a-js/sdk/server';

/**
 * What the request handler refused a call with, kept beside the call's context. The SDK's transport
 * handlers answer an error thrown by the request handler with its message alone (-32603 for anything
 * that is not an A2A error), so a domain error thrown there — a closed session, a paused plan, a reply
 * that does not answer what the task waits for — is handed over here and mapped by the invoker with its
 * code, reason and details.
 */
@Injectable()
export class CallFailures {
  private readonly thrown = new WeakMap<ServerCallContext, unknown>();

  keep(context: ServerCallContext, err: unknown): void {
    this.thrown.set(context, err);
  }

  /** The error kept for this call, once. */
  take(context: ServerCallContext): unknown {
    const err = this.thrown.get(context);
    this.thrown.delete(context);
    return err;
  }
}
