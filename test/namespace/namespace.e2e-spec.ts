import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { operatorActor } from '../../packages/server/src/common/actor.js';
import { ValidationError } from '../../packages/server/src/common/domain.errors.js';
import { acting, principalWith } from '../factories/principals.js';
import { databaseTargets } from '../support/database.js';
import { openIdentityFixture, rejectionOf, type IdentityFixture } from '../support/identity-database.js';
import { ifAssigned } from '../support/assigned.js';

const root = principalWith('oidc:root', { '*': 'owner' });
/** Admin of the default namespace: the installation's administrators, who create top-level namespaces. */
const alice = principalWith('oidc:alice', { default: 'admin' });

describe.each(databaseTargets())('NamespaceService on $kind', (target) => {
  let fx: IdentityFixture;

  beforeAll(async () => {
    fx = await openIdentityFixture(target);
  });
  afterAll(async () => {
    await ifAssigned(fx)?.close();
  });
  beforeEach(async () => {
    await fx.reset();
  });

  async function tree(...slugs: string[]): Promise<void> {
    for (const namespace of slugs) await fx.namespaces.create({ namespace }, acting(root));
  }

  async function members(namespace: string): Promise<Record<string, string>> {
    const page = await fx.members.listMembers(namespace, { pageSize: 100 });
    return Object.fromEntries(page.items.map((m) => [m.subject, m.role]));
  }

  describe('create and get', () => {
    it('creates a top-level namespace whose creator becomes its owner member', async () => {
      const created = await fx.namespaces.create(
        { namespace: 'acme', displayName: 'ACME Corp', description: 'the tenant' },
        acting(alice),
      );
      expect(created).toEqual({
        namespace: 'acme',
        parent: null,
        displayName: 'ACME Corp',
        description: 'the tenant',
        revision: 1,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updatedAt: created.createdAt,
        createdBy: 'oidc:alice',
      });
      expect(await fx.namespaces.get('acme')).toEqual(created);
      expect(await members('acme')).toEqual({ 'oidc:alice': 'owner' });
    });

    it('adds no membership for a creator that is already owner there through a grant', async () => {
      await fx.namespaces.create({ namespace: 'acme' }, acting(root));
      const acmeOwner = principalWith('oidc:olga', { acme: 'owner' });
      const child = await fx.namespaces.create({ namespace: 'acme/platform' }, acting(acmeOwner));
      expect(child).toMatchObject({ namespace: 'acme/platform', parent: 'acme', displayName: 'platform' });
      expect(await members('acme/platform')).toEqual({});
      expect(await members('acme')).toEqual({});
    });

    it('an admin of the parent creating a child becomes the child owner', async () => {
      await tree('acme');
      const acmeAdmin = principalWith('oidc:adam', { acme: 'admin' });
      await fx.namespaces.create({ namespace: 'acme/web' }, acting(acmeAdmin));
      expect(await members('acme/web')).toEqual({ 'oidc:adam': 'owner' });
    });

    it('refuses a child whose parent does not exist (-32001 naming the parent)', async () => {
      const error = await rejectionOf(fx.namespaces.create({ namespace: 'ghost/child' }, acting(root)));
      expect(error.kind).toBe('not-found');
      expect(error.reason).toBe('NAMESPACE_NOT_FOUND');
      expect(error.metadata).toEqual({ namespace: 'ghost' });
      expect(await fx.directory.existing(['ghost/child'])).toEqual(new Set());
    });

    it('refuses a duplicate (-32005) and leaves the first one as it was', async () => {
      await fx.namespaces.create({ namespace: 'acme', displayName: 'First' }, acting(alice));
      const error = await rejectionOf(fx.namespaces.create({ namespace: 'acme', displayName: 'Second' }, acting(root)));
      expect(error.kind).toBe('duplicate');
      expect(error.reason).toBe('NAMESPACE_EXISTS');
      expect((await fx.namespaces.get('acme')).displayName).toBe('First');
    });

    it('answers an existing namespace the caller holds no role in as get does: -32001 NAMESPACE_NOT_FOUND', async () => {
      await fx.namespaces.create({ namespace: 'hidden', displayName: 'Hidden' }, acting(root));
      const outsider = principalWith('oidc:bob', { default: 'admin' });
      const created = await rejectionOf(fx.namespaces.create({ namespace: 'hidden' }, acting(outsider)));
      const got = await rejectionOf(fx.namespaces.get('nowhere'));
      expect([created.kind, created.reason, created.metadata]).toEqual([got.kind, got.reason, { namespace: 'hidden' }]);
      expect((await fx.namespaces.get('hidden')).displayName).toBe('Hidden');
      expect(await members('hidden')).toEqual({}); // root owns everything by its grant; bob was not added
      // Whoever holds a role there may know it exists.
      const viewer = principalWith('oidc:vera', { default: 'admin', hidden: 'viewer' });
      expect((await rejectionOf(fx.namespaces.create({ namespace: 'hidden' }, acting(viewer)))).reason).toBe(
        'NAMESPACE_EXISTS',
      );
    });

    it('refuses what is no slug, or a blank display name, as -32602 naming the field', async () => {
      for (const namespace of ['Acme', 'acme/', 'a'.repeat(201), '*']) {
        const error = await rejectionOf(fx.namespaces.create({ namespace }, acting(root)));
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as ValidationError).violations.map((v) => v.field)).toEqual(['namespace']);
      }
      const blank = await rejectionOf(fx.namespaces.create({ namespace: 'ok', displayName: '  ' }, acting(root)));
      expect((blank as ValidationError).violations.map((v) => v.field)).toEqual(['displayName']);
    });

    it('answers -32001 for a namespace that does not exist', async () => {
      for (const namespace of ['nope', 'Not A Slug']) {
        const error = await rejectionOf(fx.namespaces.get(namespace));
        expect(error.reason).toBe('NAMESPACE_NOT_FOUND');
      }
    });

    it('creates concurrently without a second winner', async () => {
      const outcomes = await Promise.allSettled(
        [1, 2, 3].map((n) => fx.namespaces.create({ namespace: 'race', displayName: `n${n}` }, acting(alice))),
      );
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as { reason: string }] : []));
      expect(failures.map((f) => f.reason)).toEqual(['NAMESPACE_EXISTS', 'NAMESPACE_EXISTS']);
    });
  });

  describe('listVisible', () => {
    beforeEach(async () => {
      await tree('acme', 'acme/platform', 'acme/platform/web', 'acme/sales', 'acme-corp', 'beta', 'beta/x');
    });

    it('lists a grant and everything below it, in slug order, and nothing beside it', async () => {
      const page = await fx.namespaces.listVisible(['acme'], {});
      expect(page.items.map((n) => n.namespace)).toEqual(['acme', 'acme/platform', 'acme/platform/web', 'acme/sales']);
      expect(page).toMatchObject({ totalSize: 4, nextPageToken: '' });
    });

    it('joins several grants, lists a deep grant alone, and everything for *', async () => {
      const several = await fx.namespaces.listVisible(['beta/x', 'acme/platform'], {});
      expect(several.items.map((n) => n.namespace)).toEqual(['acme/platform', 'acme/platform/web', 'beta/x']);
      const all = await fx.namespaces.listVisible(['*'], {});
      expect(all.items.map((n) => n.namespace)).toEqual([
        'acme',
        'acme-corp',
        'acme/platform',
        'acme/platform/web',
        'acme/sales',
        'beta',
        'beta/x',
        'default',
      ]);
      expect(all.totalSize).toBe(8);
    });

    it('lists nothing without grants, or for grants on namespaces that do not exist', async () => {
      expect(await fx.namespaces.listVisible([], {})).toEqual({ items: [], nextPageToken: '', totalSize: 0 });
      expect((await fx.namespaces.listVisible(['ghost', 'NOT-A-SLUG'], {})).totalSize).toBe(0);
    });

    it('pages by keyset: every namespace once, totalSize on each page', async () => {
      const seen: string[] = [];
      let pageToken: string | undefined;
      let pages = 0;
      do {
        const page = await fx.namespaces.listVisible(['*'], { pageSize: 3, pageToken });
        expect(page.totalSize).toBe(8);
        expect(page.items.length).toBeLessThanOrEqual(3);
        seen.push(...page.items.map((n) => n.namespace));
        pageToken = page.nextPageToken || undefined;
        pages++;
      } while (pageToken);
      expect(pages).toBe(3);
      expect(seen).toEqual([...seen].sort());
      expect(new Set(seen).size).toBe(8);
    });

    it('refuses a token of another list as -32602 naming pageToken', async () => {
      await fx.members.setMember({ namespace: 'acme', subject: 'oidc:a', role: 'viewer' }, acting(root));
      await fx.members.setMember({ namespace: 'acme', subject: 'oidc:b', role: 'viewer' }, acting(root));
      const members = await fx.members.listMembers('acme', { pageSize: 1 });
      const error = await rejectionOf(fx.namespaces.listVisible(['*'], { pageToken: members.nextPageToken }));
      expect((error as ValidationError).violations.map((v) => v.field)).toEqual(['pageToken']);
      const garbage = await rejectionOf(fx.namespaces.listVisible(['*'], { pageToken: '%%%' }));
      expect(garbage.reason).toBe('INVALID_PAGE_TOKEN');
    });
  });

  describe('update', () => {
    beforeEach(async () => {
      await tree('acme');
    });

    it('changes what it is given, bumps the revision and keeps the rest', async () => {
      const before = await fx.namespaces.get('acme');
      const renamed = await fx.namespaces.update({ namespace: 'acme', displayName: 'ACME' }, acting(alice));
      expect(renamed).toMatchObject({ displayName: 'ACME', description: '', revision: 2 });
      expect(Date.parse(renamed.updatedAt)).toBeGreaterThanOrEqual(Date.parse(before.updatedAt));
      const described = await fx.namespaces.update(
        { namespace: 'acme', description: 'the tenant', expectedRevision: 2 },
        acting(alice),
      );
      expect(described).toMatchObject({ displayName: 'ACME', description: 'the tenant', revision: 3 });
      expect(described.createdAt).toBe(before.createdAt);
    });

    it('answers a stale expectedRevision with -32004 REVISION_CONFLICT and changes nothing', async () => {
      await fx.namespaces.update({ namespace: 'acme', displayName: 'One' }, acting(alice));
      const error = await rejectionOf(
        fx.namespaces.update({ namespace: 'acme', displayName: 'Two', expectedRevision: 1 }, acting(alice)),
      );
      expect(error.kind).toBe('business-rule');
      expect(error.reason).toBe('REVISION_CONFLICT');
      expect(error.metadata).toEqual({ expectedRevision: '1', currentRevision: '2' });
      expect(await fx.namespaces.get('acme')).toMatchObject({ displayName: 'One', revision: 2 });
    });

    it('needs something to change, and a namespace that exists', async () => {
      const nothing = await rejectionOf(fx.namespaces.update({ namespace: 'acme' }, acting(alice)));
      expect((nothing as ValidationError).violations.map((v) => v.field)).toEqual(['displayName', 'description']);
      const missing = await rejectionOf(fx.namespaces.update({ namespace: 'nope', displayName: 'x' }, acting(alice)));
      expect(missing.reason).toBe('NAMESPACE_NOT_FOUND');
    });
  });

  describe('delete', () => {
    const owner = acting(root);

    it('deletes an empty namespace with its members; it is gone afterwards', async () => {
      await fx.namespaces.create({ namespace: 'acme' }, acting(alice));
      await fx.members.setMember({ namespace: 'acme', subject: 'oidc:bob', role: 'member' }, acting(alice));
      expect(await fx.namespaces.delete({ namespace: 'acme', expectedRevision: 1 }, owner)).toEqual({
        namespace: 'acme',
        deleted: true,
      });
      expect((await rejectionOf(fx.namespaces.get('acme'))).reason).toBe('NAMESPACE_NOT_FOUND');
      expect(await fx.directory.grantsFor('oidc:alice')).toEqual(new Map());
      expect(await fx.directory.grantsFor('oidc:bob')).toEqual(new Map());
      expect((await rejectionOf(fx.namespaces.delete({ namespace: 'acme' }, owner))).reason).toBe(
        'NAMESPACE_NOT_FOUND',
      );
    });

    it('refuses while it holds a child namespace, a task, a session, a plan, a push config or an unrevoked key, naming them', async () => {
      await tree('acme', 'acme/web');
      await fx.dataSource.query(
        `INSERT INTO tasks (namespace, owner, id, context_id, state, status_timestamp, task)
         VALUES ('acme', 'oidc:bob', 't1', 'c1', 'TASK_STATE_WORKING', now(), '{}')`,
      );
      await fx.dataSource.query(
        `INSERT INTO push_notification_configs (namespace, owner, task_id, id, config, wire_version)
         VALUES ('acme', 'oidc:bob', 't1', 'p1', '{}', '1.0')`,
      );
      await fx.dataSource.query(
        `INSERT INTO plans (namespace, owner, id, goal, entries) VALUES ('acme', 'oidc:bob', 'plan1', 'g', '[]')`,
      );
      const key = await fx.apiKeys.create({ namespace: 'acme', name: 'ci', role: 'member' }, owner);

      const refusal = await rejectionOf(fx.namespaces.delete({ namespace: 'acme' }, owner));
      expect(refusal.kind).toBe('business-rule');
      expect(refusal.reason).toBe('NAMESPACE_NOT_EMPTY');
      // The task's first save made its session (context c1) too.
      expect(refusal.metadata).toEqual({
        namespace: 'acme',
        holds: 'namespaces,tasks,sessions,plans,pushConfigs,apiKeys',
      });

      await fx.namespaces.delete({ namespace: 'acme/web' }, owner);
      await fx.dataSource.query(`DELETE FROM push_notification_configs WHERE namespace = 'acme'`);
      expect((await rejectionOf(fx.namespaces.delete({ namespace: 'acme' }, owner))).metadata.holds).toBe(
        'tasks,sessions,plans,apiKeys',
      );
      await fx.dataSource.query(`DELETE FROM tasks WHERE namespace = 'acme'`);
      expect((await rejectionOf(fx.namespaces.delete({ namespace: 'acme' }, owner))).metadata.holds).toBe(
        'sessions,plans,apiKeys',
      );
      await fx.dataSource.query(`DELETE FROM sessions WHERE namespace = 'acme'`);
      expect((await rejectionOf(fx.namespaces.delete({ namespace: 'acme' }, owner))).metadata.holds).toBe(
        'plans,apiKeys',
      );
      await fx.dataSource.query(`DELETE FROM plans WHERE namespace = 'acme'`);
      expect((await rejectionOf(fx.namespaces.delete({ namespace: 'acme' }, owner))).metadata.holds).toBe('apiKeys');

      // A revoked key does not hold a namespace: it goes with it.
      await fx.apiKeys.revoke({ namespace: 'acme', id: key.id }, owner);
      await fx.namespaces.delete({ namespace: 'acme' }, owner);
      expect(await fx.dataSource.query('SELECT id FROM api_keys')).toEqual([]);
    });

    it('an expired key that is not revoked still holds the namespace', async () => {
      await tree('acme');
      const key = await fx.apiKeys.create(
        { namespace: 'acme', name: 'old', role: 'viewer', expiresAt: new Date(Date.now() + 60_000) },
        owner,
      );
      await fx.dataSource.query(`UPDATE api_keys SET expires_at = now() - interval '1 day' WHERE id = $1`, [key.id]);
      expect((await rejectionOf(fx.namespaces.delete({ namespace: 'acme' }, owner))).metadata.holds).toBe('apiKeys');
    });

    it('refuses the configured default namespace', async () => {
      const error = await rejectionOf(fx.namespaces.delete({ namespace: 'default' }, owner));
      expect(error.kind).toBe('business-rule');
      expect(error.reason).toBe('DEFAULT_NAMESPACE');
      expect(await fx.namespaces.get('default')).toMatchObject({ namespace: 'default' });
    });

    it('refuses a stale expectedRevision', async () => {
      await tree('acme');
      await fx.namespaces.update({ namespace: 'acme', description: 'x' }, owner);
      const error = await rejectionOf(fx.namespaces.delete({ namespace: 'acme', expectedRevision: 1 }, owner));
      expect(error.reason).toBe('REVISION_CONFLICT');
      expect(await fx.namespaces.get('acme')).toMatchObject({ revision: 2 });
    });
  });

  describe('members', () => {
    const acmeAdmin = principalWith('oidc:adam', { acme: 'admin' });
    const acmeOwner = principalWith('oidc:olga', { acme: 'owner' });

    beforeEach(async () => {
      // olga creates acme: she is its one owner member.
      await fx.namespaces.create({ namespace: 'acme' }, acting(principalWith('oidc:olga', { default: 'admin' })));
    });

    it('names an API key member by its id whatever its case, as whoami prints it', async () => {
      const set = await fx.members.setMember(
        { namespace: 'acme', subject: 'apikey:01j0000000000000000000000b', role: 'viewer' },
        acting(acmeAdmin),
      );
      expect(set.subject).toBe('apikey:01J0000000000000000000000B');
      expect(await fx.directory.grantsFor('apikey:01J0000000000000000000000B')).toEqual(new Map([['acme', 'viewer']]));
      expect(
        await fx.members.removeMember(
          { namespace: 'acme', subject: 'apikey:01J0000000000000000000000b' },
          acting(acmeAdmin),
        ),
      ).toMatchObject({ subject: 'apikey:01J0000000000000000000000B', removed: true });
      // Other subjects keep their case: an SSO subject is the IdP's to define.
      expect(
        (await fx.members.setMember({ namespace: 'acme', subject: 'oidc:Bob', role: 'viewer' }, acting(acmeAdmin)))
          .subject,
      ).toBe('oidc:Bob');
    });

    it('sets, changes, lists and removes members, with a revision per member', async () => {
      const bob = await fx.members.setMember(
        { namespace: 'acme', subject: 'oidc:bob', role: 'viewer', expectedRevision: 0 },
        acting(acmeAdmin),
      );
      expect(bob).toEqual({
        namespace: 'acme',
        subject: 'oidc:bob',
        role: 'viewer',
        revision: 1,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        createdBy: 'oidc:adam',
      });
      const promoted = await fx.members.setMember(
        { namespace: 'acme', subject: 'oidc:bob', role: 'admin', expectedRevision: 1 },
        acting(acmeAdmin),
      );
      expect(promoted).toMatchObject({ role: 'admin', revision: 2, createdBy: 'oidc:adam' });
      // The same role again changes nothing.
      expect(
        await fx.members.setMember({ namespace: 'acme', subject: 'oidc:bob', role: 'admin' }, acting(acmeAdmin)),
      ).toMatchObject({ revision: 2 });
      await fx.members.setMember(
        { namespace: 'acme', subject: 'apikey:01J0000000000000000000000A', role: 'member' },
        acting(acmeAdmin),
      );
      expect(await members('acme')).toEqual({
        'apikey:01J0000000000000000000000A': 'member',
        'oidc:bob': 'admin',
        'oidc:olga': 'owner',
      });
      expect(await fx.members.removeMember({ namespace: 'acme', subject: 'oidc:bob' }, acting(acmeAdmin))).toEqual({
        namespace: 'acme',
        subject: 'oidc:bob',
        removed: true,
      });
      expect(Object.keys(await members('acme'))).toEqual(['apikey:01J0000000000000000000000A', 'oidc:olga']);
    });

    it('answers a stale expectedRevision with REVISION_CONFLICT; 0 means "not a member yet"', async () => {
      await fx.members.setMember({ namespace: 'acme', subject: 'oidc:bob', role: 'viewer' }, acting(acmeAdmin));
      for (const expectedRevision of [0, 2]) {
        const error = await rejectionOf(
          fx.members.setMember(
            { namespace: 'acme', subject: 'oidc:bob', role: 'member', expectedRevision },
            acting(acmeAdmin),
          ),
        );
        expect(error.reason).toBe('REVISION_CONFLICT');
      }
      expect((await members('acme'))['oidc:bob']).toBe('viewer');
    });

    it('only an owner grants owner or changes an owner (-32003)', async () => {
      const grant = await rejectionOf(
        fx.members.setMember({ namespace: 'acme', subject: 'oidc:bob', role: 'owner' }, acting(acmeAdmin)),
      );
      expect(grant.kind).toBe('authorization');
      expect(grant.reason).toBe('OWNER_REQUIRED');
      const demote = await rejectionOf(
        fx.members.setMember({ namespace: 'acme', subject: 'oidc:olga', role: 'viewer' }, acting(acmeAdmin)),
      );
      expect(demote.reason).toBe('OWNER_REQUIRED');
      const remove = await rejectionOf(
        fx.members.removeMember({ namespace: 'acme', subject: 'oidc:olga' }, acting(acmeAdmin)),
      );
      expect(remove.reason).toBe('OWNER_REQUIRED');
      expect(await members('acme')).toEqual({ 'oidc:olga': 'owner' });

      // An owner of the parent is an owner here too.
      await tree('acme/web');
      await fx.members.setMember({ namespace: 'acme/web', subject: 'oidc:bob', role: 'owner' }, acting(acmeOwner));
      expect(await members('acme/web')).toEqual({ 'oidc:bob': 'owner' });
    });

    it('keeps the last owner member of a top-level namespace (-32004 LAST_OWNER)', async () => {
      const demote = await rejectionOf(
        fx.members.setMember({ namespace: 'acme', subject: 'oidc:olga', role: 'admin' }, acting(acmeOwner)),
      );
      expect(demote.kind).toBe('business-rule');
      expect(demote.reason).toBe('LAST_OWNER');
      const remove = await rejectionOf(
        fx.members.removeMember({ namespace: 'acme', subject: 'oidc:olga' }, acting(acmeOwner)),
      );
      expect(remove.reason).toBe('LAST_OWNER');

      await fx.members.setMember({ namespace: 'acme', subject: 'oidc:bob', role: 'owner' }, acting(acmeOwner));
      await fx.members.removeMember({ namespace: 'acme', subject: 'oidc:olga' }, acting(acmeOwner));
      expect(await members('acme')).toEqual({ 'oidc:bob': 'owner' });
    });

    it('two owners removing each other at once: one stays', async () => {
      await fx.members.setMember({ namespace: 'acme', subject: 'oidc:bob', role: 'owner' }, acting(acmeOwner));
      const outcomes = await Promise.allSettled(
        ['oidc:olga', 'oidc:bob'].map((subject) =>
          fx.members.removeMember({ namespace: 'acme', subject }, acting(acmeOwner)),
        ),
      );
      expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect(Object.values(await members('acme'))).toEqual(['owner']);
    });

    it('lets the last owner member of a child namespace go: the parent owners remain', async () => {
      await fx.namespaces.create({ namespace: 'acme/web' }, acting(acmeAdmin));
      expect(await members('acme/web')).toEqual({ 'oidc:adam': 'owner' });
      await fx.members.setMember({ namespace: 'acme/web', subject: 'oidc:adam', role: 'member' }, acting(acmeOwner));
      await fx.members.removeMember({ namespace: 'acme/web', subject: 'oidc:adam' }, acting(acmeOwner));
      expect(await members('acme/web')).toEqual({});
    });

    it('answers -32001 for a member or namespace that does not exist, -32602 for a bad subject or role', async () => {
      const member = await rejectionOf(
        fx.members.removeMember({ namespace: 'acme', subject: 'oidc:nobody' }, acting(acmeAdmin)),
      );
      expect(member.reason).toBe('MEMBER_NOT_FOUND');
      const namespace = await rejectionOf(
        fx.members.setMember({ namespace: 'nope', subject: 'oidc:bob', role: 'viewer' }, acting(acmeAdmin)),
      );
      expect(namespace.reason).toBe('NAMESPACE_NOT_FOUND');
      expect((await rejectionOf(fx.members.listMembers('nope', {}))).reason).toBe('NAMESPACE_NOT_FOUND');
      const bad = await rejectionOf(
        fx.members.setMember(
          { namespace: 'acme', subject: 'alice with spaces', role: 'root' as 'owner' },
          acting(acmeAdmin),
        ),
      );
      expect((bad as ValidationError).violations.map((v) => v.field)).toEqual(['subject', 'role']);
    });

    it('pages members in subject order', async () => {
      for (const name of ['d', 'b', 'a', 'c']) {
        await fx.members.setMember({ namespace: 'acme', subject: `oidc:${name}`, role: 'viewer' }, acting(acmeAdmin));
      }
      const first = await fx.members.listMembers('acme', { pageSize: 2 });
      expect(first.items.map((m) => m.subject)).toEqual(['oidc:a', 'oidc:b']);
      expect(first.totalSize).toBe(5);
      const second = await fx.members.listMembers('acme', { pageSize: 2, pageToken: first.nextPageToken });
      expect(second.items.map((m) => m.subject)).toEqual(['oidc:c', 'oidc:d']);
      const third = await fx.members.listMembers('acme', { pageSize: 2, pageToken: second.nextPageToken });
      expect(third).toMatchObject({ items: [expect.objectContaining({ subject: 'oidc:olga' })], nextPageToken: '' });
    });
  });

  describe('the MembershipDirectory', () => {
    it('reads grants by subject, existence and visibility', async () => {
      await tree('acme', 'acme/web', 'beta');
      const cli = { actor: operatorActor('cli:ops') };
      await fx.members.setMember({ namespace: 'acme', subject: 'oidc:bob', role: 'admin' }, cli);
      await fx.members.setMember({ namespace: 'beta', subject: 'oidc:bob', role: 'viewer' }, cli);
      expect(await fx.directory.grantsFor('oidc:bob')).toEqual(
        new Map([
          ['acme', 'admin'],
          ['beta', 'viewer'],
        ]),
      );
      expect(await fx.directory.grantsFor('oidc:nobody')).toEqual(new Map());
      expect(await fx.directory.existing(['acme', 'ghost', 'acme/web', 'acme'])).toEqual(new Set(['acme', 'acme/web']));
      expect(await fx.directory.existing([])).toEqual(new Set());
      expect(await fx.directory.visibleTo(new Map([['acme', 'viewer']]), 10)).toEqual(['acme', 'acme/web']);
      expect(await fx.directory.visibleTo(new Map([['*', 'owner']]), 2)).toEqual(['acme', 'acme/web']);
      expect(await fx.directory.visibleTo(new Map(), 10)).toEqual([]);
    });
  });
});
