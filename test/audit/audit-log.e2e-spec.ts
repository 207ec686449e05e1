import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { AuditLogRepository } from '../../packages/server/src/audit/audit-log.repository.js';
import type { AuditRecord } from '../../packages/server/src/audit/audit-log.service.js';
import { ValidationError } from '../../packages/server/src/common/domain.errors.js';
import { acting, principalWith } from '../factories/principals.js';
import { databaseTargets } from '../support/database.js';
import { auditCount, openIdentityFixture, rejectionOf, type IdentityFixture } from '../support/identity-database.js';
import { ifAssigned } from '../support/assigned.js';

const root = principalWith('oidc:root', { '*': 'owner' });
const alice = principalWith('oidc:alice', { default: 'admin', acme: 'owner' });

describe.each(databaseTargets())('AuditLog on $kind', (target) => {
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

  async function all(namespace: string, filter: { action?: string; actor?: string } = {}): Promise<AuditRecord[]> {
    return (await fx.audit.list({ namespace, pageSize: 100, ...filter })).items;
  }

  it('records every namespace, member and key mutation, newest first, with actor, target and request id', async () => {
    await fx.namespaces.create({ namespace: 'acme', displayName: 'ACME' }, acting(alice, 'r1'));
    await fx.namespaces.update({ namespace: 'acme', description: 'tenant' }, acting(alice, 'r2'));
    await fx.members.setMember({ namespace: 'acme', subject: 'oidc:bob', role: 'admin' }, acting(alice, 'r3'));
    await fx.members.removeMember({ namespace: 'acme', subject: 'oidc:bob' }, acting(alice, 'r4'));
    const key = await fx.apiKeys.create({ namespace: 'acme', name: 'ci', role: 'member' }, acting(alice, 'r5'));
    await fx.apiKeys.revoke({ namespace: 'acme', id: key.id }, acting(alice, 'r6'));
    await fx.namespaces.create({ namespace: 'acme/tmp' }, acting(alice, 'r7'));
    await fx.namespaces.delete({ namespace: 'acme/tmp' }, acting(alice, 'r8'));

    const acme = await all('acme');
    expect(acme.map((r) => [r.action, r.target, r.requestId])).toEqual([
      ['apikey.revoke', key.id, 'r6'],
      ['apikey.create', key.id, 'r5'],
      ['member.remove', 'oidc:bob', 'r4'],
      ['member.set', 'oidc:bob', 'r3'],
      ['namespace.update', 'acme', 'r2'],
      ['namespace.create', 'acme', 'r1'],
    ]);
    expect(new Set(acme.map((r) => r.actor))).toEqual(new Set(['oidc:alice']));
    expect(acme.every((r) => r.namespace === 'acme' && /^[0-9A-Z]{26}$/.test(r.id))).toBe(true);
    expect(acme.find((r) => r.action === 'member.set')?.details).toEqual({
      role: 'admin',
      previousRole: null,
      revision: 1,
    });
    expect(acme.find((r) => r.action === 'namespace.create')?.details).toEqual({
      displayName: 'ACME',
      description: '',
      ownerMember: null,
    });
    expect((await all('acme/tmp')).map((r) => [r.action, r.requestId])).toEqual([
      ['namespace.delete', 'r8'],
      ['namespace.create', 'r7'],
    ]);
    // The history of a deleted namespace stays.
    expect(await auditCount(fx.dataSource, 'acme/tmp')).toBe(2);
  });

  it('never records a secret', async () => {
    await fx.namespaces.create({ namespace: 'acme' }, acting(root));
    const key = await fx.apiKeys.create(
      { namespace: 'acme', name: 'ci', role: 'viewer', expiresAt: '2999-01-01T00:00:00Z' },
      acting(root),
    );
    const [record] = await all('acme', { action: 'apikey.create' });
    expect(record.details).toEqual({ name: 'ci', role: 'viewer', expiresAt: '2999-01-01T00:00:00.000Z' });
    const stored = JSON.stringify(await fx.dataSource.query('SELECT * FROM audit_log'));
    const [{ secret_hash }]: { secret_hash: string }[] = await fx.dataSource.query(
      'SELECT secret_hash FROM api_keys WHERE id = $1',
      [key.id],
    );
    expect(stored).not.toContain(key.key.slice(30));
    expect(stored).not.toContain(secret_hash);
  });

  it('records nothing for a mutation that failed', async () => {
    // Created by an administrator of the installation, alice is the one owner member of acme.
    await fx.namespaces.create({ namespace: 'acme' }, acting(principalWith('oidc:alice', { default: 'admin' })));
    const key = await fx.apiKeys.create({ namespace: 'acme', name: 'ci', role: 'viewer' }, acting(alice));
    await fx.apiKeys.revoke({ namespace: 'acme', id: key.id }, acting(alice));
    await fx.apiKeys.create({ namespace: 'acme', name: 'live', role: 'viewer' }, acting(alice));
    const before = await auditCount(fx.dataSource);
    const admin = principalWith('oidc:adam', { acme: 'admin' });

    const failures = [
      () => fx.namespaces.create({ namespace: 'acme' }, acting(alice)),
      () => fx.namespaces.create({ namespace: 'ghost/x' }, acting(root)),
      () => fx.namespaces.update({ namespace: 'acme', displayName: 'x', expectedRevision: 9 }, acting(alice)),
      () => fx.namespaces.delete({ namespace: 'acme' }, acting(alice)),
      () => fx.namespaces.delete({ namespace: 'default' }, acting(root)),
      () => fx.members.setMember({ namespace: 'acme', subject: 'oidc:alice', role: 'viewer' }, acting(alice)),
      () => fx.members.setMember({ namespace: 'acme', subject: 'oidc:bob', role: 'owner' }, acting(admin)),
      () => fx.members.removeMember({ namespace: 'acme', subject: 'oidc:nobody' }, acting(alice)),
      () => fx.apiKeys.create({ namespace: 'acme', name: 'live', role: 'viewer' }, acting(alice)),
      () => fx.apiKeys.create({ namespace: 'acme', name: 'up', role: 'owner' }, acting(admin)),
      () => fx.apiKeys.revoke({ namespace: 'acme', id: key.id }, acting(alice)),
    ];
    const reasons: string[] = [];
    for (const failure of failures) reasons.push((await rejectionOf(failure())).reason);
    expect(reasons).toEqual([
      'NAMESPACE_EXISTS',
      'NAMESPACE_NOT_FOUND',
      'REVISION_CONFLICT',
      'NAMESPACE_NOT_EMPTY',
      'DEFAULT_NAMESPACE',
      'LAST_OWNER',
      'OWNER_REQUIRED',
      'MEMBER_NOT_FOUND',
      'KEY_NAME_TAKEN',
      'ROLE_ESCALATION',
      'ALREADY_REVOKED',
    ]);
    expect(await auditCount(fx.dataSource)).toBe(before);
  });

  it('writes in the transaction of the change: a rollback leaves no row', async () => {
    const entry = { namespace: 'default', actor: 'oidc:x', action: 'namespace.update' as const, target: 'default' };
    await expect(
      fx.dataSource.transaction(async (manager) => {
        await fx.audit.record(manager, entry);
        throw new Error('the change failed after its audit row');
      }),
    ).rejects.toThrow('the change failed');
    expect(await all('default', { actor: 'oidc:x' })).toEqual([]);
    await fx.dataSource.transaction((manager) => fx.audit.record(manager, entry));
    expect(await all('default', { actor: 'oidc:x' })).toHaveLength(1);
  });

  it('pages newest first through records written in the same millisecond, filtered by action and actor', async () => {
    await fx.dataSource.transaction(async (manager) => {
      for (let i = 0; i < 7; i++) {
        await fx.audit.record(manager, {
          namespace: 'acme',
          actor: i % 2 === 0 ? 'oidc:even' : 'oidc:odd',
          action: i < 4 ? 'member.set' : 'member.remove',
          target: `t${i}`,
        });
      }
    });
    const seen: string[] = [];
    let pageToken = '';
    do {
      const page = await fx.audit.list({ namespace: 'acme', pageSize: 2, pageToken });
      expect(page.totalSize).toBe(7);
      seen.push(...page.items.map((r) => r.target));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(seen).toEqual(['t6', 't5', 't4', 't3', 't2', 't1', 't0']);

    const removes = await fx.audit.list({ namespace: 'acme', action: 'member.remove', pageSize: 2 });
    expect(removes.totalSize).toBe(3);
    expect(removes.items.map((r) => r.target)).toEqual(['t6', 't5']);
    const rest = await fx.audit.list({ namespace: 'acme', action: 'member.remove', pageToken: removes.nextPageToken });
    expect(rest.items.map((r) => r.target)).toEqual(['t4']);
    expect(rest.nextPageToken).toBe('');
    const odd = await all('acme', { actor: 'oidc:odd', action: 'member.set' });
    expect(odd.map((r) => r.target)).toEqual(['t3', 't1']);
    expect(await all('elsewhere')).toEqual([]);
  });

  it('reads a time range: since is inclusive, until exclusive, and paging stays inside it', async () => {
    const at = (minute: number) => new Date(Date.UTC(2026, 11, 1, 10, minute));
    await fx.dataSource.transaction(async (manager) => {
      for (const minute of [0, 10, 20, 30, 40]) {
        await new AuditLogRepository(fx.dataSource).insert(manager, {
          id: `01JTIMERANGE${String(minute).padStart(14, '0')}`,
          at: at(minute),
          namespace: 'acme',
          actor: 'oidc:clock',
          action: 'member.set',
          target: `m${minute}`,
          details: {},
          requestId: null,
        });
      }
    });
    const targets = async (since?: Date, until?: Date, pageSize = 100) => {
      const seen: string[] = [];
      let pageToken = '';
      do {
        const page = await fx.audit.list({ namespace: 'acme', actor: 'oidc:clock', since, until, pageSize, pageToken });
        seen.push(...page.items.map((r) => r.target));
        pageToken = page.nextPageToken;
      } while (pageToken);
      return seen;
    };
    expect(await targets(at(10), at(30))).toEqual(['m20', 'm10']);
    expect(await targets(at(10))).toEqual(['m40', 'm30', 'm20', 'm10']);
    expect(await targets(undefined, at(10))).toEqual(['m0']);
    expect(await targets(at(0), at(40), 1)).toEqual(['m30', 'm20', 'm10', 'm0']);
    expect((await fx.audit.list({ namespace: 'acme', since: at(10), until: at(30) })).totalSize).toBe(2);
  });

  it('refuses a page token it did not issue', async () => {
    const error = await rejectionOf(fx.audit.list({ namespace: 'acme', pageToken: 'bm9wZQ' }));
    expect((error as ValidationError).violations.map((v) => v.field)).toEqual(['pageToken']);
    const forged = Buffer.from(JSON.stringify(['audit', 'not a time', 'x'])).toString('base64url');
    expect((await rejectionOf(fx.audit.list({ namespace: 'acme', pageToken: forged }))).reason).toBe(
      'INVALID_PAGE_TOKEN',
    );
  });
});
