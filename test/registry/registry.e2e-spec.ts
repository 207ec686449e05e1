import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { REGISTRY_KINDS } from '../../packages/server/src/registry/registry.kinds.js';
import { INVALID_SPECS, OTHER_SPECS, VALID_SPECS, VALID_SPECS_ENV } from '../factories/registry.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import {
  extensionCalls,
  fieldsOf as fieldsInOrder,
  reasonOf,
  startServer,
  startServerWithBootstrapKey,
  type TestServer,
} from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The distinct fields a -32602 answer names, sorted. */
function fieldsOf(answer: { json: any }): string[] {
  return [...new Set(fieldsInOrder(answer))].sort();
}

const BUILTINS = [
  ['actor', 'default'],
  ['profile', 'autonomous'],
  ['profile', 'guarded'],
  ['profile', 'manual'],
  ['profile', 'supervised'],
];

describe.each(databaseTargets())('registry over HTTP on $kind', (target) => {
  describe('CRUD and errors (scheme none: the anonymous owner of everything)', () => {
    let database: TestDatabase;
    let server: TestServer;
    const { call, ok } = extensionCalls(() => server);

    beforeAll(async () => {
      database = await target.create();
      server = await startServer(database, VALID_SPECS_ENV);
    });
    afterAll(async () => {
      await ifAssigned(server)?.close();
      await database.cleanup();
    });

    it('a fresh installation: the default namespace holds the built-ins, in the change log as seq 1..5', async () => {
      const listed = await ok('registry/list', {});
      expect(listed.items.map((e: any) => [e.kind, e.name])).toEqual(BUILTINS);
      expect(listed).toMatchObject({ totalSize: 5, nextPageToken: '' });
      for (const entry of listed.items) {
        expect(entry).toMatchObject({
          namespace: 'default',
          revision: 1,
          builtin: true,
          createdBy: 'system:bootstrap',
        });
      }
      expect(listed.items[0].spec).toEqual({
        description: expect.any(String),
        localGraph: 'orchestrator',
        profile: 'guarded',
        tools: [],
      });
      expect(listed.items.map((e: any) => e.spec.gate)).toEqual([
        undefined,
        'autonomous',
        'supervised',
        'manual',
        'supervised',
      ]);
      const pulled = await ok('sync/pull', {});
      expect(pulled.changes.map((c: any) => [c.seq, c.op, c.revision])).toEqual([
        [1, 'upsert', 1],
        [2, 'upsert', 1],
        [3, 'upsert', 1],
        [4, 'upsert', 1],
        [5, 'upsert', 1],
      ]);
      expect(await ok('sync/status', {})).toEqual({
        namespace: 'default',
        latestSeq: 5,
        counts: { actor: 1, tool: 0, skill: 0, profile: 4, total: 5 },
      });
    });

    it.each(REGISTRY_KINDS)('%s: create, get, update, list, delete, re-create; every error code', async (kind) => {
      const name = `my-${kind}`;
      const key = { namespace: 'default', kind, name };
      const created = await ok('registry/create', { ...key, spec: VALID_SPECS[kind], labels: { team: 'a' } });
      expect(created).toEqual({
        id: expect.stringMatching(ULID),
        namespace: 'default',
        kind,
        name,
        spec: VALID_SPECS[kind],
        labels: { team: 'a' },
        revision: 1,
        builtin: false,
        createdAt: expect.stringMatching(ISO),
        createdBy: 'anonymous',
        updatedAt: created.createdAt,
        updatedBy: 'anonymous',
      });
      expect(await ok('registry/get', { kind, name })).toEqual(created);

      const duplicate = await call('registry/create', { ...key, spec: OTHER_SPECS[kind] });
      expect(duplicate.json.error.code).toBe(-32005);
      expect(reasonOf(duplicate)).toBe('REGISTRY_ENTRY_EXISTS');

      const updated = await ok('registry/update', { ...key, spec: OTHER_SPECS[kind], expectedRevision: 1 });
      expect(updated).toMatchObject({ id: created.id, spec: OTHER_SPECS[kind], labels: { team: 'a' }, revision: 2 });
      expect(updated.createdAt).toBe(created.createdAt);
      const stale = await call('registry/update', { ...key, labels: { team: 'b' }, expectedRevision: 1 });
      expect(stale.json.error.code).toBe(-32004);
      expect(reasonOf(stale)).toBe('REVISION_CONFLICT');
      expect(stale.json.error.data[0].metadata).toMatchObject({ expectedRevision: '1', currentRevision: '2' });
      const relabelled = await ok('registry/update', { ...key, labels: { team: 'b' } });
      expect(relabelled).toMatchObject({ spec: OTHER_SPECS[kind], labels: { team: 'b' }, revision: 3 });

      const byKind = await ok('registry/list', { kind });
      expect(byKind.items.map((e: any) => e.name)).toContain(name);
      expect(byKind.items.every((e: any) => e.kind === kind)).toBe(true);
      expect((await ok('registry/list', { labels: { team: 'b' } })).items.map((e: any) => e.name)).toEqual([name]);
      expect((await ok('registry/list', { labels: { team: 'a' } })).totalSize).toBe(0);

      const staleDelete = await call('registry/delete', { ...key, expectedRevision: 2 });
      expect(staleDelete.json.error.code).toBe(-32004);
      expect(await ok('registry/delete', { ...key, expectedRevision: 3 })).toEqual({
        ...key,
        revision: 4,
        deleted: true,
      });
      for (const [method, params] of [
        ['registry/get', key],
        ['registry/update', { ...key, labels: {} }],
        ['registry/delete', key],
      ] as const) {
        const missing = await call(method, params);
        expect(missing.json.error.code).toBe(-32001);
        expect(reasonOf(missing)).toBe('REGISTRY_ENTRY_NOT_FOUND');
      }
      // The name used again is a new entry whose revisions count on: an old revision never matches it.
      const again = await ok('registry/create', { ...key, spec: VALID_SPECS[kind] });
      expect(again).toMatchObject({ revision: 5, labels: {}, builtin: false });
      expect(again.id).not.toBe(created.id);

      const audit = await ok('audit/list', { namespace: 'default', pageSize: 100 });
      const mine = audit.items.filter((r: any) => r.target === `${kind}/${name}`);
      expect(mine.map((r: any) => [r.action, r.details.revision, r.details.via])).toEqual([
        ['registry.create', 5, 'registry'],
        ['registry.delete', 4, 'registry'],
        ['registry.update', 3, 'registry'],
        ['registry.update', 2, 'registry'],
        ['registry.create', 1, 'registry'],
      ]);
      expect(mine.every((r: any) => r.actor === 'anonymous' && typeof r.details.seq === 'number')).toBe(true);
    });

    it('answers -32001 NAMESPACE_NOT_FOUND for a namespace that does not exist', async () => {
      for (const [method, params] of [
        ['registry/get', { namespace: 'ghost', kind: 'actor', name: 'default' }],
        ['registry/list', { namespace: 'ghost' }],
        ['registry/create', { namespace: 'ghost', kind: 'skill', name: 's', spec: VALID_SPECS.skill }],
        ['registry/delete', { namespace: 'ghost', kind: 'actor', name: 'default' }],
        ['sync/pull', { namespace: 'ghost' }],
        ['sync/status', { namespace: 'ghost' }],
      ] as const) {
        const answer = await call(method, params);
        expect([method, answer.json.error?.code, reasonOf(answer)]).toEqual([method, -32001, 'NAMESPACE_NOT_FOUND']);
      }
    });

    it.each(INVALID_SPECS)(
      'refuses an invalid %s spec %j with -32602 naming %j, storing nothing',
      async (kind, spec, fields) => {
        const before = await ok('sync/status', {});
        for (const method of ['registry/create', 'registry/update']) {
          const answer = await call(method, { kind, name: kind === 'actor' ? 'default' : 'manual', spec });
          expect(answer.json.error.code).toBe(-32602);
          expect(fieldsOf(answer)).toEqual([...fields].sort());
        }
        expect(await ok('sync/status', {})).toEqual(before);
      },
    );

    it('says where a tool inputSchema is no valid JSON Schema', async () => {
      const inputSchema = { type: 'object', properties: { q: { type: 'array', items: { type: 'strin' } } } };
      const answer = await call('registry/create', {
        kind: 'tool',
        name: 'broken',
        spec: { description: 'd', runsOn: 'server', inputSchema },
      });
      const violations = (answer.json.error?.data ?? []).flatMap((d: any) => d?.fieldViolations ?? []);
      expect([answer.json.error?.code, violations]).toEqual([
        -32602,
        [
          {
            field: 'spec.inputSchema',
            description: expect.stringMatching(/^inputSchema\.properties\.q\.items\.type must be equal to one of/),
          },
        ],
      ]);
    });

    it('refuses bad keys, labels and paging with -32602 naming only the bad field', async () => {
      const cases: [string, Record<string, unknown>, string[]][] = [
        ['registry/create', { kind: 'agent', name: 'x', spec: {} }, ['kind']],
        ['registry/create', { kind: 'skill', name: 'Bad Name', spec: VALID_SPECS.skill }, ['name']],
        [
          'registry/create',
          { kind: 'skill', name: 's', spec: VALID_SPECS.skill, labels: { 'Bad Key': 'x' } },
          ['labels'],
        ],
        ['registry/create', { kind: 'skill', name: 's', spec: VALID_SPECS.skill, labels: { team: 7 } }, ['labels']],
        ['registry/create', { kind: 'skill', name: 's' }, ['spec']],
        ['registry/create', { kind: 'skill', name: 's', spec: VALID_SPECS.skill, colour: 'red' }, ['colour']],
        ['registry/update', { kind: 'skill', name: 's' }, ['labels', 'spec']],
        ['registry/update', { kind: 'actor', name: 'default', labels: {}, expectedRevision: 0 }, ['expectedRevision']],
        ['registry/get', { kind: 'actor' }, ['name']],
        ['registry/list', { pageSize: 500 }, ['pageSize']],
        ['registry/list', { pageToken: 'garbage' }, ['pageToken']],
        ['registry/list', { kind: 'agents' }, ['kind']],
      ];
      for (const [method, params, fields] of cases) {
        const answer = await call(method, params);
        expect([method, params, answer.json.error?.code, fieldsOf(answer)]).toEqual([method, params, -32602, fields]);
      }
      const members = await ok('namespace/members/set', { namespace: 'default', subject: 'oidc:a', role: 'viewer' });
      expect(members.subject).toBe('oidc:a');
      await ok('namespace/members/set', { namespace: 'default', subject: 'oidc:b', role: 'viewer' });
      const otherToken = (await ok('namespace/members/list', { namespace: 'default', pageSize: 1 })).nextPageToken;
      expect(fieldsOf(await call('registry/list', { pageToken: otherToken }))).toEqual(['pageToken']);
    });

    it('pages by keyset in (kind, name) order: every entry once, totalSize on each page', async () => {
      await ok('namespace/create', { namespace: 'paging' });
      for (let n = 0; n < 23; n++) {
        const kind = REGISTRY_KINDS[n % 3];
        await ok('registry/create', {
          namespace: 'paging',
          kind,
          name: `e-${String(n).padStart(2, '0')}`,
          spec: VALID_SPECS[kind],
          labels: { parity: n % 2 === 0 ? 'even' : 'odd' },
        });
      }
      const seen: string[] = [];
      let pageToken = '';
      do {
        const page = await ok('registry/list', { namespace: 'paging', pageSize: 5, pageToken });
        expect(page.totalSize).toBe(28);
        expect(page.items.length).toBeLessThanOrEqual(5);
        seen.push(...page.items.map((e: any) => `${e.kind}/${e.name}`));
        pageToken = page.nextPageToken;
      } while (pageToken);
      // Kinds in text order (actor, profile, skill, tool), then names: no kind is a prefix of another.
      expect(seen).toEqual([...seen].sort());
      expect(new Set(seen).size).toBe(28);
      const evenTools = await ok('registry/list', { namespace: 'paging', kind: 'tool', labels: { parity: 'even' } });
      expect(evenTools.items.map((e: any) => e.name)).toEqual(['e-04', 'e-10', 'e-16', 'e-22']);
    });

    it('built-ins come with every new namespace, can be changed, and a namespace holding user entries is not deleted', async () => {
      const made = await ok('namespace/create', { namespace: 'team' });
      expect(made.namespace).toBe('team');
      const listed = await ok('registry/list', { namespace: 'team' });
      expect(listed.items.map((e: any) => [e.kind, e.name])).toEqual(BUILTINS);
      expect(listed.items.every((e: any) => e.builtin && e.createdBy === 'anonymous')).toBe(true);
      // Only built-ins: the namespace goes, and its registry with it.
      expect(await ok('namespace/delete', { namespace: 'team' })).toEqual({ namespace: 'team', deleted: true });
      expect(reasonOf(await call('registry/list', { namespace: 'team' }))).toBe('NAMESPACE_NOT_FOUND');

      await ok('namespace/create', { namespace: 'team' });
      expect((await ok('sync/status', { namespace: 'team' })).latestSeq).toBe(5);
      const changed = await ok('registry/update', {
        namespace: 'team',
        kind: 'actor',
        name: 'default',
        spec: { graphId: 'remote-graph', profile: 'manual' },
      });
      expect(changed).toMatchObject({ builtin: false, revision: 2, spec: { graphId: 'remote-graph' } });
      const refused = await call('namespace/delete', { namespace: 'team' });
      expect(refused.json.error.code).toBe(-32004);
      expect(refused.json.error.data[0].metadata).toEqual({ namespace: 'team', holds: 'registryEntries' });
      await ok('registry/delete', { namespace: 'team', kind: 'actor', name: 'default' });
      await ok('registry/create', { namespace: 'team', kind: 'tool', name: 't', spec: VALID_SPECS.tool });
      expect((await call('namespace/delete', { namespace: 'team' })).json.error.code).toBe(-32004);
      await ok('registry/delete', { namespace: 'team', kind: 'tool', name: 't' });
      expect(await ok('namespace/delete', { namespace: 'team' })).toEqual({ namespace: 'team', deleted: true });
    });
  });

  describe('with API keys: roles, and nothing of one namespace seen or written from another', () => {
    let database: TestDatabase;
    let server: TestServer;
    const keys: Record<string, string> = {};
    const calls = extensionCalls(() => server);
    const call = (key: string, method: string, params: Record<string, unknown> = {}) =>
      calls.call(method, params, { 'x-api-key': key });
    const ok = (key: string, method: string, params: Record<string, unknown> = {}) =>
      calls.ok(method, params, { 'x-api-key': key });

    beforeAll(async () => {
      database = await target.create();
      let bootstrap: string;
      ({ server, bootstrapKey: bootstrap } = await startServerWithBootstrapKey(database, {
        CLEVERAGENTS_AUTH_SCHEMES: 'apiKey',
        ...VALID_SPECS_ENV,
      }));
      for (const namespace of ['acme', 'globex']) {
        await ok(bootstrap, 'namespace/create', { namespace });
        for (const role of ['owner', 'admin', 'member', 'viewer']) {
          const made = await ok(bootstrap, 'auth/apikey/create', { namespace, name: role, role });
          keys[`${namespace}-${role}`] = made.key;
        }
      }
    });
    afterAll(async () => {
      await ifAssigned(server)?.close();
      await database.cleanup();
    });

    it('viewers read; members write actors, tools and skills; profiles take an admin', async () => {
      const viewer = keys['acme-viewer'];
      expect((await ok(viewer, 'registry/list', {})).totalSize).toBe(5);
      expect((await ok(viewer, 'registry/get', { kind: 'profile', name: 'manual' })).namespace).toBe('acme');
      expect((await ok(viewer, 'sync/pull', {})).changes).toHaveLength(5);
      expect((await ok(viewer, 'sync/status', {})).latestSeq).toBe(5);
      for (const [method, params] of [
        ['registry/create', { kind: 'tool', name: 't', spec: VALID_SPECS.tool }],
        ['registry/update', { kind: 'actor', name: 'default', labels: {} }],
        ['registry/delete', { kind: 'actor', name: 'default' }],
        ['sync/push', { changes: [{ kind: 'tool', name: 't', op: 'upsert', spec: VALID_SPECS.tool }] }],
      ] as const) {
        const refused = await call(viewer, method, params);
        expect([method, refused.status, refused.json.error.code, reasonOf(refused)]).toEqual([
          method,
          403,
          -32003,
          'ROLE_REQUIRED',
        ]);
      }

      const member = keys['acme-member'];
      const tool = await ok(member, 'registry/create', { kind: 'tool', name: 'read_file', spec: VALID_SPECS.tool });
      expect(tool).toMatchObject({ namespace: 'acme', createdBy: expect.stringMatching(/^apikey:/) });
      expect(
        await ok(member, 'registry/update', { kind: 'actor', name: 'default', labels: { by: 'member' } }),
      ).toMatchObject({
        revision: 2,
      });
      const profileRefusals = [
        await call(member, 'registry/create', { kind: 'profile', name: 'loose', spec: OTHER_SPECS.profile }),
        await call(member, 'registry/update', { kind: 'profile', name: 'supervised', spec: OTHER_SPECS.profile }),
        await call(member, 'registry/delete', { kind: 'profile', name: 'manual' }),
        await call(member, 'sync/push', {
          changes: [
            { kind: 'tool', name: 'other', op: 'upsert', spec: VALID_SPECS.tool },
            { kind: 'profile', name: 'supervised', op: 'upsert', baseRevision: 1, spec: OTHER_SPECS.profile },
          ],
        }),
      ];
      for (const refused of profileRefusals) {
        expect(refused.json.error.code).toBe(-32003);
        expect(refused.json.error.data[0].metadata).toMatchObject({ requiredRole: 'admin', heldRole: 'member' });
      }
      // The refused push applied nothing, not even its tool.
      expect(reasonOf(await call(member, 'registry/get', { kind: 'tool', name: 'other' }))).toBe(
        'REGISTRY_ENTRY_NOT_FOUND',
      );
      const admin = keys['acme-admin'];
      expect(
        await ok(admin, 'registry/update', { kind: 'profile', name: 'supervised', spec: OTHER_SPECS.profile }),
      ).toMatchObject({ spec: OTHER_SPECS.profile, revision: 2 });
    });

    it('the globex owner finds nothing of acme, changes nothing there, and its own registry holds none of it', async () => {
      const acmeOwner = keys['acme-owner'];
      await ok(acmeOwner, 'registry/create', { kind: 'skill', name: 'acme-secret', spec: VALID_SPECS.skill });
      const acmeBefore = await ok(acmeOwner, 'sync/pull', { limit: 1000 });
      const globex = keys['globex-owner'];
      const attempts: [string, Record<string, unknown>][] = [
        ['registry/get', { kind: 'skill', name: 'acme-secret' }],
        ['registry/list', {}],
        ['registry/create', { kind: 'skill', name: 'planted', spec: VALID_SPECS.skill }],
        ['registry/update', { kind: 'skill', name: 'acme-secret', labels: { owned: 'globex' } }],
        ['registry/delete', { kind: 'skill', name: 'acme-secret' }],
        ['sync/pull', {}],
        ['sync/status', {}],
        ['sync/push', { changes: [{ kind: 'skill', name: 'acme-secret', op: 'delete', baseRevision: 1 }] }],
      ];
      for (const [method, params] of attempts) {
        const inAcme = await call(globex, method, { ...params, namespace: 'acme' });
        const nowhere = await call(globex, method, { ...params, namespace: 'nowhere' });
        expect([method, inAcme.json.error?.code, reasonOf(inAcme)]).toEqual([method, -32001, 'NAMESPACE_NOT_FOUND']);
        expect(inAcme.json.error.message.replace('acme', 'X')).toBe(nowhere.json.error.message.replace('nowhere', 'X'));
      }
      expect(await ok(acmeOwner, 'sync/pull', { limit: 1000 })).toEqual(acmeBefore);
      // In its own namespace, globex sees its own built-ins only; the same names are other entries.
      const own = await ok(globex, 'registry/list', { pageSize: 100 });
      expect(own.items.map((e: any) => [e.kind, e.name])).toEqual(BUILTINS);
      expect(own.items.every((e: any) => e.namespace === 'globex')).toBe(true);
      expect(reasonOf(await call(globex, 'registry/get', { kind: 'skill', name: 'acme-secret' }))).toBe(
        'REGISTRY_ENTRY_NOT_FOUND',
      );
      const pulled = await ok(globex, 'sync/pull', { limit: 1000 });
      expect(JSON.stringify(pulled)).not.toContain('acme');
      // Its own writes stay in globex.
      await ok(globex, 'sync/push', {
        changes: [{ kind: 'skill', name: 'acme-secret', op: 'upsert', spec: VALID_SPECS.skill }],
      });
      expect((await ok(acmeOwner, 'registry/get', { kind: 'skill', name: 'acme-secret' })).revision).toBe(1);
      expect((await ok(acmeOwner, 'sync/status', {})).latestSeq).toBe(acmeBefore.cursor);
    });
  });
});
