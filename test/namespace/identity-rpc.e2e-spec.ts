import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import {
  extensionCalls,
  fieldsOf,
  reasonOf,
  startServer,
  startServerWithBootstrapKey,
  type TestServer,
} from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

describe.each(databaseTargets())('namespace, auth/apikey and audit methods over HTTP on $kind', (target) => {
  describe('wired into the dispatcher (scheme none: the anonymous owner of everything)', () => {
    let database: TestDatabase;
    let server: TestServer;
    const { call } = extensionCalls(() => server);

    beforeAll(async () => {
      database = await target.create();
      server = await startServer(database);
    });
    afterAll(async () => {
      await ifAssigned(server)?.close();
      await database.cleanup();
    });

    it('creates, reads, lists, updates and deletes a namespace', async () => {
      const created = await call('namespace/create', { namespace: 'acme', display_name: 'ACME' });
      expect(created.json.result).toMatchObject({ namespace: 'acme', parent: null, displayName: 'ACME', revision: 1 });
      expect((await call('namespace/get', { namespace: 'acme' })).json.result).toEqual(created.json.result);
      const listed = await call('namespace/list', { pageSize: 10 });
      expect(listed.json.result).toMatchObject({ totalSize: 2, nextPageToken: '' });
      expect(listed.json.result.items.map((n: { namespace: string }) => n.namespace)).toEqual(['acme', 'default']);

      const stale = await call('namespace/update', { namespace: 'acme', description: 'x', expectedRevision: 7 });
      expect(stale.json.error.code).toBe(-32004);
      expect(reasonOf(stale)).toBe('REVISION_CONFLICT');
      const updated = await call('namespace/update', { namespace: 'acme', description: 'x', expectedRevision: 1 });
      expect(updated.json.result).toMatchObject({ description: 'x', revision: 2 });

      await call('namespace/create', { namespace: 'acme/web' });
      const notEmpty = await call('namespace/delete', { namespace: 'acme' });
      expect(notEmpty.json.error.code).toBe(-32004);
      expect(notEmpty.json.error.data[0].metadata).toEqual({ namespace: 'acme', holds: 'namespaces' });
      expect((await call('namespace/delete', { namespace: 'acme/web' })).json.result).toEqual({
        namespace: 'acme/web',
        deleted: true,
      });
      const missing = await call('namespace/get', { namespace: 'acme/web' });
      expect(missing.json.error.code).toBe(-32001);
      expect(reasonOf(missing)).toBe('NAMESPACE_NOT_FOUND');
    });

    it('answers bad params with -32602 naming the fields', async () => {
      expect(fieldsOf(await call('namespace/create', { namespace: 'Not/A/Slug' }))).toEqual(['namespace']);
      expect(fieldsOf(await call('namespace/create', { namespace: 'ok', colour: 'red' }))).toEqual(['colour']);
      expect(fieldsOf(await call('namespace/list', { pageSize: 500 }))).toEqual(['pageSize']);
      expect(fieldsOf(await call('namespace/list', { pageToken: 'garbage' }))).toEqual(['pageToken']);
      expect(
        fieldsOf(await call('namespace/members/set', { namespace: 'default', subject: 'x', role: 'root' })),
      ).toEqual(['subject', 'role']);
      expect(fieldsOf(await call('auth/apikey/create', { name: 'k', role: 'viewer', expiresAt: 'tomorrow' }))).toEqual([
        'expiresAt',
      ]);
      const duplicate = await call('namespace/create', { namespace: 'default' });
      expect(duplicate.json.error.code).toBe(-32005);
    });

    it('manages members', async () => {
      const set = await call('namespace/members/set', { namespace: 'default', subject: 'oidc:bob', role: 'member' });
      expect(set.json.result).toMatchObject({ namespace: 'default', subject: 'oidc:bob', role: 'member', revision: 1 });
      const listed = await call('namespace/members/list', { namespace: 'default' });
      expect(listed.json.result.items.map((m: { subject: string }) => m.subject)).toEqual(['oidc:bob']);
      const removed = await call('namespace/members/remove', { namespace: 'default', subject: 'oidc:bob' });
      expect(removed.json.result).toEqual({ namespace: 'default', subject: 'oidc:bob', removed: true });
    });

    it('mints, lists and revokes API keys in the default namespace when none is given, and audits it all', async () => {
      const created = await call('auth/apikey/create', { name: 'ci', role: 'member' });
      expect(created.json.result).toMatchObject({ namespace: 'default', name: 'ci', role: 'member' });
      const { key, id: keyId } = created.json.result as { key: string; id: string };
      const listed = await call('auth/apikey/list', {});
      expect(listed.json.result.items).toEqual([expect.objectContaining({ id: keyId, status: 'active' })]);
      expect(listed.text).not.toContain(key.slice(30));
      const revoked = await call('auth/apikey/revoke', { id: keyId });
      expect(revoked.json.result).toMatchObject({ id: keyId, status: 'revoked', revokedBy: 'anonymous' });
      const twice = await call('auth/apikey/revoke', { id: keyId });
      expect(twice.json.error.code).toBe(-32004);
      expect(reasonOf(twice)).toBe('ALREADY_REVOKED');

      const audit = await call('audit/list', { namespace: 'default', pageSize: 3 });
      expect(audit.json.result.items.map((r: { action: string }) => r.action)).toEqual([
        'apikey.revoke',
        'apikey.create',
        'member.remove',
      ]);
      expect(audit.json.result.items[0]).toMatchObject({ actor: 'anonymous', target: keyId });
      expect(audit.json.result.items[0].requestId).toEqual(expect.any(String));
      const filtered = await call('audit/list', { namespace: 'default', action: 'apikey.create' });
      expect(filtered.json.result.totalSize).toBe(1);
    });

    it('takes a bare date, null for an optional param, and namespace alone where a method takes no params', async () => {
      const dated = await call('auth/apikey/create', { name: 'dated', role: 'viewer', expiresAt: '2999-01-31' });
      expect(dated.json.result.expiresAt).toBe('2999-01-31T00:00:00.000Z');
      const undated = await call('auth/apikey/create', { name: 'undated', role: 'viewer', expiresAt: null });
      expect(undated.json.result.expiresAt).toBeNull();
      const nulls = { pageSize: null, pageToken: null };
      expect((await call('auth/apikey/list', { ...nulls, includeRevoked: null })).json.result.totalSize).toBe(2);
      const audit = await call('audit/list', { namespace: 'default', ...nulls, since: null, until: null, actor: null });
      expect(audit.json.result.totalSize).toBeGreaterThan(0);

      expect((await call('auth/whoami', { namespace: 'default' })).json.result.subject).toBe('anonymous');
      expect(fieldsOf(await call('auth/whoami', { namespace: 'default', colour: 'red', size: 1 }))).toEqual([
        'colour',
        'size',
      ]);
      expect(fieldsOf(await call('diagnostics/info', { bogus: 1 }))).toEqual(['bogus']);
    });

    it('refuses, naming the field, an ISO 8601 form it cannot read as an instant (week and ordinal dates)', async () => {
      for (const value of ['2026-W48', '2026-032', '2026-12-01 10']) {
        const since = await call('audit/list', { namespace: 'default', since: value });
        expect([value, since.json.error?.code, fieldsOf(since)]).toEqual([value, -32602, ['since']]);
        const until = await call('audit/list', { namespace: 'default', until: value });
        expect([value, until.json.error?.code, fieldsOf(until)]).toEqual([value, -32602, ['until']]);
        const key = await call('auth/apikey/create', { name: 'weekly', role: 'viewer', expiresAt: value });
        expect([value, key.json.error?.code, fieldsOf(key)]).toEqual([value, -32602, ['expiresAt']]);
      }
    });
  });

  describe('with API keys: the bootstrap key administers a fresh installation', () => {
    let database: TestDatabase;
    let server: TestServer;
    let bootstrapKey: string;
    const calls = extensionCalls(() => server);
    const call = (key: string, method: string, params: Record<string, unknown> = {}) =>
      calls.call(method, params, { 'x-api-key': key });

    beforeAll(async () => {
      database = await target.create();
      ({ server, bootstrapKey } = await startServerWithBootstrapKey(database));
    });
    afterAll(async () => {
      await ifAssigned(server)?.close();
      await database.cleanup();
    });

    it('mints a weaker key, which cannot administer keys; revoked, it no longer authenticates', async () => {
      const listed = await call(bootstrapKey, 'namespace/list');
      expect(listed.json.result.items.map((n: { namespace: string }) => n.namespace)).toEqual(['default']);

      const elsewhere = await call(bootstrapKey, 'auth/apikey/create', { name: 'x', role: 'owner', namespace: 'nope' });
      expect(elsewhere.json.error.code).toBe(-32001);

      const member = await call(bootstrapKey, 'auth/apikey/create', { name: 'worker', role: 'member' });
      const memberKey = member.json.result.key as string;
      const refused = await call(memberKey, 'auth/apikey/list');
      expect(refused.json.error.code).toBe(-32003);
      expect((await call(memberKey, 'namespace/get', { namespace: 'default' })).json.result.namespace).toBe('default');

      await call(bootstrapKey, 'auth/apikey/revoke', { id: member.json.result.id });
      const after = await call(memberKey, 'namespace/get', { namespace: 'default' });
      expect(after.status).toBe(401);
      expect(after.json.error.code).toBe(-32002);
    });
  });
});
