import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { freePort } from '../support/server.js';
import { DIST_MAIN } from '../support/stdio-client.js';
import { sendRequest } from '../factories/messages.js';
import {
  CleverAgentsError,
  LocalServerError,
  connect,
  type CleverAgentsClient,
  type ConnectOptions,
} from '../../packages/client/src/node.js';
import { EXTENSION_URI, RPC_CODES } from '../../packages/contract/src/index.js';
import { collect, shapes } from './lib-support.js';
import { ifAssigned } from '../support/assigned.js';

const CONFORMANCE = { CLEVERAGENTS_ACTOR_BACKEND: 'conformance', LOG_LEVEL: 'info' };

function local(dataDir: string, env: Record<string, string> = {}): ConnectOptions['local'] {
  return { dataDir, serverEntry: DIST_MAIN, env: { ...CONFORMANCE, ...env }, closeTimeoutMs: 15_000 };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Everything this process writes on stdout and stderr while `work` runs. */
async function captureOutput<T>(work: () => Promise<T>): Promise<{ value: T; written: string }> {
  const chunks: string[] = [];
  const capture = (chunk: string | Uint8Array): boolean => {
    chunks.push(String(chunk));
    return true;
  };
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
  const err = jest.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    return { value: await work(), written: chunks.join('') };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe('the client library in local mode (stdio)', () => {
  let db: TestDatabase;
  let client: CleverAgentsClient;
  let printed: string;

  beforeAll(async () => {
    if (!existsSync(DIST_MAIN)) throw new Error(`${DIST_MAIN} is missing: run "npm run build" first`);
    db = await createEmbeddedTestDatabase();
    const { value, written } = await captureOutput(() => connect({ local: local(db.env.CLEVERAGENTS_DATA_DIR) }));
    client = value;
    printed = written;
  });

  afterAll(async () => {
    await ifAssigned(client)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('reads the card over stdio (GetExtendedAgentCard) and sees the extension', () => {
    expect(client.transport).toBe('stdio');
    expect(client.card.name).toBe('CleverAgents Server');
    expect(client.serverCard).toBe(client.card);
    expect(client.offersExtensions).toBe(true);
    expect(client.card.capabilities?.extensions.map((e) => e.uri)).toContain(EXTENSION_URI);
    expect(client.a2a.transport.protocolName).toBe('JSONRPC');
  });

  it("keeps the server's logs off this process's output, in a buffer", () => {
    expect(printed).toBe('');
    expect(client.serverLog).toContain('"level"');
    // The bootstrap key the server prints once lands in the buffer, not on the user's screen.
    expect(client.serverLog).toMatch(/ca_[0-9a-z]{26}_/);
  });

  it('streams a message to completion, each event once', async () => {
    const { value: events, written } = await captureOutput(() =>
      collect(client.stream(sendRequest('tck-stream-artifact-chunked'))),
    );
    expect(shapes(events)).toEqual([
      'task:TASK_STATE_SUBMITTED',
      'status:TASK_STATE_WORKING',
      'artifact:append',
      'artifact:append',
      'status:TASK_STATE_COMPLETED',
    ]);
    expect(written).toBe('');
  });

  it('runs streams and calls side by side on the one connection', async () => {
    const [a, b, made, sent] = await Promise.all([
      collect(client.stream(sendRequest('tck-stream-001'))),
      collect(client.stream(sendRequest('tck-stream-003'))),
      client.sessions.create({ title: 'concurrent' }),
      client.send(sendRequest('tck-complete-task')),
    ]);
    expect(shapes(a).at(-1)).toBe('status:TASK_STATE_COMPLETED');
    expect(shapes(b).at(-1)).toBe('status:TASK_STATE_COMPLETED');
    expect(made.sessionId).toEqual(expect.any(String));
    const task = await client.tasks.get({ id: (sent as { id: string }).id });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const listed = await client.tasks.list({});
    expect(listed.tasks.map((t) => t.id)).toContain(task.id);
  });

  it('subscribes to a running task', async () => {
    const stream = client.stream(sendRequest('test-resubscribe-message-id'));
    const first = await stream.next();
    const taskId = first.value?.payload?.$case === 'task' ? first.value.payload.value.id : '';
    expect(taskId).not.toBe('');
    const subscribed = await collect(client.tasks.subscribe({ id: taskId }));
    expect(shapes(subscribed).at(-1)).toBe('status:TASK_STATE_COMPLETED');
    const rest = await collect(stream);
    expect(shapes(rest).at(-1)).toBe('status:TASK_STATE_COMPLETED');
  });

  it('creates a session and reads it back through the extension', async () => {
    const made = await client.sessions.create({ title: 'local' });
    expect(await client.sessions.get({ sessionId: made.sessionId })).toEqual(made);
    expect(await client.whoami()).toEqual(expect.any(Object));
  });

  it('maps -32602 with its reason and the field it names', async () => {
    const err = (await client.sessions.create({ actor: 'nobody' }).catch((e: unknown) => e)) as CleverAgentsError;
    expect(err).toBeInstanceOf(CleverAgentsError);
    expect(err.code).toBe(RPC_CODES.INVALID_PARAMS);
    expect(err.reason).toEqual(expect.any(String));
    expect(err.fieldViolations.map((v) => v.field)).toContain('actor');
    expect(err.httpStatus).toBe(200);
  });

  it('maps a JSON-RPC error the SDK raises (GetTask of a missing task)', async () => {
    const err = await client.tasks.get({ id: 'no-such-task' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CleverAgentsError);
    expect((err as CleverAgentsError).reason).toBe('TASK_NOT_FOUND');
  });
});

describe('the local server process', () => {
  let dirs: string[] = [];

  const tempDir = async (): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), 'cleveragents-client-'));
    dirs.push(dir);
    return dir;
  };

  afterAll(async () => {
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
    dirs = [];
  });

  it('creates the data directory 0700 and leaves no process after close()', async () => {
    const dataDir = join(await tempDir(), 'nested', 'data');
    const client = await connect({ local: local(dataDir) });
    const pid = client.localPid!;
    expect(isRunning(pid)).toBe(true);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    await client.close();
    expect(isRunning(pid)).toBe(false);
    await expect(client.sessions.list({})).rejects.toBeInstanceOf(LocalServerError);
  });

  it('close() during a stream ends the stream and the process', async () => {
    const db = await createEmbeddedTestDatabase();
    dirs.push(db.env.CLEVERAGENTS_DATA_DIR);
    const client = await connect({ local: local(db.env.CLEVERAGENTS_DATA_DIR) });
    const pid = client.localPid!;
    const stream = client.stream(sendRequest('test-resubscribe-message-id'));
    expect((await stream.next()).done).toBe(false);
    const rest = collect(stream).catch((e: unknown) => e);
    await client.close();
    expect(((await rest) as Error).message).toBe('the client was closed');
    expect(isRunning(pid)).toBe(false);
  });

  it('fails a stream in flight with the exit and the server log when the server dies', async () => {
    const db = await createEmbeddedTestDatabase();
    dirs.push(db.env.CLEVERAGENTS_DATA_DIR);
    const client = await connect({ local: local(db.env.CLEVERAGENTS_DATA_DIR) });
    try {
      const stream = client.stream(sendRequest('test-resubscribe-message-id'));
      expect((await stream.next()).done).toBe(false);
      process.kill(client.localPid!, 'SIGKILL');
      const err = (await collect(stream).catch((e: unknown) => e)) as LocalServerError;
      expect(err).toBeInstanceOf(LocalServerError);
      expect(err.message).toBe('the local server was killed by SIGKILL');
      expect(err.signal).toBe('SIGKILL');
      expect(err.stderr).toContain('SendStreamingMessage');
    } finally {
      await client.close();
    }
  });

  it("surfaces the server's own message when the data directory is locked", async () => {
    const dataDir = await tempDir();
    const holder = { pid: process.pid, hostname: hostname(), purpose: 'test', startedAt: new Date().toISOString() };
    writeFileSync(join(dataDir, 'database.lock'), `${JSON.stringify(holder)}\n`);
    const logs: string[] = [];
    const { value: err, written } = await captureOutput(() =>
      connect({ local: local(dataDir), onServerLog: (chunk) => logs.push(chunk) }).catch((e: unknown) => e),
    );
    expect(err).toBeInstanceOf(LocalServerError);
    const e = err as LocalServerError;
    expect(e.message).toContain(`is in use by process ${process.pid}`);
    expect(e.message).toMatch(/^the local server exited with code 1: failed to start: /);
    expect(e.hint).toContain('another cleveragents process');
    expect(e.stderr).toContain('in use by process');
    expect(logs.join('')).toBe(e.stderr);
    expect(written).toBe('');
  });

  it('names a server entry that does not exist, or that fails to load', async () => {
    const dataDir = await tempDir();
    const missing = join(dataDir, 'no-such-main.js');
    const err = (await connect({ local: { dataDir, serverEntry: missing } }).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(LocalServerError);
    expect(err.message).toContain(`${missing} does not exist`);
    const broken = join(dataDir, 'broken-main.js');
    writeFileSync(broken, "throw new Error('cannot load this');\n");
    const loadErr = (await connect({ local: { dataDir, serverEntry: broken } }).catch((e: unknown) => e)) as Error;
    expect(loadErr).toBeInstanceOf(LocalServerError);
    expect(loadErr.message).toMatch(/^the local server exited with code 1: .*cannot load this/);
  });

  it('surfaces a database it cannot reach', async () => {
    const dataDir = await tempDir();
    const url = `postgres://nobody@127.0.0.1:${await freePort()}/none`;
    const env = {
      DATABASE_URL: url,
      CLEVERAGENTS_SECRET_KEY: randomBytes(32).toString('base64'),
      CLEVERAGENTS_DATABASE_CONNECT_SECONDS: '1',
    };
    const err = (await connect({ local: local(dataDir, env) }).catch((e: unknown) => e)) as LocalServerError;
    expect(err).toBeInstanceOf(LocalServerError);
    expect(err.message).toMatch(/^the local server exited with code 1: failed to start: Cannot connect to PostgreSQL/);
    expect(err.message).toContain(url);
    expect(err.stderr).toContain('ECONNREFUSED');
  }, 60_000);
});
