import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { wireMessageV1 } from '../factories/messages.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import {
  extensionCalls,
  fieldsOf,
  rawCall,
  reasonOf,
  startServer,
  startServerWithBootstrapKey,
  type TestServer,
} from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * Model endpoints are the operator's decision, and what an actor runs with is an admin's: a member
 * cannot make the server call an address of their choosing, nor re-point or loosen an actor their
 * colleagues use; a model failure tells the caller nothing about the network.
 */

const V1 = { 'a2a-version': '1.0' };

describe.each(databaseTargets())('actor model endpoints and who changes an actor, on $kind', (target) => {
  let database: TestDatabase;
  let server: TestServer;
  let model: OpenAiCompatibleEndpoint;
  let attacker: OpenAiCompatibleEndpoint;
  /** An admitted endpoint where nothing listens: a closed port. */
  let closedUrl: string;
  const keys: Record<string, string> = {};
  const calls = extensionCalls(() => server);
  const call = (key: string, method: string, params: Record<string, unknown> = {}) =>
    calls.call(method, { namespace: 'acme', ...params }, { 'x-api-key': key });
  const ok = (key: string, method: string, params: Record<string, unknown> = {}) =>
    calls.ok(method, { namespace: 'acme', ...params }, { 'x-api-key': key });

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start({ tokens: ['fine'] });
    attacker = await OpenAiCompatibleEndpoint.start({ tokens: ['stolen'] });
    const closed = await OpenAiCompatibleEndpoint.start({ tokens: [] });
    closedUrl = closed.baseUrl();
    await closed.close();
    database = await target.create();
    let bootstrap: string;
    ({ server, bootstrapKey: bootstrap } = await startServerWithBootstrapKey(database, {
      CLEVERAGENTS_AUTH_SCHEMES: 'apiKey',
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'served-model',
      CLEVERAGENTS_MODEL_ALLOWED_HOSTS: new URL(closedUrl).host,
    }));
    await calls.ok('namespace/create', { namespace: 'acme' }, { 'x-api-key': bootstrap });
    for (const role of ['admin', 'member']) {
      const made = await calls.ok(
        'auth/apikey/create',
        { namespace: 'acme', name: role, role },
        {
          'x-api-key': bootstrap,
        },
      );
      keys[role] = made.key;
    }
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(database)?.cleanup();
    await ifAssigned(model)?.close();
    await ifAssigned(attacker)?.close();
  });

  it.each([
    ['loopback, another port', () => attacker.baseUrl()],
    ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/'],
    ['private address', () => 'http://10.0.0.5/v1'],
    ['IPv6 loopback', () => 'http://[::1]:8000/v1'],
    ['metadata host name', () => 'http://metadata.google.internal/v1'],
  ])(
    'refuses an actor whose baseUrl is not admitted (%s); a member for the role, before the host',
    async (_what, url) => {
      const attempts = async (key: string, baseUrl: string) => {
        const spec = { localGraph: 'orchestrator', model: { model: 'm', baseUrl } };
        return [
          await call(key, 'registry/create', { kind: 'actor', name: 'probe', spec }),
          await call(key, 'registry/update', { kind: 'actor', name: 'default', spec }),
          await call(key, 'registry/update', { kind: 'actor', name: 'absent', spec }),
          await call(key, 'sync/push', { changes: [{ kind: 'actor', name: 'probe', op: 'upsert', spec }] }),
        ];
      };
      for (const answer of await attempts(keys.admin, url())) {
        expect([answer.json.error?.code, reasonOf(answer), fieldsOf(answer)]).toEqual([
          -32602,
          'MODEL_ENDPOINT_NOT_ALLOWED',
          ['spec.model.baseUrl'],
        ]);
        expect(answer.json.error.message).toContain('CLEVERAGENTS_MODEL_ALLOWED_HOSTS');
      }
      // A member is refused for the role whatever the host: the answer tells nothing of which hosts are admitted.
      const refused = await attempts(keys.member, url());
      const admitted = await attempts(keys.member, model.baseUrl());
      for (const answer of refused) {
        expect([answer.json.error?.code, reasonOf(answer)]).toEqual([-32003, 'ROLE_REQUIRED']);
      }
      expect(refused.map((answer) => answer.json.error)).toEqual(admitted.map((answer) => answer.json.error));
      expect(attacker.requests).toHaveLength(0);
    },
  );

  it("a member may not change the default actor's spec nor what any actor runs with; an admin may", async () => {
    const autonomous = { localGraph: 'orchestrator', profile: 'autonomous', tools: [] };
    const refusals = [
      await call(keys.member, 'registry/update', { kind: 'actor', name: 'default', spec: autonomous }),
      await call(keys.member, 'registry/update', {
        kind: 'actor',
        name: 'default',
        spec: { localGraph: 'orchestrator', profile: 'guarded', tools: [], systemPrompt: 'Be terse.' },
      }),
      await call(keys.member, 'registry/delete', { kind: 'actor', name: 'default' }),
      await call(keys.member, 'registry/create', { kind: 'actor', name: 'loose', spec: autonomous }),
      await call(keys.member, 'registry/create', {
        kind: 'actor',
        name: 'tooled',
        spec: { localGraph: 'orchestrator', tools: ['read_file'] },
      }),
      await call(keys.member, 'registry/create', {
        kind: 'actor',
        name: 'pointed',
        spec: { localGraph: 'orchestrator', model: { model: 'm', baseUrl: model.baseUrl() } },
      }),
      await call(keys.member, 'sync/push', {
        changes: [{ kind: 'actor', name: 'default', op: 'upsert', baseRevision: 1, spec: autonomous }],
      }),
    ];
    for (const refused of refusals) {
      expect([refused.json.error?.code, reasonOf(refused)]).toEqual([-32003, 'ROLE_REQUIRED']);
      expect(refused.json.error.data[0].metadata).toMatchObject({ requiredRole: 'admin', heldRole: 'member' });
    }
    const stored = await ok(keys.member, 'registry/get', { kind: 'actor', name: 'default' });
    expect(stored).toMatchObject({ revision: 1, spec: { profile: 'guarded', tools: [] } });

    // Within those limits a member still writes actors: the server's model, the default profile, no tools.
    const own = await ok(keys.member, 'registry/create', {
      kind: 'actor',
      name: 'mine',
      spec: { localGraph: 'orchestrator', model: { model: 'other-model', temperature: 0.1 }, systemPrompt: 'Hi.' },
    });
    expect(own.revision).toBe(1);
    expect(
      (await ok(keys.member, 'registry/update', { kind: 'actor', name: 'mine', spec: { localGraph: 'orchestrator' } }))
        .revision,
    ).toBe(2);
    expect(
      (await ok(keys.member, 'registry/update', { kind: 'actor', name: 'default', labels: { team: 'a' } })).revision,
    ).toBe(2);

    // An admin sets what actors run with, within the operator's endpoints.
    const pointed = await ok(keys.admin, 'registry/create', {
      kind: 'actor',
      name: 'pointed',
      spec: { localGraph: 'orchestrator', profile: 'manual', model: { model: 'm', baseUrl: model.baseUrl() } },
    });
    expect(pointed.spec.model.baseUrl).toBe(model.baseUrl());
    // A member may edit it as long as what it runs with stays as the admin set it.
    const edited = await ok(keys.member, 'registry/update', {
      kind: 'actor',
      name: 'pointed',
      spec: {
        localGraph: 'orchestrator',
        profile: 'manual',
        systemPrompt: 'Answer in French.',
        model: { model: 'm', baseUrl: model.baseUrl() },
      },
    });
    expect(edited.revision).toBe(2);
    expect(
      (await ok(keys.admin, 'registry/update', { kind: 'actor', name: 'default', spec: autonomous })).spec.profile,
    ).toBe('autonomous');
  });

  it('an external agent and its credential are what an actor runs with: admin to set, kept when a member edits', async () => {
    const agent = { url: closedUrl, auth: { credential: 'agent-key-1' } };
    const refused = await call(keys.member, 'registry/create', {
      kind: 'actor',
      name: 'outsider',
      spec: { a2a: agent },
    });
    expect([refused.json.error?.code, reasonOf(refused)]).toEqual([-32003, 'ROLE_REQUIRED']);
    expect(refused.json.error.data[0].metadata.fields).toBe('spec.a2a.url,spec.a2a.auth');

    const made = await ok(keys.admin, 'registry/create', { kind: 'actor', name: 'outsider', spec: { a2a: agent } });
    expect(made.spec.a2a).toEqual({ url: closedUrl, auth: { credentialSet: true } });
    // A member edits it as shown (the credential left out, kept), but may not give another one.
    const edited = await ok(keys.member, 'registry/update', {
      kind: 'actor',
      name: 'outsider',
      spec: { description: 'Another agent', a2a: made.spec.a2a },
    });
    expect(edited.spec.a2a.auth).toEqual({ credentialSet: true });
    const swapped = await call(keys.member, 'registry/update', {
      kind: 'actor',
      name: 'outsider',
      spec: { a2a: { url: closedUrl, auth: { credential: 'mine' } } },
    });
    expect([swapped.json.error?.code, swapped.json.error?.data[0].metadata.fields]).toEqual([-32003, 'spec.a2a.auth']);
  });

  it('a model failure tells the caller a stable reason: HTTP 500, 401, non-JSON and a closed port read the same', async () => {
    const actors = {
      served: { localGraph: 'orchestrator' },
      closed: { localGraph: 'orchestrator', model: { model: 'm', baseUrl: closedUrl } },
    };
    for (const [name, spec] of Object.entries(actors)) {
      await ok(keys.admin, 'registry/create', { kind: 'actor', name, spec });
    }
    const session = async (actor: string) => (await ok(keys.member, 'session/create', { actor })).sessionId as string;
    const failures: string[] = [];
    for (const answer of [
      { status: 500, error: 'boom' },
      { status: 401, error: 'bad key' },
      // An admitted port where something else listens: a web page, or JSON that is no completion.
      { raw: '<html><body>Welcome to the intranet</body></html>', contentType: 'text/html' },
      { raw: '{"hello": "world"}', contentType: 'application/json' },
      { raw: 'data: {not json}\n\n', contentType: 'text/event-stream' },
    ]) {
      model.answerWith(answer);
      failures.push(await failedReason(server, keys.member, await session('served')));
    }
    failures.push((await failedReason(server, keys.member, await session('closed'))).replace('"closed"', '"served"'));
    for (const reason of failures) {
      expect(reason).toMatch(/^MODEL_UNAVAILABLE: the model of actor "served" is unavailable/);
      expect(reason.replace(/correlation id \S+/, '')).not.toMatch(/127\.0\.0\.1|\d{4,5}|HTTP|401|500|ECONN/);
    }
    const texts = new Set(failures.map((reason) => reason.replace(/correlation id \S+/, '')));
    expect(texts.size).toBe(1);
  });
});

/** SendMessage as `key` in session `contextId`; the failure text of the task it made. */
async function failedReason(server: TestServer, key: string, contextId: string): Promise<string> {
  const message = wireMessageV1('m', 'hello', { contextId });
  const answer = await rawCall(
    server.endpoint,
    { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { tenant: 'acme', message } },
    { ...V1, 'x-api-key': key },
  );
  const task = answer.json.result?.task;
  expect(task?.status?.state).toBe('TASK_STATE_FAILED');
  return String(task.status.message.parts[0].text);
}

describe.each(databaseTargets())('model endpoints checked again at connect time, on $kind', (target) => {
  it('an actor saved while its host was admitted calls nothing once the operator withdrew it', async () => {
    const model = await OpenAiCompatibleEndpoint.start({ tokens: ['fine'] });
    const elsewhere = await OpenAiCompatibleEndpoint.start({ tokens: ['elsewhere'] });
    const database = await target.create();
    const env = {
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'served-model',
    };
    const logLines: string[] = [];
    const logSink = { write: (line: string) => logLines.push(line) > 0 };
    let server = await startServer(database, { ...env, CLEVERAGENTS_MODEL_ALLOWED_HOSTS: `127.0.0.1` });
    try {
      const { ok } = extensionCalls(() => server);
      await ok('registry/create', {
        kind: 'actor',
        name: 'elsewhere',
        spec: { localGraph: 'orchestrator', model: { model: 'm', baseUrl: elsewhere.baseUrl() } },
      });
      await server.close();
      server = await startServer(database, env, { logSink });
      const sessionId = (await ok('session/create', { actor: 'elsewhere' })).sessionId as string;
      const answer = await rawCall(
        server.endpoint,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: wireMessageV1('m', 'a secret prompt', { contextId: sessionId }) },
        },
        V1,
      );
      const task = answer.json.result.task;
      expect(task.status.state).toBe('TASK_STATE_FAILED');
      const reason = String(task.status.message.parts[0].text);
      expect(reason).toMatch(/^MODEL_UNAVAILABLE/);
      expect(elsewhere.requests).toHaveLength(0);
      const correlationId = /correlation id (\S+)\)/.exec(reason)?.[1];
      const logged = logLines.find((line) => correlationId !== undefined && line.includes(correlationId));
      expect(logged).toContain('is not an admitted host');
    } finally {
      await server.close();
      await database.cleanup();
      await model.close();
      await elsewhere.close();
    }
  }, 60000);
});
