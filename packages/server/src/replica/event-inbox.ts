import { StreamResponse } from '@a2a-js/sdk';
import { payloadObject } from '../database/database-notifications.js';

/**
 * One notification on the events channel, addressed to a watcher's subscription. `seq` counts the
 * subscription's messages (the `ack` or `end` answering the watch is 0, events follow from 1); a
 * message too big for one notification is split into `parts` numbered pieces sharing its `seq`.
 */
export interface EventNotice {
  to: string;
  sub: string;
  seq: number;
  type: 'ack' | 'event' | 'end';
  part: number;
  parts: number;
  data?: string;
}

/** The notice a payload carries, or undefined when it is not one. */
export function noticeOf(payload: string): EventNotice | undefined {
  const notice = payloadObject<EventNotice>(payload);
  if (!notice) return undefined;
  const ok =
    typeof notice.to === 'string' &&
    typeof notice.sub === 'string' &&
    typeof notice.seq === 'number' &&
    typeof notice.part === 'number' &&
    typeof notice.parts === 'number' &&
    (notice.type === 'ack' || notice.type === 'event' || notice.type === 'end');
  return ok ? (notice as EventNotice) : undefined;
}

/** An event as a notification carries it: the SDK's JSON codec, in base64. */
export function encode(response: StreamResponse): string {
  return Buffer.from(JSON.stringify(StreamResponse.toJSON(response)), 'utf8').toString('base64');
}

/** A relayed message back from its pieces' text. */
function decode(data: string): StreamResponse {
  return StreamResponse.fromJSON(JSON.parse(Buffer.from(data, 'base64').toString('utf8')));
}

/** What a watching replica receives for one subscription: whole messages, or word that some were lost. */
export type Received =
  { type: 'ack' } | { type: 'end' } | { type: 'lost' } | { type: 'event'; response: StreamResponse };

/** The messages of one subscription, reassembled from their pieces, in order. */
export class Inbox {
  private readonly items: Received[] = [];
  private waiting: (() => void) | undefined;
  private expected = 0;
  private pieces: string[] = [];

  heard(notice: EventNotice): void {
    if (notice.seq < this.expected) return;
    if (notice.seq > this.expected || notice.part !== this.pieces.length) {
      // A notification went missing (the holder could not send it): the order cannot be trusted now.
      this.pieces = [];
      this.expected = Number.POSITIVE_INFINITY;
      this.push({ type: 'lost' });
      return;
    }
    this.pieces.push(notice.data ?? '');
    if (this.pieces.length < notice.parts) return;
    const data = this.pieces.join('');
    this.pieces = [];
    this.expected += 1;
    if (notice.type !== 'event') {
      this.push({ type: notice.type });
      return;
    }
    try {
      this.push({ type: 'event', response: decode(data) });
    } catch {
      this.expected = Number.POSITIVE_INFINITY;
      this.push({ type: 'lost' });
    }
  }

  push(item: Received): void {
    this.items.push(item);
    this.waiting?.();
    this.waiting = undefined;
  }

  /** The next message, or undefined when none came within `timeoutMs`. */
  async next(timeoutMs: number): Promise<Received | undefined> {
    if (this.items.length === 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        timer = setTimeout(resolve, timeoutMs);
      });
      clearTimeout(timer);
      this.waiting = undefined;
    }
    return this.items.shift();
  }
}
