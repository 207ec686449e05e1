import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RpcMethodRegistry } from '../../packages/server/src/rpc/rpc-method.registry.js';
import {
  EXTENSION_METHOD_NAMES,
  METHODS,
  type ApiKeyView,
  type AuditRecord,
  type CreatedApiKey,
  type ExtensionMethodName,
  type HealthReport,
  type MemberView,
  type NamespaceUsage,
  type NamespaceView,
  type Page,
  type ParamsOf,
  type PlanStatusView,
  type PlanView,
  type PullResult,
  type RegistryEntry,
  type ResultOf,
  type ServerInfo,
  type SessionView,
  type SyncChange,
  type SyncStatus,
  type Whoami,
} from '../../packages/contract/src/index.js';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { rawCall, startServerWithBootstrapKey, type TestServer } from '../support/server.js';
import { wireMessageV1 } from '../factories/messages.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The contract's result types are true on the wire: a real server answers each method called here with
 * exactly the keys its result type in src/contract declares — none missing that the type requires, none
 * that it does not know. The key lists are checked against the types by the compiler, so a field added
 * to a type without being added here does not compile.
 */

/** Each key of T: `true` when T requires it, `'optional'` when T may leave it out. */
type Keys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? 'optional' : true };

/** What is wrong with `value`'s keys against `keys`: keys it has that are not declared, required ones it lacks. */
function keyProblems(
  value: unknown,
  keys: Record<string, true | 'optional'>,
): { unknown: string[]; missing: string[] } {
  const actual = typeof value === 'object' && value !== null ? Object.keys(value) : [];
  const declared = Object.keys(keys);
  return {
    unknown: actual.filter((key) => !declared.includes(key)).sort(),
    missing: declared.filter((key) => keys[key] === true && !actual.includes(key)).sort(),
  };
}

function expectKeys(what: string, value: unknown, keys: Record<string, true | 'optional'>): void {
  expect(typeof value === 'object' && value !== null && !Array.isArray(value)).toBe(true);
  expect({ what, ...keyProblems(value, keys) }).toEqual({ what, unknown: [], missing: [] });
}

/** A page, and each of its items. */
function expectPage(what: string, value: unknown, itemKeys: Record<string, true | 'optional'>): void {
  expectKeys(what, value, PAGE);
  for (const [i, item] of (value as Page<unknown>).items.entries()) expectKeys(`${what} items[${i}]`, item, itemKeys);
}

const PAGE = { items: true, nextPageToken: true, totalSize: true } satisfies Keys<Page<unknown>>;
const USAGE = { tokens: true, toolCalls: true, wallTimeMs: true } satisfies Keys<SessionView['usage']>;
const USAGE_COUNTS = { ...USAGE, sessions: true, tasks: true } satisfies Keys<NamespaceUsage['totals']>;
const NAMESPACE_USAGE = {
  namespace: true,
  includeChildren: true,
  since: true,
  until: true,
  totals: true,
  byActor: true,
  byOwner: true,
  byNamespace: true,
} satisfies Keys<NamespaceUsage>;
const SESSION = {
  sessionId: true,
  namespace: true,
  owner: true,
  actor: true,
  profile: true,
  title: true,
  budget: true,
  usage: true,
  status: true,
  origin: true,
  revision: true,
  createdAt: true,
  updatedAt: true,
  closedAt: true,
} satisfies Keys<SessionView>;
const PLAN = {
  planId: true,
  namespace: true,
  owner: true,
  sessionId: true,
  goal: true,
  entries: true,
  profile: true,
  budget: true,
  usage: true,
  status: true,
  revision: true,
  taskId: true,
  createdAt: true,
  updatedAt: true,
} satisfies Keys<PlanView>;
const PLAN_ENTRY = { content: true, priority: true, status: true } satisfies Keys<PlanView['entries'][number]>;
const PLAN_STATUS = {
  planId: true,
  status: true,
  revision: true,
  entries: true,
  taskId: true,
} satisfies Keys<PlanStatusView>;
const PLAN_STATUS_COUNTS = {
  total: true,
  pending: true,
  inProgress: true,
  completed: true,
  failed: true,
  skipped: true,
} satisfies Keys<PlanStatusView['entries']>;
const REGISTRY_ENTRY = {
  id: true,
  namespace: true,
  kind: true,
  name: true,
  spec: true,
  labels: true,
  revision: true,
  builtin: true,
  createdAt: true,
  createdBy: true,
  updatedAt: true,
  updatedBy: true,
} satisfies Keys<RegistryEntry>;
const SERVER_INFO = {
  server: true,
  a2a: true,
  extension: true,
  actorBackend: true,
  database: true,
} satisfies Keys<ServerInfo>;
const SERVER_INFO_PARTS = {
  server: { name: true, version: true, node: true, uptimeSeconds: true } satisfies Keys<ServerInfo['server']>,
  a2a: { versions: true } satisfies Keys<ServerInfo['a2a']>,
  extension: { uri: true, version: true, supportedVersions: true } satisfies Keys<ServerInfo['extension']>,
  database: { kind: true, serverVersion: true } satisfies Keys<ServerInfo['database']>,
};
const HEALTH = { status: true, checks: true } satisfies Keys<HealthReport>;
const HEALTH_CHECKS = {
  database: true,
  actorBackend: true,
  identityProvider: 'optional',
  credentialCache: 'optional',
} satisfies Keys<HealthReport['checks']>;
const WHOAMI = {
  subject: true,
  displayName: true,
  scheme: true,
  defaultNamespace: true,
  defaultNamespaceRole: true,
  grants: true,
  apiKeyId: 'optional',
  expiresAt: 'optional',
} satisfies Keys<Whoami>;
const GRANT = { namespace: true, role: true } satisfies Keys<Whoami['grants'][number]>;
const CREATED_API_KEY = {
  key: true,
  id: true,
  name: true,
  namespace: true,
  role: true,
  createdAt: true,
  expiresAt: true,
} satisfies Keys<CreatedApiKey>;
const API_KEY = {
  id: true,
  prefix: true,
  name: true,
  namespace: true,
  role: true,
  status: true,
  createdBy: true,
  createdAt: true,
  expiresAt: true,
  revokedAt: true,
  revokedBy: true,
  lastUsedAt: true,
  revision: true,
} satisfies Keys<ApiKeyView>;
const AUDIT_RECORD = {
  id: true,
  at: true,
  namespace: true,
  actor: true,
  action: true,
  target: true,
  details: true,
  requestId: true,
} satisfies Keys<AuditRecord>;
const NAMESPACE = {
  namespace: true,
  parent: true,
  displayName: true,
  description: true,
  revision: true,
  createdAt: true,
  updatedAt: true,
  createdBy: true,
} satisfies Keys<NamespaceView>;
const MEMBER = {
  namespace: true,
  subject: true,
  role: true,
  revision: true,
  createdAt: true,
  updatedAt: true,
  createdBy: true,
} satisfies Keys<MemberView>;
const SYNC_STATUS = { namespace: true, latestSeq: true, counts: true } satisfies Keys<SyncStatus>;
const SYNC_COUNTS = {
  actor: true,
  tool: true,
  skill: true,
  profile: true,
  total: true,
} satisfies Keys<SyncStatus['counts']>;
const PULL_RESULT = { changes: true, cursor: true, hasMore: true } satisfies Keys<PullResult>;
const SYNC_CHANGE = {
  seq: true,
  kind: true,
  name: true,
  op: true,
  revision: true,
  entity: 'optional',
} satisfies Keys<SyncChange>;

describe('the contract on the wire: results have exactly the keys their types declare (embedded)', () => {
  let db: TestDatabase;
  let server: TestServer;
  let key: string;

  /** A typed call, as a client makes it: params and result are the contract's for `method`. */
  async function call<M extends ExtensionMethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    const { json } = await rawCall(server.endpoint, { jsonrpc: '2.0', id: 1, method, params }, { 'x-api-key': key });
    expect({ method, error: json.error }).toEqual({ method, error: undefined });
    return json.result as ResultOf<M>;
  }

  beforeAll(async () => {
    db = await createEmbeddedTestDatabase();
    ({ server, bootstrapKey: key } = await startServerWithBootstrapKey(db));
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('the server registers a handler for every name of METHODS, and for nothing else', () => {
    expect(server.app.get(RpcMethodRegistry).names()).toEqual([...EXTENSION_METHOD_NAMES].sort());
  });

  it('sessions: create, get, list, history', async () => {
    const made = await call(METHODS.session.create, { title: 'contract', budget: { tokens: 1000 } });
    expectKeys('session/create', made, SESSION);
    expectKeys('session/create usage', made.usage, USAGE);
    const got = await call(METHODS.session.get, { sessionId: made.sessionId });
    expectKeys('session/get', got, SESSION);
    expect(got).toEqual(made);
    const listed = await call(METHODS.session.list, { pageSize: 5 });
    expectPage('session/list', listed, SESSION);
    expect(listed.items.map((s) => s.sessionId)).toContain(made.sessionId);

    const sent = await rawCall(
      server.endpoint,
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'SendMessage',
        params: { message: wireMessageV1('tck-complete-task', 'hello', { contextId: made.sessionId }) },
      },
      { 'x-api-key': key, 'a2a-version': '1.0' },
    );
    expect(sent.json.error).toBeUndefined();
    const history = await call(METHODS.session.history, { sessionId: made.sessionId });
    expectKeys('session/history', history, PAGE);
    expect(history.items).toHaveLength(1);
    expect(history.items[0]).toMatchObject({ contextId: made.sessionId });
  });

  it('plans: create, get, status, list', async () => {
    const made = await call(METHODS.plan.create, {
      goal: 'Check the contract',
      entries: [{ content: 'call every method' }, { content: 'compare keys', priority: 'high' }],
    });
    expectKeys('plan/create', made, PLAN);
    expectKeys('plan/create usage', made.usage, USAGE);
    for (const entry of made.entries) expectKeys('plan/create entry', entry, PLAN_ENTRY);
    expectKeys('plan/get', await call(METHODS.plan.get, { planId: made.planId }), PLAN);
    const status = await call(METHODS.plan.status, { planId: made.planId });
    expectKeys('plan/status', status, PLAN_STATUS);
    expectKeys('plan/status entries', status.entries, PLAN_STATUS_COUNTS);
    const listed = await call(METHODS.plan.list, { status: 'draft' });
    expectPage('plan/list', listed, PLAN);
    expect(listed.items.map((p) => p.planId)).toContain(made.planId);
  });

  it('registry: list and get', async () => {
    const listed = await call(METHODS.registry.list, { kind: 'actor' });
    expectPage('registry/list', listed, REGISTRY_ENTRY);
    expect(listed.items.length).toBeGreaterThan(0);
    expectKeys('registry/get', await call(METHODS.registry.get, { kind: 'actor', name: 'default' }), REGISTRY_ENTRY);
  });

  it('diagnostics: info and health', async () => {
    const info = await call(METHODS.diagnostics.info, {});
    expectKeys('diagnostics/info', info, SERVER_INFO);
    for (const part of ['server', 'a2a', 'extension', 'database'] as const) {
      expectKeys(`diagnostics/info ${part}`, info[part], SERVER_INFO_PARTS[part]);
    }
    const health = await call(METHODS.diagnostics.health, {});
    expectKeys('diagnostics/health', health, HEALTH);
    expectKeys('diagnostics/health checks', health.checks, HEALTH_CHECKS);
  });

  it('auth: whoami, and API keys created and listed', async () => {
    const me = await call(METHODS.auth.whoami, {});
    expectKeys('auth/whoami', me, WHOAMI);
    expect(me.apiKeyId).toEqual(expect.any(String));
    for (const grant of me.grants) expectKeys('auth/whoami grant', grant, GRANT);
    expectKeys(
      'auth/apikey/create',
      await call(METHODS.auth.apikeyCreate, { name: 'contract', role: 'viewer' }),
      CREATED_API_KEY,
    );
    const keys = await call(METHODS.auth.apikeyList, {});
    expectPage('auth/apikey/list', keys, API_KEY);
    expect(keys.items.length).toBeGreaterThan(0);
  });

  it('namespaces and the audit log', async () => {
    expectKeys('namespace/get', await call(METHODS.namespace.get, { namespace: 'default' }), NAMESPACE);
    expectPage('namespace/list', await call(METHODS.namespace.list, {}), NAMESPACE);
    const member = await call(METHODS.namespace.membersSet, {
      namespace: 'default',
      subject: 'oidc:contract',
      role: 'viewer',
    });
    expectKeys('namespace/members/set', member, MEMBER);
    const members = await call(METHODS.namespace.membersList, { namespace: 'default' });
    expectPage('namespace/members/list', members, MEMBER);
    expect(members.items.map((m) => m.subject)).toContain('oidc:contract');
    // The sessions test made one here and sent it a message.
    const usage = await call(METHODS.namespace.usage, { namespace: 'default' });
    expectKeys('namespace/usage', usage, NAMESPACE_USAGE);
    expectKeys('namespace/usage totals', usage.totals, USAGE_COUNTS);
    expect(usage.byActor.length).toBeGreaterThan(0);
    for (const actor of usage.byActor) expectKeys('namespace/usage byActor', actor, { ...USAGE_COUNTS, actor: true });
    for (const owner of usage.byOwner) expectKeys('namespace/usage byOwner', owner, { ...USAGE_COUNTS, owner: true });
    for (const namespace of usage.byNamespace) {
      expectKeys('namespace/usage byNamespace', namespace, { ...USAGE_COUNTS, namespace: true });
    }
    const audit = await call(METHODS.audit.list, { namespace: 'default', action: 'apikey.create' });
    expectPage('audit/list', audit, AUDIT_RECORD);
    expect(audit.items.length).toBeGreaterThan(0);
  });

  it('sync: status and pull', async () => {
    const status = await call(METHODS.sync.status, {});
    expectKeys('sync/status', status, SYNC_STATUS);
    expectKeys('sync/status counts', status.counts, SYNC_COUNTS);
    const pulled = await call(METHODS.sync.pull, { limit: 5 });
    expectKeys('sync/pull', pulled, PULL_RESULT);
    expect(pulled.changes.length).toBeGreaterThan(0);
    for (const change of pulled.changes) {
      expectKeys('sync/pull change', change, SYNC_CHANGE);
      if (change.entity) expectKeys('sync/pull entity', change.entity, REGISTRY_ENTRY);
    }
  });

  it('the check bites: a key the type does not know, or a required one missing, is reported', () => {
    const { createdAt: _dropped, ...withoutCreatedAt } = { ...SESSION };
    void _dropped;
    expect(keyProblems({ ...withoutCreatedAt, secret: 1 }, SESSION)).toEqual({
      unknown: ['secret'],
      missing: ['createdAt'],
    });
    expect(
      keyProblems(
        {
          subject: 's',
          displayName: 'd',
          scheme: 'apiKey',
          defaultNamespace: 'default',
          defaultNamespaceRole: null,
          grants: [],
        },
        WHOAMI,
      ),
    ).toEqual({
      unknown: [],
      missing: [],
    });
  });
});
