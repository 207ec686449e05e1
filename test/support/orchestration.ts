import { randomUUID } from 'node:crypto';
import { SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';

/**
 * What the suites about orchestrated tasks (plans, gates, client-side tools) read and write on the wire:
 * messages with text and data parts, the data parts of status messages, tool-call artifact updates.
 */

export type Json = Record<string, any>;

/** A client that reads and writes files through client-requests (message metadata, docs/protocol.md §5). */
export const CAPABILITIES = {
  'cleveragents/clientCapabilities': { fs: { read: true, write: true }, terminal: false },
};

/** A v1.0 wire message with `text` (when not empty) and `data` parts. */
export function wireMessage(text: string, extra: Json = {}, data: Json[] = []): Json {
  return {
    messageId: `orch-${randomUUID()}`,
    role: 'ROLE_USER',
    parts: [...(text ? [{ text }] : []), ...data.map((value) => ({ data: value }))],
    ...extra,
  };
}

/** A blocking SendMessage request of the SDK client for `message`. */
export function sendRequestOf(message: Json): SendMessageRequest {
  return SendMessageRequest.fromJSON({ message, configuration: { returnImmediately: false } });
}

/** The data parts' values of a status update or of a task's status message. */
export function statusData(event: StreamResponse | Task | undefined): Json[] {
  let parts: any[] = [];
  if (event && 'payload' in event && event.payload?.$case === 'statusUpdate') {
    parts = event.payload.value.status?.message?.parts ?? [];
  } else if (event && 'status' in event) parts = event.status?.message?.parts ?? [];
  return parts.filter((p) => p.content?.$case === 'data').map((p) => p.content.value as Json);
}

/** The tool-call artifact updates of a stream: which artifact, how it appends, and its data part. */
export function toolArtifacts(events: readonly StreamResponse[]): Json[] {
  return events.flatMap((e) =>
    e.payload?.$case === 'artifactUpdate' && e.payload.value.artifact?.name === 'tool-call'
      ? [
          {
            artifactId: e.payload.value.artifact.artifactId,
            append: e.payload.value.append,
            lastChunk: e.payload.value.lastChunk,
            data: (e.payload.value.artifact.parts[0]?.content as { value: Json }).value,
            // A chunk of more than one part (a call that never ran: the call and its result at once).
            ...(e.payload.value.artifact.parts.length > 1
              ? { more: e.payload.value.artifact.parts.slice(1).map((p) => (p.content as { value: Json }).value) }
              : {}),
          },
        ]
      : [],
  );
}
