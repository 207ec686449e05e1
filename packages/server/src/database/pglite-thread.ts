import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { serialize } from 'pg-protocol';
import type { BackendMessage } from 'pg-protocol/dist/messages.js';
import { Parser } from 'pg-protocol/dist/parser.js';
import type { ThreadError, ThreadReply, ThreadRequest } from './pglite-thread.messages.js';

/** Where the thread's script is: dist/database, next to this module in tsc's output and one level under
 * dist in the server's bundle (dist/bundle); from the sources (Jest), the build's copy. */
function workerScript(): URL {
  const here = import.meta.url;
  const script = new URL(
    here.endsWith('.ts') ? '../../dist/database/pglite-worker.js' : '../database/pglite-worker.js',
    here,
  );
  if (!existsSync(fileURLToPath(script))) {
    throw new Error(`the embedded database's thread script is missing: ${fileURLToPath(script)} (run npm run build)`);
  }
  return script;
}

const asError = (what: string, error: ThreadError): Error => {
  const made = new Error(`${what}: ${error.message}`);
  if (error.stack) made.stack = `${made.message}\n    at the embedded database's thread:\n${error.stack}`;
  return made;
};

interface Pending {
  resolve: (bytes: Uint8Array | undefined) => void;
  reject: (error: Error) => void;
}

/**
 * PGlite on a thread of its own, spoken to in PostgreSQL's wire protocol, its start and queries on another
 * core (docs/architecture.md#persistence).
 */
export class PGliteThread {
  readonly waitReady: Promise<void>;
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<number, (payload: string) => void>();
  private nextId = 1;
  private starting = true;
  private stopped: Error | undefined;
  private closing: Promise<void> | undefined;

  /** Starts PGlite on `pgdata`, which first becomes a copy of `seedFrom` when given (embedded-template.ts, copyTemplate). */
  constructor(pgdata: string, seedFrom?: string) {
    const workerData = { pgdata, seedFrom: seedFrom ?? null };
    this.worker = new Worker(workerScript(), { workerData, stdout: false, stderr: false });
    this.waitReady = new Promise<void>((resolve, reject) => {
      this.worker.on('message', (reply: ThreadReply) => {
        if (reply.kind === 'ready') {
          this.starting = false;
          this.holdProcess();
          resolve();
        } else if (reply.kind === 'start-failed') {
          const error = asError('the embedded database could not start', reply.error);
          this.stop(error);
          reject(error);
        } else this.receive(reply);
      });
      const end = (error: Error) => {
        this.stop(error);
        reject(error);
      };
      this.worker.on('error', (error) => end(asError('the embedded database stopped', error)));
      this.worker.on('exit', (code) =>
        end(new Error(`the embedded database's thread exited${code ? ` (code ${code})` : ''}`)),
      );
    });
  }

  /** True once closed, or once its thread has stopped. */
  get closed(): boolean {
    return this.stopped !== undefined;
  }

  /** Why it no longer takes queries (closed, or its thread stopped); undefined while it does. */
  get failure(): Error | undefined {
    return this.stopped;
  }

  /** A node-postgres connection to the database (`connection` in a Client's config; one client only). */
  connection(): PGliteThreadConnection {
    return new PGliteThreadConnection(this);
  }

  /** Runs protocol messages and resolves with PostgreSQL's answer to them, as bytes. */
  exec(bytes: Uint8Array): Promise<Uint8Array> {
    return this.request((id) => ({ kind: 'exec', id, bytes })) as Promise<Uint8Array>;
  }

  /** LISTENs to `channel` (as PGlite's listen names it); resolves with the function that stops it. */
  async listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>> {
    const listener = this.nextId++;
    this.listeners.set(listener, onPayload);
    try {
      await this.request((id) => ({ kind: 'listen', id, listener, channel }));
    } catch (error) {
      this.listeners.delete(listener);
      throw error;
    }
    return async () => {
      if (!this.listeners.delete(listener) || this.closed) return;
      await this.request((id) => ({ kind: 'unlisten', id, listener }));
    };
  }

  /** Closes PGlite (it writes out what it holds) and ends its thread. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        await this.waitReady.catch(() => undefined);
        if (!this.closed) await this.request((id) => ({ kind: 'close', id }));
      } finally {
        this.stop(new Error('the embedded database is closed'));
        await this.worker.terminate();
      }
    })();
    return this.closing;
  }

  private request(make: (id: number) => ThreadRequest): Promise<Uint8Array | undefined> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    return new Promise<Uint8Array | undefined>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.holdProcess();
      this.worker.postMessage(make(id));
    });
  }

  private receive(reply: ThreadReply): void {
    if (reply.kind === 'notification') {
      this.listeners.get(reply.listener)?.(reply.payload);
      return;
    }
    if (reply.kind !== 'done' && reply.kind !== 'failed') return;
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id);
    this.holdProcess();
    if (reply.kind === 'done') waiting.resolve(reply.bytes);
    else waiting.reject(asError('the embedded database failed', reply.error));
  }

  private stop(error: Error): void {
    this.stopped ??= error;
    for (const waiting of this.pending.values()) waiting.reject(this.stopped);
    this.pending.clear();
    this.listeners.clear();
  }

  /** Refs the thread while a start or a request is under way, unrefs it when idle. */
  private holdProcess(): void {
    if (this.starting || this.pending.size > 0) this.worker.ref();
    else this.worker.unref();
  }
}

/**
 * What node-postgres' Client needs of its `connection`, over a PGliteThread: each method serializes its
 * message; the messages of one tick (a query's parse, bind, describe, execute and sync) go to the thread
 * together, as a socket's corked writes would, and PostgreSQL's answer comes back as the events a
 * socket's parsed bytes would raise.
 */
export class PGliteThreadConnection extends EventEmitter {
  _connecting = false;
  readonly stream = { destroy: () => this.end() };
  parsedStatements: Record<string, string> = {};
  submittedNamedStatements: Record<string, unknown> = {};
  private parser = new Parser();
  private outgoing: Buffer[] = [];
  /** The answers to the batches sent so far, in order. */
  private answered: Promise<void>;
  /**
   * node-postgres' pool hands this one connection to each client it makes (one at a time: the pool holds
   * one), the next after the last has ended. Each connect() starts a generation; what was sent in an
   * earlier one is answered to nobody.
   */
  private generation = 0;
  private ended = false;
  /** The last client's 'end', not yet emitted. */
  private endPending = false;

  constructor(private readonly thread: PGliteThread) {
    super();
    this.answered = thread.waitReady;
  }

  connect(): void {
    // The last client's end, before the new client listens (it does once this returns).
    if (this.endPending) {
      this.endPending = false;
      this.emit('end');
    }
    const generation = ++this.generation;
    this.ended = false;
    this.outgoing = [];
    this.parser = new Parser();
    this._connecting = true;
    this.answered.then(
      () => {
        if (generation !== this.generation) return;
        const failure = this.thread.failure;
        process.nextTick(() => (failure ? this.emit('error', failure) : this.emit('readyForQuery')));
      },
      (error: unknown) => process.nextTick(() => this.emit('error', error)),
    );
  }

  requestSsl(): void {}
  startup(): void {}
  cancel(): void {}
  password(): void {}
  sendSASLInitialResponseMessage(mechanism: string, initialResponse: string): void {
    this.send(serialize.sendSASLInitialResponseMessage(mechanism, initialResponse));
  }
  sendSCRAMClientFinalMessage(additionalData: string): void {
    this.send(serialize.sendSCRAMClientFinalMessage(additionalData));
  }
  query(text: string): void {
    this.send(serialize.query(text));
  }
  parse(query: Parameters<typeof serialize.parse>[0]): void {
    this.send(serialize.parse(query));
  }
  bind(config: Parameters<typeof serialize.bind>[0]): void {
    this.send(serialize.bind(config));
  }
  execute(config: Parameters<typeof serialize.execute>[0]): void {
    this.send(serialize.execute(config));
  }
  describe(message: Parameters<typeof serialize.describe>[0]): void {
    this.send(serialize.describe(message));
  }
  close(message: Parameters<typeof serialize.close>[0]): void {
    this.send(serialize.close(message));
  }
  flush(): void {
    this.send(serialize.flush());
  }
  sync(): void {
    this.send(serialize.sync());
  }
  sendCopyFromChunk(chunk: Buffer): void {
    this.send(serialize.copyData(chunk));
  }
  endCopyFrom(): void {
    this.send(serialize.copyDone());
  }
  sendCopyFail(message: string): void {
    this.send(serialize.copyFail(message));
  }
  ref(): void {}
  unref(): void {}

  /**
   * Ends the client's use of this connection (the database stays open: closing it is its owner's).
   * Its listeners go now; 'end' follows the answers still due (the client listens for it after this).
   */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.outgoing = [];
    for (const name of this.eventNames()) this.removeAllListeners(name);
    this.endPending = true;
    const generation = this.generation;
    this.answered = this.answered
      .catch(() => undefined)
      .then(() => {
        if (generation !== this.generation || !this.endPending) return;
        this.endPending = false;
        this.emit('end');
      });
  }

  private send(message: Buffer): void {
    if (this.ended) return;
    if (this.outgoing.push(message) === 1) process.nextTick(() => this.flushOutgoing());
  }

  private flushOutgoing(): void {
    if (this.ended || this.outgoing.length === 0) return;
    const batch = this.outgoing.length === 1 ? this.outgoing[0] : Buffer.concat(this.outgoing);
    this.outgoing = [];
    const generation = this.generation;
    const answer = this.thread.exec(batch);
    this.answered = this.answered
      .then(() => answer)
      .then(
        (bytes) => {
          if (generation === this.generation && !this.ended) this.deliver(bytes);
        },
        (error: unknown) => {
          if (generation === this.generation && !this.ended) this.emit('error', error);
        },
      );
  }

  private deliver(bytes: Uint8Array): void {
    if (bytes.byteLength === 0) return;
    this.parser.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), (message: BackendMessage) => {
      this.emit(message.name === 'error' ? 'errorMessage' : message.name, message);
    });
  }
}
