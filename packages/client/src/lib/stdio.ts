/**
 * Local mode: the server as a subprocess speaking newline-delimited JSON-RPC, behind a `fetch` the SDK's
 * transport runs over unchanged (docs/design-notes.md#local-mode-transport).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { STREAM_END_METHOD } from '@cleveragents/contract';
import { LocalServerError } from './errors.js';
import { traceContextOf } from './tracing.js';

/** How much of the subprocess's stderr is kept. */
export const STDERR_TAIL_BYTES = 64 * 1024;

export interface StdioOptions {
  /** The server's data directory (CLEVERAGENTS_DATA_DIR); default `$XDG_DATA_HOME/cleveragents`. */
  dataDir?: string;
  /** Extra environment for the subprocess, over process.env. */
  env?: Record<string, string>;
  /** The server's entry script; default the installed @cleveragents/server's (defaultServerEntry). */
  serverEntry?: string;
  /** Every chunk the subprocess writes on stderr (its logs); they are also kept in a buffer. */
  onServerLog?: (chunk: string) => void;
}

/** `$XDG_DATA_HOME/cleveragents`, else `~/.local/share/cleveragents`. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_DATA_HOME && env.XDG_DATA_HOME.trim() !== '' ? env.XDG_DATA_HOME : join(homedir(), '.local', 'share');
  return join(base, 'cleveragents');
}

/**
 * The entry of the server package, @cleveragents/server (an optional peer: installed beside this package, or
 * globally beside the `cleveragents` CLI), or undefined when it is not installed.
 */
export function defaultServerEntry(): string | undefined {
  try {
    const manifest = createRequire(import.meta.url).resolve('@cleveragents/server/package.json');
    return join(dirname(manifest), 'dist', 'main.js');
  } catch {
    return undefined;
  }
}

type Pending =
  | {
      kind: 'single';
      originalId: unknown;
      resolve: (r: Response) => void;
      reject: (e: unknown) => void;
    }
  | {
      kind: 'stream';
      originalId: unknown;
      /** Set once the first line came: the Response was handed out. */
      controller?: ReadableStreamDefaultController<Uint8Array>;
      resolve: (r: Response) => void;
      reject: (e: unknown) => void;
      /** The caller went away: lines are dropped until the stream's end notification. */
      discarded: boolean;
    };

const encoder = new TextEncoder();

/**
 * The most telling line of the server's logs: its last error (`msg: error` of a JSON log line), else the
 * the error Node printed when the script threw before its logger ran (or, with no log at all, its last line).
 */
export function lastServerError(stderr: string): string | undefined {
  const lines = stderr.split('\n').reverse();
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { level?: unknown; msg?: unknown; error?: unknown; err?: unknown };
      if (entry.level !== 'error' && entry.level !== 'fatal') continue;
      const detail = entry.error ?? (entry.err as { message?: unknown } | undefined)?.message;
      return typeof detail === 'string' && detail !== '' ? `${String(entry.msg)}: ${detail}` : String(entry.msg);
    } catch {
      continue;
    }
  }
  const thrown = lines.find((l) => /^[A-Za-z]*Error( \[\w+\])?: /.test(l));
  if (thrown) return thrown.trim().slice(0, 500);
  // A server that logged (JSON) and then died said nothing telling: its banners are no reason.
  if (lines.some((l) => l.startsWith('{'))) return undefined;
  return lines
    .find((l) => l.trim() !== '' && !l.startsWith('Node.js v'))
    ?.trim()
    .slice(0, 500);
}

export class StdioConnection {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private tail = '';
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private closing = false;
  private readonly exited: Promise<void>;
  /** The `fetch` the SDK's JSON-RPC transport is given: the URL is ignored, the body goes to stdin. */
  readonly fetch: typeof fetch = (_input, init) => this.request(init);

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly onServerLog?: (chunk: string) => void,
  ) {
    createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => this.onLine(line));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      this.tail = (this.tail + chunk).slice(-STDERR_TAIL_BYTES);
      this.onServerLog?.(chunk);
    });
    // A write after the child died fails with EPIPE: the exit handler reports what matters.
    child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        this.exit = { code, signal };
        this.failAll(this.exitError('exited'));
        resolve();
      });
      child.on('error', (err) => {
        if (this.exit) return;
        this.exit = { code: null, signal: null };
        this.failAll(new LocalServerError(`could not start the local server: ${err.message}`, this.tail));
        resolve();
      });
    });
  }

  /** Spawns the server; the caller's first request tells whether it started. */
  static start(options: StdioOptions = {}): StdioConnection {
    const dataDir = options.dataDir ?? defaultDataDir();
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const entry = options.serverEntry ?? defaultServerEntry();
    if (entry === undefined) {
      throw new LocalServerError(
        'the local server cannot start: the server package is not installed (npm install -g @cleveragents/server)',
        '',
      );
    }
    if (!existsSync(entry)) {
      throw new LocalServerError(`the local server cannot start: ${entry} does not exist (build the server first)`, '');
    }
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: process.env.NODE_ENV ?? 'production',
      ...options.env,
      CLEVERAGENTS_DATA_DIR: dataDir,
    };
    // A process group of its own: Ctrl-C on the user's terminal is the client's to handle (cancel the
    // task), not a signal that stops the server under it. It still ends when its stdin closes.
    const child = spawn(process.execPath, [entry, '--stdio'], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    return new StdioConnection(child, options.onServerLog);
  }

  /** The process id of the subprocess. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The last ~64 KB the subprocess wrote on stderr. */
  get stderr(): string {
    return this.tail;
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  private exitError(what: string): LocalServerError {
    const { code, signal } = this.exit ?? { code: null, signal: null };
    const how = signal ? `was killed by ${signal}` : `${what} with code ${code}`;
    const reason = lastServerError(this.tail);
    const message = this.closing
      ? 'the local server was closed'
      : `the local server ${how}${reason ? `: ${reason}` : ''}`;
    return new LocalServerError(message, this.tail, code, signal);
  }

  private failAll(err: Error): void {
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      if (p.kind === 'stream' && p.controller) {
        if (!p.discarded) p.controller.error(err);
      } else p.reject(err);
    }
  }

  private request(init: RequestInit | undefined): Promise<Response> {
    if (this.exit) return Promise.reject(this.exitError('exited'));
    if (this.closing) return Promise.reject(new LocalServerError('the local server was closed', this.tail));
    const body = typeof init?.body === 'string' ? init.body : undefined;
    if (body === undefined) return Promise.reject(new TypeError('stdio transport: the request body must be a string'));
    const message = JSON.parse(body) as Record<string, unknown>;
    const accept = new Headers(init?.headers).get('accept') ?? '';
    const streaming = accept.includes('text/event-stream');
    const signal = init?.signal ?? undefined;
    // As fetch does: an aborted request rejects with the signal's reason, whatever the caller made it.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the reason is the caller's, passed through unchanged
    if (signal?.aborted) return Promise.reject(signal.reason);

    const wireId = this.nextId++;
    return new Promise<Response>((resolve, reject) => {
      const entry: Pending = streaming
        ? { kind: 'stream', originalId: message.id, resolve, reject, discarded: false }
        : { kind: 'single', originalId: message.id, resolve, reject };
      this.pending.set(wireId, entry);
      signal?.addEventListener(
        'abort',
        () => {
          const p = this.pending.get(wireId);
          if (!p) return;
          if (p.kind === 'stream' && p.controller) {
            // The server goes on streaming until its end notification: drop those lines.
            p.discarded = true;
            p.controller.error(signal.reason);
          } else {
            this.pending.delete(wireId);
            p.reject(signal.reason);
          }
        },
        { once: true },
      );
      // stdio carries no headers: the extension is served to local callers without activation, and the
      // trace context travels in the request's `_meta` (docs/protocol.md, local mode).
      const traceContext = traceContextOf(init?.headers);
      const meta = traceContext ? { _meta: { ...(message._meta as object | undefined), ...traceContext } } : {};
      this.child.stdin.write(`${JSON.stringify({ ...message, id: wireId, ...meta })}\n`);
    });
  }

  private onLine(line: string): void {
    if (line.trim() === '') return;
    let message: { id?: unknown; method?: unknown; params?: { id?: unknown }; error?: unknown };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      return; // not ours to answer: stdout carries JSON-RPC only
    }
    if (message.method === STREAM_END_METHOD) {
      const id = message.params?.id;
      const p = typeof id === 'number' ? this.pending.get(id) : undefined;
      if (!p) return;
      this.pending.delete(id as number);
      if (p.kind === 'stream' && p.controller) {
        if (!p.discarded) p.controller.close();
      } else {
        // A stream that ended before any event: an empty SSE body.
        p.resolve(sseResponse(new ReadableStream({ start: (c) => c.close() })));
      }
      return;
    }
    if (typeof message.id !== 'number') return;
    const p = this.pending.get(message.id);
    if (!p) return;
    const restored = JSON.stringify({ ...message, id: p.originalId });
    if (p.kind === 'single') {
      this.pending.delete(message.id);
      p.resolve(new Response(restored, { status: 200, headers: { 'content-type': 'application/json' } }));
      return;
    }
    if (p.controller) {
      if (!p.discarded) p.controller.enqueue(encoder.encode(`data: ${restored}\n\n`));
      return;
    }
    if (message.error !== undefined) {
      // Refused before the stream began: an ordinary JSON-RPC error answer (no end notification follows).
      this.pending.delete(message.id);
      p.resolve(new Response(restored, { status: 200, headers: { 'content-type': 'application/json' } }));
      return;
    }
    const wireId = message.id;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        p.controller = controller;
        controller.enqueue(encoder.encode(`data: ${restored}\n\n`));
      },
      cancel: () => {
        if (this.pending.get(wireId) === p) p.discarded = true;
      },
    });
    p.resolve(sseResponse(body));
  }

  /**
   * Closes stdin (the server then finishes what it started and exits) and waits for the exit;
   * after `timeoutMs` it sends SIGTERM, then SIGKILL.
   */
  async close(timeoutMs = 10_000): Promise<void> {
    if (this.exit) return;
    this.closing = true;
    this.child.stdin.end();
    const wait = (ms: number): Promise<boolean> =>
      Promise.race([
        this.exited.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref()),
      ]);
    if (await wait(timeoutMs)) return;
    this.child.kill('SIGTERM');
    if (await wait(5_000)) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}

function sseResponse(body: ReadableStream<Uint8Array>): Response {
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}
