import { expect, jest } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { announceServing, createHttpApp } from '../../packages/server/src/app.factory.js';
import type { Clock } from '../../packages/server/src/common/clock.js';
import type { TestDatabase } from './database.js';

export interface TestServer {
  readonly app: INestApplication;
  /** http://127.0.0.1:<port> */
  readonly baseUrl: string;
  /** `${baseUrl}/a2a` */
  readonly endpoint: string;
  close(): Promise<void>;
}

const silent = { write: (): boolean => true };

/** A port free on loopback right now, so that PORT (and so the Agent Card's URLs) are known before boot. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * Runs `start` on a port `choose` says is free, and again on another one when the port was taken
 * between the choice and the listen (EADDRINUSE; any other error ends it at once). The port must be
 * known before boot, so the harness cannot listen on port 0.
 */
export async function listenOnFreePort<T>(
  start: (port: number) => Promise<T>,
  choose: () => Promise<number> = freePort,
  attempts = 5,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await start(await choose());
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= attempts) throw error;
    }
  }
}

/**
 * Boots the real HTTP application on `database` on a free loopback port. It migrates at start, which
 * finds nothing to do on a database made from the run's migrated template (the default).
 * Suites about the protocol run with the `none` scheme and no rate limit unless `env` says otherwise;
 * suites about authentication pass their own schemes. Logs are discarded unless TEST_LOGS=1.
 */
export async function startServer(
  database: TestDatabase,
  env: Record<string, string> = {},
  options: { logSink?: { write(line: string): boolean }; clock?: Clock } = {},
): Promise<TestServer> {
  return listenOnFreePort(async (port) => {
    const config = database.config({
      CLEVERAGENTS_MIGRATE_ON_START: 'true',
      CLEVERAGENTS_AUTH_SCHEMES: 'none',
      CLEVERAGENTS_RATE_LIMIT_PER_MINUTE: '0',
      HOST: '127.0.0.1',
      PORT: String(port),
      ...env,
    });
    const app = await createHttpApp(config, {
      logSink: options.logSink ?? (process.env.TEST_LOGS ? process.stderr : silent),
      clock: options.clock,
    });
    try {
      await app.listen(port, '127.0.0.1');
    } catch (error) {
      await app.close();
      throw error;
    }
    // As main.ts: the bootstrap key once the server listens.
    await announceServing(app);
    const baseUrl = `http://127.0.0.1:${port}`;
    return { app, baseUrl, endpoint: `${baseUrl}/a2a`, close: () => app.close() };
  });
}

/**
 * Raw JSON-RPC over HTTP, for the cases the SDK client would never send. `json` is the body, or for an
 * SSE answer of exactly one event (how a v0.3 streaming method answers an error) that event.
 */
export async function rawCall(
  endpoint: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  const events = (res.headers.get('content-type') ?? '').startsWith('text/event-stream') ? sseData(text) : [];
  const json = events.length === 1 ? events[0] : parseJsonOrUndefined(text);
  await expectDeclaredError(endpoint, body, json);
  return { status: res.status, headers: res.headers, json, text };
}

interface PublishedErrors {
  everyMethodReasons: { code: number; reason: string }[];
  methods: Record<string, { errors: { code: number; reason: string }[] }>;
}

const publishedErrors = new Map<string, Promise<PublishedErrors | undefined>>();

/**
 * Every `_cleveragents` error a test meets is checked against the errors the server publishes for that
 * method (its schema bundle, docs/api.md): a reason a method answers but does not declare, or declares
 * under another code, fails the test that met it. Methods the bundle does not list are not checked.
 */
async function expectDeclaredError(endpoint: string, body: unknown, json: any): Promise<void> {
  const method = (body as { method?: unknown } | null)?.method;
  const reason: unknown = json?.error?.data?.[0]?.reason;
  if (typeof method !== 'string' || !method.startsWith('_cleveragents/') || typeof reason !== 'string') return;
  const origin = new URL(endpoint).origin;
  let bundle = publishedErrors.get(origin);
  if (!bundle) {
    bundle = fetch(`${origin}/schemas/cleveragents-v1.json`).then(async (res) =>
      res.ok ? ((await res.json()) as PublishedErrors) : undefined,
    );
    publishedErrors.set(origin, bundle);
  }
  const published = await bundle;
  const declared = published?.methods[method];
  if (!published || !declared) return;
  const allowed = [...published.everyMethodReasons, ...declared.errors];
  const answered = { code: json.error.code as number, reason };
  if (!allowed.some((e) => e.code === answered.code && e.reason === answered.reason)) {
    throw new Error(
      `${method} answered ${answered.code} ${reason}, which it does not declare ` +
        `(declared: ${allowed.map((e) => `${e.code} ${e.reason}`).join(', ')})`,
    );
  }
}

/** The body as JSON, or undefined when it is not JSON. */
export function parseJsonOrUndefined(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Reads an SSE response into its `data:` payloads. */
export async function readSse(res: Response): Promise<any[]> {
  return sseData(await res.text());
}

function sseData(text: string): any[] {
  return text
    .split('\n\n')
    .map((block) =>
      block
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n'),
    )
    .filter((d) => d.length > 0)
    .map((d) => JSON.parse(d));
}

/**
 * `_cleveragents/<method>` calls to a server started later (hence the getter): `call` answers the raw
 * HTTP response, `ok` the result of a call that must succeed.
 */
export function extensionCalls(server: () => TestServer) {
  let id = 0;
  const call = (method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    rawCall(server().endpoint, { jsonrpc: '2.0', id: ++id, method: `_cleveragents/${method}`, params }, headers);
  const ok = async (method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
    const answer = await call(method, params, headers);
    expect(answer.json.error).toBeUndefined();
    return answer.json.result;
  };
  return { call, ok };
}

/**
 * Calls made with an API key (`x-api-key`): `rpc` any method, `call` a `_cleveragents/*` one, `ok` one that must
 * succeed (its result).
 */
export function keyedCalls(server: () => TestServer) {
  const rpc = (key: string, method: string, params: Record<string, unknown>) =>
    rawCall(server().endpoint, { jsonrpc: '2.0', id: 1, method, params }, { 'x-api-key': key, 'A2A-Version': '1.0' });
  const call = (key: string, method: string, params: Record<string, unknown> = {}) =>
    rpc(key, `_cleveragents/${method}`, params);
  const ok = async (key: string, method: string, params: Record<string, unknown> = {}) => {
    const answer = await call(key, method, params);
    expect(answer.json.error).toBeUndefined();
    return answer.json.result;
  };
  return { rpc, call, ok };
}

/** The `google.rpc.ErrorInfo` reason of a JSON-RPC error. */
export function reasonOf(answer: { json: any }): string | undefined {
  return answer.json?.error?.data?.[0]?.reason;
}

/** The fields a -32602 answer names, in its order. */
export function fieldsOf(answer: { json: any }): string[] {
  const badRequest = (answer.json?.error?.data ?? []).find((d: any) => Array.isArray(d?.fieldViolations));
  return (badRequest?.fieldViolations ?? []).map((v: { field: string }) => v.field);
}

/**
 * Boots the server with `env` (a scheme that authenticates API keys) on a fresh database and returns
 * the bootstrap key it printed once on stderr.
 */
export async function startServerWithBootstrapKey(
  database: TestDatabase,
  env: Record<string, string> = { CLEVERAGENTS_AUTH_SCHEMES: 'apiKey' },
): Promise<{ server: TestServer; bootstrapKey: string }> {
  const printed: string[] = [];
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    printed.push(String(chunk));
    return true;
  });
  let server: TestServer;
  try {
    server = await startServer(database, env);
  } finally {
    spy.mockRestore();
  }
  const keys = printed.join('').match(/ca_[0-9a-z]{26}_[A-Za-z0-9_-]{43}/g) ?? [];
  expect(keys).toHaveLength(1);
  return { server, bootstrapKey: keys[0]! };
}
