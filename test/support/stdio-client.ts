import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export const DIST_MAIN = fileURLToPath(new URL('../../packages/server/dist/main.js', import.meta.url));

type Waiter = { id: unknown; stream: boolean; events: unknown[]; resolve: (v: unknown) => void };

/**
 * Drives `node dist/main.js --stdio` as a client would: one JSON-RPC message per line on stdin,
 * answers matched by id on stdout. Every stdout line must be JSON-RPC (logs belong on stderr).
 */
export class StdioClient {
  readonly stdoutLines: string[] = [];
  stderr = '';
  private readonly waiters: Waiter[] = [];
  private readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => this.onLine(line));
    child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  static start(env: Record<string, string>): StdioClient {
    if (!existsSync(DIST_MAIN)) throw new Error(`${DIST_MAIN} is missing: run "npm run build" first (npm test does)`);
    const child = spawn(process.execPath, [DIST_MAIN, '--stdio'], {
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        CLEVERAGENTS_ACTOR_BACKEND: 'conformance',
        ...env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new StdioClient(child);
  }

  private onLine(line: string): void {
    this.stdoutLines.push(line);
    const message = JSON.parse(line) as { id?: unknown; method?: string; params?: { id?: unknown } };
    if (message.method === '_cleveragents/stream/end') {
      const i = this.waiters.findIndex((w) => w.stream && w.id === message.params?.id);
      if (i >= 0) this.waiters.splice(i, 1)[0].resolve(undefined);
      return;
    }
    const i = this.waiters.findIndex((w) => w.id === message.id);
    if (i < 0) throw new Error(`unexpected stdout line: ${line}`);
    const waiter = this.waiters[i];
    if (waiter.stream) waiter.events.push(message);
    else {
      this.waiters.splice(i, 1);
      waiter.resolve(message);
    }
  }

  /** Sends a raw line; resolves with the answer carrying `expectId` (null for unparseable lines). */
  sendLine(line: string, expectId: unknown): Promise<any> {
    return new Promise((resolve) => {
      this.waiters.push({ id: expectId, stream: false, events: [], resolve });
      this.child.stdin.write(`${line}\n`);
    });
  }

  request(body: { id: unknown } & Record<string, unknown>): Promise<any> {
    return this.sendLine(JSON.stringify(body), body.id);
  }

  /** A streaming request: every event line up to the `_cleveragents/stream/end` notification. */
  stream(body: { id: unknown } & Record<string, unknown>): Promise<any[]> {
    return new Promise((resolve) => {
      const waiter: Waiter = { id: body.id, stream: true, events: [], resolve: () => resolve(waiter.events) };
      this.waiters.push(waiter);
      this.child.stdin.write(`${JSON.stringify(body)}\n`);
    });
  }

  /** Closes stdin, as a client does when done; resolves with the exit code. */
  async end(): Promise<number | null> {
    this.child.stdin.end();
    return this.exited;
  }

  /** Sends `signal` (a service manager's SIGTERM); resolves with the exit code. */
  async stop(signal: NodeJS.Signals): Promise<number | null> {
    this.child.kill(signal);
    return this.exited;
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}
