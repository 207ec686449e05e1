import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { ManualClock } from '../support/manual-clock.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { spawnServer, type SpawnedServer } from '../support/server-process.js';
import { rawCall, startServer, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';

/*
 * The `local` backend's model, as an operator meets it (docs/configuration.md): a server without one says
 * so once in its log at start; with one, /readyz reports whether the endpoint answers — probed at most
 * once per 30 s whatever the number of probes — rather than answering OK while it is down.
 */

describe('/readyz and the model endpoint of the local backend', () => {
  let db: TestDatabase | undefined;
  let model: OpenAiCompatibleEndpoint | undefined;
  let server: TestServer | undefined;
  const clock = new ManualClock();

  beforeAll(async () => {
    const endpoint = await OpenAiCompatibleEndpoint.start({ tokens: ['ok'] });
    model = endpoint;
    db = await createEmbeddedTestDatabase();
    server = await startServer(
      db,
      {
        CLEVERAGENTS_ACTOR_BACKEND: 'local',
        CLEVERAGENTS_MODEL_BASE_URL: endpoint.baseUrl(),
        CLEVERAGENTS_MODEL: 'onprem-model',
        CLEVERAGENTS_MODEL_API_KEY: 'sk-readiness-key',
      },
      { clock },
    );
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await db?.cleanup();
    await model?.close();
  });

  async function readyz(query = ''): Promise<{ status: number; body: any }> {
    if (!server) throw new Error('the server did not start');
    const response = await fetch(`${server.baseUrl}/readyz${query}`);
    return { status: response.status, body: await response.json() };
  }

  it('up: ready, naming the endpoint; the endpoint is asked once per 30 s however often /readyz is', async () => {
    const endpoint = model!;
    const host = new URL(endpoint.baseUrl()).host;
    const first = await readyz();
    expect(first.status).toBe(200);
    expect(first.body.checks.actorBackend).toEqual({
      ok: true,
      name: 'local',
      detail: `model onprem-model at ${host}: reachable (GET /v1/models answered HTTP 200)`,
    });
    expect(endpoint.modelListings).toHaveLength(1);
    expect(endpoint.modelListings[0]?.headers.authorization).toBe('Bearer sk-readiness-key');

    // A load balancer's probes, and diagnostics/health: the cached answer, no request to the endpoint.
    const again = await Promise.all(Array.from({ length: 10 }, () => readyz()));
    expect(again.map((r) => r.status)).toEqual(Array(10).fill(200));
    const health = await rawCall(server!.endpoint, {
      jsonrpc: '2.0',
      id: 1,
      method: '_cleveragents/diagnostics/health',
    });
    expect(health.json.result.checks.actorBackend.ok).toBe(true);
    clock.advance(29_000);
    await readyz();
    expect(endpoint.modelListings).toHaveLength(1);

    // The period over: the next probe asks again, once, however many come together.
    clock.advance(1_000);
    await Promise.all(Array.from({ length: 5 }, () => readyz()));
    expect(endpoint.modelListings).toHaveLength(2);
    expect(endpoint.completions).toHaveLength(0); // no model call was made to find out
  });

  it('stopped: degraded (503), naming the endpoint and the error, once the cached answer is over', async () => {
    const endpoint = model!;
    const host = new URL(endpoint.baseUrl()).host;
    model = undefined;
    await endpoint.close();
    expect((await readyz()).status).toBe(200); // the answer of the last 30 s still stands
    clock.advance(30_000);
    const down = await readyz();
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({
      status: 'degraded',
      checks: {
        database: { ok: true },
        actorBackend: {
          ok: false,
          name: 'local',
          detail: `model onprem-model at ${host}: unreachable (ECONNREFUSED: check CLEVERAGENTS_MODEL_BASE_URL)`,
        },
      },
    });
    expect(JSON.stringify(down.body)).not.toContain('sk-readiness-key');

    // A cluster's readiness probe may leave the model out of the status code, never out of the report.
    const modelLeftOut = await readyz('?exclude=actorBackend');
    expect(modelLeftOut.status).toBe(200);
    expect(modelLeftOut.body).toMatchObject({
      status: 'degraded',
      checks: { actorBackend: down.body.checks.actorBackend },
    });
    expect((await readyz('?exclude=database&exclude=identityProvider')).status).toBe(503);
    expect((await readyz('?exclude=database,actorBackend')).status).toBe(200);
    const typo = await readyz('?exclude=model');
    expect(typo.status).toBe(400);
    expect(typo.body).toMatchObject({ field: 'exclude', error: expect.stringContaining('"model"') });
  });
});

describe('the local backend without a model, at start (node dist/main.js)', () => {
  let db: TestDatabase | undefined;
  let server: SpawnedServer | undefined;

  afterAll(async () => {
    if (server && server.process.exitCode === null) {
      server.process.kill('SIGKILL');
      await server.ended;
    }
    await db?.cleanup();
  });

  it('logs once that no model is configured, naming the two variables to set', async () => {
    const database = await createEmbeddedTestDatabase();
    db = database;
    const started = await spawnServer({
      ...database.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      CLEVERAGENTS_AUTH_SCHEMES: 'none',
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
    });
    server = started;
    // Not ready without a model (503): listening is what says the start is over.
    await until(() => /"msg":"listening"/.test(started.log()), 'the server to listen', 60_000);
    expect((await fetch(`${started.baseUrl}/readyz`)).status).toBe(503);
    const lines = started
      .log()
      .split('\n')
      .filter((line) => line.includes('no model configured'));
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]) as { level: string; msg: string };
    expect(line.level).toBe('warn');
    expect(line.msg).toMatch(/set CLEVERAGENTS_MODEL_BASE_URL and CLEVERAGENTS_MODEL\b/);
    expect(started.log().indexOf('no model configured')).toBeLessThan(started.log().indexOf('"msg":"listening"'));
  }, 90_000);
});
