import { Injectable } from '@nestjs/common';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { Answering } from './approval.service.js';

/**
 * Who answers an approval through `approval/answer`, by the call context the answer is delivered with: the
 * delivered message acts as the task's owner, the answer is recorded as the caller's. A context no method
 * marked is a client's own message on the task (`stream`); nothing on the wire can mark one.
 */
@Injectable()
export class AnswerOrigins {
  private readonly marked = new WeakMap<ServerCallContext, Answering>();

  mark(context: ServerCallContext, by: Answering): ServerCallContext {
    this.marked.set(context, by);
    return context;
  }

  /** Who answers with a message in `context`: as marked, else the context's own user, on the stream. */
  of(context: ServerCallContext): Answering {
    const marked = this.marked.get(context);
    if (marked) return marked;
    const user = context.user as { subject?: unknown; userName?: unknown } | undefined;
    let subject = 'anonymous';
    if (typeof user?.subject === 'string') subject = user.subject;
    else if (typeof user?.userName === 'string') subject = user.userName;
    return { subject, channel: 'stream' };
  }
}
