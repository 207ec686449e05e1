/** What the server's thread asks of the embedded database's thread (pglite-worker.ts). */
export type ThreadRequest =
  | { kind: 'exec'; id: number; bytes: Uint8Array }
  | { kind: 'listen'; id: number; listener: number; channel: string }
  | { kind: 'unlisten'; id: number; listener: number }
  | { kind: 'close'; id: number };

export interface ThreadError {
  message: string;
  stack?: string;
}

/** What the embedded database's thread answers. */
export type ThreadReply =
  | { kind: 'ready' }
  | { kind: 'start-failed'; error: ThreadError }
  | { kind: 'done'; id: number; bytes?: Uint8Array }
  | { kind: 'failed'; id: number; error: ThreadError }
  | { kind: 'notification'; listener: number; payload: string };
