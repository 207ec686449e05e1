import type { INestApplication } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { createHttpApp } from '../../src/app.factory.js';
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
 * Boots the real HTTP application on `database` (migrating it at start) on a free loopback port.
 * Suites about the protocol run with the `none` scheme and no rate limit unless `env` says otherwise;
 * suites about authentication pass their own schemes. Logs are discarded unless TEST_LOGS=1.
 */
export async function startServer(
  database: TestDatabase,
  env: Record<string, string> = {},
  options: { logSink?: { write(line: string): boolean } } = {},
): Promise<TestServer> {
  const port = await freePort();
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
  });
  await app.listen(port, '127.0.0.1');
  const baseUrl = `http://127.0.0.1:${port}`;
  return { app, baseUrl, endpoint: `${baseUrl}/a2a`, close: () => app.close() };
}

/** Raw JSON-RPC over HTTP, for the cases the SDK client would never send. */
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
  return { status: res.status, headers: res.headers, json: parseJsonOrUndefined(text), text };
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
  const text = await res.text();
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
