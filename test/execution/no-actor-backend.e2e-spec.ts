import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { startProcess, type ServerProcess } from '../support/server-process.js';
import { rawCall, reasonOf } from '../support/server.js';
import { wireMessageV03, wireMessageV1 } from '../factories/messages.js';

/*
 * An extensions-only server (CLEVERAGENTS_ACTOR_BACKEND=none, docs/configuration.md): agents are hosted
 * elsewhere, this one serves registry, sync and namespaces. The real process (node dist/main.js) with no
 * model configured: its probes are green (the image's HEALTHCHECK is GET /healthz; a cluster's readiness
 * probe GET /readyz), every call that needs an actor is refused naming the setting, and the Agent Card
 * does not offer what it cannot serve.
 */

describe('CLEVERAGENTS_ACTOR_BACKEND=none: a server without actors', () => {
  let db: TestDatabase | undefined;
  let server: ServerProcess | undefined;
  let id = 0;
  const baseUrl = (): string => {
    if (!server) throw new Error('the server did not start');
    return server.baseUrl;
  };
  const call = (method: string, params: Record<string, unknown>, headers: Record<string, string> = {}) =>
    rawCall(`${baseUrl()}/a2a`, { jsonrpc: '2.0', id: ++id, method, params }, headers);

  beforeAll(async () => {
    const database = await createEmbeddedTestDatabase();
    db = database;
    // startProcess waits for /readyz to answer 200: with `local` and no model it never would (503).
    server = await startProcess({
      ...database.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      CLEVERAGENTS_AUTH_SCHEMES: 'none',
      CLEVERAGENTS_ACTOR_BACKEND: 'none',
    });
  }, 90_000);

  afterAll(async () => {
    if (server && server.process.exitCode === null) {
      server.process.kill('SIGTERM');
      await server.exited;
    }
    await db?.cleanup();
  });

  it('is live and ready with no model configured: /healthz and /readyz answer 200 over HTTP', async () => {
    const live = await fetch(`${baseUrl()}/healthz`);
    expect(live.status).toBe(200);
    const ready = await fetch(`${baseUrl()}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ok',
      checks: {
        database: { ok: true },
        actorBackend: { ok: true, name: 'none', detail: expect.stringContaining('runs no actors') },
      },
    });
  });

  it.each([
    ['SendMessage', '1.0', wireMessageV1('m')],
    ['SendStreamingMessage', '1.0', wireMessageV1('m')],
    ['message/send', '0.3', wireMessageV03('m')],
    ['message/stream', '0.3', wireMessageV03('m')],
  ])(
    '%s (A2A %s) answers -32004 ACTOR_BACKEND_UNAVAILABLE naming the setting; no session is made',
    async (method, version, message) => {
      const answer = await call(method, { message }, { 'A2A-Version': version });
      expect(answer.status).toBe(200);
      // An error, not a stream of events: v0.3 streaming methods send it as their stream's one event.
      const type = method === 'message/stream' ? /^text\/event-stream/ : /^application\/json/;
      expect(answer.headers.get('content-type')).toMatch(type);
      expect(answer.json.error).toMatchObject({
        code: -32004,
        message: expect.stringContaining('CLEVERAGENTS_ACTOR_BACKEND=none'),
      });
      expect(answer.json.error.data[0]).toMatchObject({
        reason: 'ACTOR_BACKEND_UNAVAILABLE',
        domain: 'cleveragents',
        metadata: { actorBackend: 'none' },
      });
      const sessions = await call('_cleveragents/session/list', {});
      expect(sessions.json.result.items).toEqual([]);
    },
  );

  it('plan/execute answers NO_ORCHESTRATOR and context/assemble ACTOR_BACKEND_UNAVAILABLE, both naming the setting', async () => {
    const plan = (await call('_cleveragents/plan/create', { goal: 'ship it' })).json.result;
    await call('_cleveragents/plan/approve', { planId: plan.planId });
    const execute = await call('_cleveragents/plan/execute', { planId: plan.planId });
    expect(execute.json.error).toMatchObject({
      code: -32008,
      message: expect.stringContaining('CLEVERAGENTS_ACTOR_BACKEND=none'),
    });
    expect(reasonOf(execute)).toBe('NO_ORCHESTRATOR');
    expect((await call('_cleveragents/plan/get', { planId: plan.planId })).json.result.status).toBe('approved');

    const session = (await call('_cleveragents/session/create', {})).json.result;
    const assemble = await call('_cleveragents/context/assemble', { sessionId: session.sessionId });
    expect(assemble.json.error).toMatchObject({
      code: -32004,
      message: expect.stringContaining('CLEVERAGENTS_ACTOR_BACKEND=none'),
    });
    expect(reasonOf(assemble)).toBe('ACTOR_BACKEND_UNAVAILABLE');
  });

  it('serves what it is for: the registry, namespaces and sync', async () => {
    const entry = await call('_cleveragents/registry/create', {
      kind: 'skill',
      name: 'kept',
      spec: { description: 'd', instructions: 'i' },
    });
    expect(entry.json.result).toMatchObject({ name: 'kept', revision: 1 });
    const created = await call('_cleveragents/namespace/create', { namespace: 'extensions-only' });
    expect(created.json.result).toMatchObject({ namespace: 'extensions-only', revision: 1 });
    const pulled = await call('_cleveragents/sync/pull', {});
    expect(pulled.json.error).toBeUndefined();
    expect(JSON.stringify(pulled.json.result)).toContain('kept');
  });

  it('the Agent Card offers no streaming, no push notifications, and only the skills it serves', async () => {
    const card = (await (await fetch(`${baseUrl()}/.well-known/agent-card.json`)).json()) as {
      capabilities: Record<string, unknown>;
      skills: { id: string }[];
    };
    expect(card.capabilities).toMatchObject({ streaming: false, pushNotifications: false });
    expect(card.skills.map((skill) => skill.id)).toEqual([
      'registry',
      'entity-sync',
      'namespace-management',
      'diagnostics',
    ]);
    // A client that subscribes anyway is told it is not supported (the SDK's own answer).
    const subscribe = await call('SubscribeToTask', { id: 'no-such-task' }, { 'A2A-Version': '1.0' });
    expect(subscribe.json.error.code).toBe(-32004);
  });
});
