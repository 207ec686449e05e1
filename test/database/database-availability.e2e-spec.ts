import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { PostgresCluster, postgresBinaries } from '../support/postgres-cluster.js';
import { rawCall } from '../support/server.js';
import { DIST_MAIN } from '../support/stdio-client.js';
import { spawnServer, type SpawnedServer, stopAll } from '../support/server-process.js';
import { until } from '../support/wait.js';
import { describeNeeding, postgresServerBinaries } from '../support/requirements.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The server as a process (node dist/main.js) on a PostgreSQL the test stops and starts: it waits for
 * the database at start, answers calls it cannot serve during an outage with a retryable error, and
 * exits 0 after a clean SIGTERM drain.
 */

const BIN = postgresBinaries();

const PASSWORD = 'hunter2-not-shown';

describeNeeding(postgresServerBinaries(), 'the server and a PostgreSQL that is away (process)', () => {
  let cluster: PostgresCluster;
  const started: SpawnedServer[] = [];

  beforeAll(async () => {
    if (!existsSync(DIST_MAIN)) throw new Error(`${DIST_MAIN} is missing: run "npm run build" first`);
    cluster = await PostgresCluster.start(BIN!);
  }, 60_000);

  afterAll(async () => {
    await stopAll(started);
    await ifAssigned(cluster)?.destroy();
  });

  async function launch(env: Record<string, string>): Promise<SpawnedServer> {
    const url = new URL(cluster.url);
    url.password = PASSWORD;
    const running = await spawnServer({
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATABASE_URL: url.toString(),
      CLEVERAGENTS_MIGRATE_ON_START: 'true',
      CLEVERAGENTS_AUTH_SCHEMES: 'none',
      CLEVERAGENTS_ACTOR_BACKEND: 'conformance',
      ...env,
    });
    started.push(running);
    return running;
  }

  const ready = async (server: SpawnedServer): Promise<boolean> =>
    (await fetch(`${server.baseUrl}/readyz`).catch(() => undefined))?.status === 200;

  it('waits for PostgreSQL at start, and gives up naming DATABASE_URL (password masked)', async () => {
    await cluster.stop();
    let patient: SpawnedServer;
    try {
      const server = await launch({ CLEVERAGENTS_DATABASE_CONNECT_SECONDS: '2' });
      const { code } = await server.ended;
      expect(code).toBe(1);
      expect(server.log()).toMatch(/does not take connections yet.*waiting for it/);
      expect(server.log()).toContain(`DATABASE_URL=postgres://postgres:****@127.0.0.1:${cluster.port}/postgres`);
      expect(server.log()).not.toContain(PASSWORD);

      // Back within the wait: the server starts.
      patient = await launch({ CLEVERAGENTS_DATABASE_CONNECT_SECONDS: '30' });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(patient.process.exitCode).toBeNull();
    } finally {
      await cluster.resume();
    }
    await until(() => ready(patient), 'the server to be ready once PostgreSQL is back', 30_000);
    patient.process.kill('SIGKILL');
    await patient.ended;
  }, 60_000);

  it('answers DATABASE_UNAVAILABLE (retryable, 503 + Retry-After) while the database is away', async () => {
    const server = await launch({ CLEVERAGENTS_DATABASE_RETRY_SECONDS: '1' });
    await until(() => ready(server), 'the server to be ready', 30_000);
    await cluster.stop();
    try {
      for (const method of ['GetTask', '_cleveragents/session/list']) {
        const params = method === 'GetTask' ? { id: 'some-task' } : {};
        const answer = await rawCall(
          server.endpoint,
          { jsonrpc: '2.0', id: 1, method, params },
          { 'a2a-version': '1.0' },
        );
        expect({ method, status: answer.status, retryAfter: answer.headers.get('retry-after') }).toEqual({
          method,
          status: 503,
          retryAfter: '5',
        });
        expect(answer.json.error.code).toBe(-32010);
        expect(answer.json.error.data[0]).toMatchObject({
          reason: 'DATABASE_UNAVAILABLE',
          metadata: { retryable: 'true' },
        });
      }
    } finally {
      await cluster.resume();
    }
    server.process.kill('SIGKILL');
    await server.ended;
  }, 60_000);

  it('exits with status 0 after a clean SIGTERM drain', async () => {
    const server = await launch({});
    await until(() => ready(server), 'the server to be ready', 30_000);
    server.process.kill('SIGTERM');
    expect(await server.ended).toEqual({ code: 0, signal: null });
  }, 60_000);
});
