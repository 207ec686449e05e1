import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, type CleverAgentsClient } from '../../packages/client/src/node.js';
import type { NamespaceUsage, SessionView, UsageCounts } from '../../packages/contract/src/index.js';
import { SessionRepository } from '../../packages/server/src/session/session.repository.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { wireMessage, type Json } from '../support/orchestration.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { fieldsOf, keyedCalls, reasonOf, startServerWithBootstrapKey, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * `_cleveragents/namespace/usage` (docs/protocol.md §6.1): what a namespace's sessions used, summed in all, by
 * actor, by owner and by namespace. Turns run on the local backend against a model endpoint that reports its
 * tokens, so usage is recorded as it is in production; a session's tool calls are added through the
 * repository call a turn makes. Sums are checked against each session's own `usage` (session/get).
 */

/** A session as the test made it: whose key reads it, and how many messages it was sent. */
interface Made {
  namespace: string;
  sessionId: string;
  key: string;
  messages: number;
}

type Group = UsageCounts & Record<string, unknown>;

const ZERO: UsageCounts = { tokens: 0, toolCalls: 0, wallTimeMs: 0, sessions: 0, tasks: 0 };

describe.each(databaseTargets())('namespace usage on $kind', (target) => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let ownerKey: string;
  let adminKey: string;
  let aliceKey: string;
  let bobKey: string;
  const subjects = new Map<string, string>();
  const made: Made[] = [];
  /** Each session's view once its counts settled, by id. */
  const views = new Map<string, SessionView>();
  const { rpc, call, ok } = keyedCalls(() => server);

  async function session(key: string, namespace: string, actor: string, messages: number): Promise<Made> {
    const { sessionId } = await ok(key, 'session/create', { namespace, actor });
    for (let sent = 0; sent < messages; sent++) {
      const answer = await rpc(key, 'SendMessage', {
        tenant: namespace,
        message: wireMessage(`Say something, ${sent}`, { contextId: sessionId }),
      });
      expect(answer.json.error).toBeUndefined();
      expect((answer.json.result.task as Json).status.state).toBe('TASK_STATE_COMPLETED');
    }
    const one = { namespace, sessionId, key, messages };
    made.push(one);
    return one;
  }

  const viewOf = async (one: Made): Promise<SessionView> =>
    ok(one.key, 'session/get', { namespace: one.namespace, sessionId: one.sessionId });

  /** What the sessions in `picked` used, summed as the report should sum them. */
  function sumOf(picked: Made[]): UsageCounts {
    const sum = { ...ZERO };
    for (const one of picked) {
      const usage = views.get(one.sessionId)!.usage;
      sum.tokens += usage.tokens;
      sum.toolCalls += usage.toolCalls;
      sum.wallTimeMs += usage.wallTimeMs;
      sum.sessions += 1;
      sum.tasks += one.messages;
    }
    return sum;
  }

  /** `picked` summed per the key `keyOf` gives, as `{[field]: key, ...sums}`, sorted by key. */
  function groupsOf(picked: Made[], field: string, keyOf: (one: Made) => string): Group[] {
    const keys = [...new Set(picked.map(keyOf))].sort();
    return keys.map((key) => ({ [field]: key, ...sumOf(picked.filter((one) => keyOf(one) === key)) }));
  }

  const byKey = (groups: Group[], field: string) =>
    [...groups].sort((a, b) => String(a[field]).localeCompare(String(b[field])));

  /** `report` holds exactly the sums of `picked`, each breakdown most tokens first. */
  function expectReport(report: NamespaceUsage, picked: Made[]): void {
    expect(report.totals).toEqual(sumOf(picked));
    const actorOf = (one: Made) => views.get(one.sessionId)!.actor;
    const ownerOf = (one: Made) => views.get(one.sessionId)!.owner;
    expect(byKey(report.byActor, 'actor')).toEqual(groupsOf(picked, 'actor', actorOf));
    expect(byKey(report.byOwner, 'owner')).toEqual(groupsOf(picked, 'owner', ownerOf));
    expect(byKey(report.byNamespace, 'namespace')).toEqual(groupsOf(picked, 'namespace', (one) => one.namespace));
    for (const groups of [report.byActor, report.byOwner, report.byNamespace]) {
      const tokens = groups.map((group) => group.tokens);
      expect(tokens).toEqual([...tokens].sort((a, b) => b - a));
    }
  }

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start({
      tokens: ['Fine.'],
      usage: { promptTokens: 10, completionTokens: 2 },
    });
    db = await target.create();
    ({ server, bootstrapKey: ownerKey } = await startServerWithBootstrapKey(db, {
      CLEVERAGENTS_AUTH_SCHEMES: 'apiKey',
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'usage',
    }));
    for (const namespace of ['acme', 'acme/platform', 'other']) await ok(ownerKey, 'namespace/create', { namespace });
    const keyIn = async (name: string, role: string) =>
      (await ok(ownerKey, 'auth/apikey/create', { namespace: 'acme', name, role })).key as string;
    adminKey = await keyIn('admin', 'admin');
    aliceKey = await keyIn('alice', 'member');
    bobKey = await keyIn('bob', 'member');
    for (const key of [ownerKey, aliceKey, bobKey]) {
      subjects.set(key, (await ok(key, 'auth/whoami', {})).subject as string);
    }
    await ok(ownerKey, 'registry/create', {
      namespace: 'acme',
      kind: 'actor',
      name: 'reviewer',
      spec: { description: 'A second actor', localGraph: 'orchestrator', model: { model: 'reviewer' } },
    });

    await session(aliceKey, 'acme', 'default', 1);
    await session(aliceKey, 'acme', 'reviewer', 2);
    await session(bobKey, 'acme', 'default', 1);
    // A session nothing ran in: counted, with nothing used.
    await session(bobKey, 'acme', 'default', 0);
    await session(bobKey, 'acme/platform', 'default', 1);
    await session(ownerKey, 'other', 'default', 1);
    // Tool calls, recorded as a turn records them.
    const reviewer = made[1];
    await server.app
      .get(SessionRepository)
      .addUsage({ namespace: 'acme', owner: subjects.get(aliceKey)! }, reviewer.sessionId, {
        tokens: 0,
        toolCalls: 3,
        wallTimeMs: 0,
      });

    // A turn writes its last counts as it rests, maybe just after its answer: wait until they stop moving.
    let last = '';
    await until(
      async () => {
        const seen = await Promise.all(made.map(viewOf));
        const now = JSON.stringify(seen.map((view) => view.usage));
        const counted = seen.every((view, i) => made[i].messages === 0 || view.usage.tokens > 0);
        const settled = counted && now === last;
        last = now;
        if (settled) for (const view of seen) views.set(view.sessionId, view);
        return settled;
      },
      'the usage of the sessions settled',
      20_000,
      200,
    );
  }, 120_000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
  });

  it('sums the sessions of the namespace: in all, by actor, by owner; a child namespace only when asked', async () => {
    const acme = made.filter((one) => one.namespace === 'acme');
    const report: NamespaceUsage = await ok(adminKey, 'namespace/usage', { namespace: 'acme' });
    expect(report).toMatchObject({ namespace: 'acme', includeChildren: false, since: null, until: null });
    expectReport(report, acme);
    // What was recorded is really there: turns counted tokens and time, the repository's tool calls.
    expect(report.totals).toMatchObject({ sessions: 4, tasks: 4, toolCalls: 3 });
    expect(report.totals.tokens).toBeGreaterThan(0);
    expect(report.totals.wallTimeMs).toBeGreaterThan(0);
    expect(report.byActor.map((group) => group.actor).sort()).toEqual(['default', 'reviewer']);
    expect(report.byOwner.map((group) => group.owner).sort()).toEqual(
      [subjects.get(aliceKey), subjects.get(bobKey)].sort(),
    );

    const withChildren: NamespaceUsage = await ok(adminKey, 'namespace/usage', {
      namespace: 'acme',
      includeChildren: true,
    });
    expect(withChildren.includeChildren).toBe(true);
    expectReport(withChildren, [...acme, ...made.filter((one) => one.namespace === 'acme/platform')]);
    expect(withChildren.byNamespace.map((group) => group.namespace).sort()).toEqual(['acme', 'acme/platform']);

    // A child on its own; an admin of the parent is one there too.
    const platform: NamespaceUsage = await ok(adminKey, 'namespace/usage', { namespace: 'acme/platform' });
    expectReport(
      platform,
      made.filter((one) => one.namespace === 'acme/platform'),
    );
  });

  it('a window picks the sessions created in it, since inclusive, until exclusive', async () => {
    const tree = made.filter((one) => one.namespace.startsWith('acme'));
    // The window's edge is a session's own creation instant: bob's first.
    const edge = views.get(made[2].sessionId)!.createdAt;
    const createdAt = (one: Made) => views.get(one.sessionId)!.createdAt;
    const later = tree.filter((one) => createdAt(one) >= edge);
    const earlier = tree.filter((one) => createdAt(one) < edge);
    expect(later.length).toBeGreaterThan(0);
    expect(earlier.length).toBeGreaterThan(0);

    const since: NamespaceUsage = await ok(adminKey, 'namespace/usage', {
      namespace: 'acme',
      includeChildren: true,
      since: edge,
    });
    expect(since).toMatchObject({ since: edge, until: null });
    expectReport(since, later);

    const untilEdge: NamespaceUsage = await ok(adminKey, 'namespace/usage', {
      namespace: 'acme',
      includeChildren: true,
      until: edge,
    });
    expectReport(untilEdge, earlier);

    // A bare date is midnight UTC; a window holding no session sums to nothing.
    const empty: NamespaceUsage = await ok(adminKey, 'namespace/usage', {
      namespace: 'acme',
      since: '2100-01-01',
      until: null,
    });
    expect(empty).toEqual({
      namespace: 'acme',
      includeChildren: false,
      since: '2100-01-01T00:00:00.000Z',
      until: null,
      totals: ZERO,
      byActor: [],
      byOwner: [],
      byNamespace: [],
    });
  });

  it('a member is refused ROLE_REQUIRED; an unknown namespace is NAMESPACE_NOT_FOUND', async () => {
    const refused = await call(aliceKey, 'namespace/usage', { namespace: 'acme' });
    expect({ code: refused.json.error?.code, reason: reasonOf(refused) }).toEqual({
      code: -32003,
      reason: 'ROLE_REQUIRED',
    });
    // One the caller holds no role in, and one below its own that does not exist, answer alike.
    for (const [key, namespace] of [
      [adminKey, 'other'],
      [adminKey, 'acme/missing'],
      [ownerKey, 'nowhere'],
    ]) {
      const missing = await call(key, 'namespace/usage', { namespace });
      expect({ namespace, code: missing.json.error?.code, reason: reasonOf(missing) }).toEqual({
        namespace,
        code: -32001,
        reason: 'NAMESPACE_NOT_FOUND',
      });
    }
  });

  it.each([
    [{ namespace: 'acme', since: 'yesterday' }, ['since']],
    [{ namespace: 'acme', until: '2026-02-30' }, ['until']],
    [{ namespace: 'acme', since: '2026-12-02T00:00:00Z', until: '2026-12-01T00:00:00Z' }, ['until']],
    [{ namespace: 'acme', since: '2026-12-01T00:00:00Z', until: '2026-12-01T00:00:00Z' }, ['until']],
    [{ namespace: 'acme', includeChildren: 'yes' }, ['includeChildren']],
    [{ namespace: 'acme', colour: 'blue' }, ['colour']],
    [{ namespace: 'Acme' }, ['namespace']],
    [{}, ['namespace']],
  ])('bad params %j are -32602 naming %j', async (params, fields) => {
    const answer = await call(adminKey, 'namespace/usage', params);
    expect({ code: answer.json.error?.code, fields: fieldsOf(answer) }).toEqual({ code: -32602, fields });
  });

  it("the client library's namespaces.usage calls it, typed, and throws its errors", async () => {
    let client: CleverAgentsClient | undefined;
    try {
      client = await connect({ server: server.baseUrl, apiKey: adminKey });
      const report = await client.namespaces.usage({ namespace: 'acme', includeChildren: true });
      expect(report.totals).toEqual(sumOf(made.filter((one) => one.namespace.startsWith('acme'))));
      await expect(client.namespaces.usage({ namespace: 'acme', since: 'soon' })).rejects.toMatchObject({
        code: -32602,
        fieldViolations: [expect.objectContaining({ field: 'since' })],
      });
    } finally {
      await client?.close();
    }
  });
});
