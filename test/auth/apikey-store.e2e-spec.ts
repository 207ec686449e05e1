import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ApiKeyService } from '../../packages/server/src/auth/apikey/api-key.service.js';
import { UncachedIdentityReads } from '../../packages/server/src/auth/identity-cache.js';
import { ValidationError } from '../../packages/server/src/common/domain.errors.js';
import { operatorActor } from '../../packages/server/src/common/actor.js';
import { acting, principalWith } from '../factories/principals.js';
import { databaseTargets } from '../support/database.js';
import { openIdentityFixture, rejectionOf, type IdentityFixture } from '../support/identity-database.js';
import { ifAssigned } from '../support/assigned.js';

const root = principalWith('oidc:root', { '*': 'owner' });
const acmeAdmin = principalWith('oidc:adam', { acme: 'admin' });

describe.each(databaseTargets())('ApiKeyService on $kind', (target) => {
  let fx: IdentityFixture;

  beforeAll(async () => {
    fx = await openIdentityFixture(target);
  });
  afterAll(async () => {
    await ifAssigned(fx)?.close();
  });
  beforeEach(async () => {
    await fx.reset();
    await fx.namespaces.create({ namespace: 'acme' }, acting(root));
    await fx.namespaces.create({ namespace: 'beta' }, acting(root));
  });

  async function storedRow(id: string): Promise<Record<string, unknown>> {
    const rows: Record<string, unknown>[] = await fx.dataSource.query('SELECT * FROM api_keys WHERE id = $1', [id]);
    return rows[0];
  }

  it('creates a key shown once, which verifies as its namespace and role', async () => {
    const created = await fx.apiKeys.create(
      { namespace: 'acme', name: 'ci-deploy', role: 'member' },
      acting(acmeAdmin),
    );
    expect(created).toEqual({
      key: expect.stringMatching(/^ca_[0-9a-z]{26}_[A-Za-z0-9_-]{43}$/),
      id: expect.stringMatching(/^[0-9A-Z]{26}$/),
      name: 'ci-deploy',
      namespace: 'acme',
      role: 'member',
      createdAt: expect.stringMatching(/Z$/),
      expiresAt: null,
    });
    expect(created.key.slice(3, 29)).toBe(created.id.toLowerCase());
    expect(fx.apiKeys.looksLikeKey(created.key)).toBe(true);
    expect(await fx.apiKeys.verify(created.key)).toEqual({
      keyId: created.id,
      name: 'ci-deploy',
      namespace: 'acme',
      role: 'member',
      createdBy: 'oidc:adam',
      expiresAt: undefined,
    });
    // Stored: the hash of the secret, never the key or the secret.
    const row = await storedRow(created.id);
    const secret = created.key.slice(30);
    expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(secret);
  });

  it('verifies nothing that is not exactly a live key', async () => {
    const created = await fx.apiKeys.create({ namespace: 'acme', name: 'k', role: 'viewer' }, acting(root));
    const secret = created.key.slice(30);
    const otherSecret = `${secret[0] === 'A' ? 'B' : 'A'}${secret.slice(1)}`;
    for (const presented of [
      '',
      'not a key',
      created.key.toUpperCase(),
      `${created.key.slice(0, 30)}${otherSecret}`,
      `ca_${'0'.repeat(26)}_${secret}`, // an id that does not exist
      `${created.key} `,
    ]) {
      expect(await fx.apiKeys.verify(presented)).toBeUndefined();
    }
  });

  it('lists keys newest first without secret or hash, with prefix, status and last use', async () => {
    const first = await fx.apiKeys.create({ namespace: 'acme', name: 'one', role: 'viewer' }, acting(root));
    const second = await fx.apiKeys.create(
      { namespace: 'acme', name: 'two', role: 'admin', expiresAt: '2999-01-01T00:00:00Z' },
      acting(root),
    );
    await fx.apiKeys.create({ namespace: 'beta', name: 'elsewhere', role: 'viewer' }, acting(root));
    await fx.apiKeys.verify(first.key);
    await fx.apiKeys.whenIdle();

    const page = await fx.apiKeys.list({ namespace: 'acme' });
    expect(page.totalSize).toBe(2);
    expect(page.nextPageToken).toBe('');
    expect(page.items.map((k) => k.name)).toEqual(['two', 'one']);
    expect(page.items[0]).toEqual({
      id: second.id,
      prefix: `ca_${second.id.toLowerCase()}_…`,
      name: 'two',
      namespace: 'acme',
      role: 'admin',
      status: 'active',
      createdBy: 'oidc:root',
      createdAt: second.createdAt,
      expiresAt: '2999-01-01T00:00:00.000Z',
      revokedAt: null,
      revokedBy: null,
      lastUsedAt: null,
      revision: 1,
    });
    expect(page.items[1].lastUsedAt).toEqual(expect.stringMatching(/Z$/));
    const listed = JSON.stringify(page);
    for (const created of [first, second]) {
      expect(listed).not.toContain(created.key.slice(30));
      expect(listed).not.toContain(String((await storedRow(created.id)).secret_hash));
    }
  });

  it('pages by keyset and lists revoked keys only when asked', async () => {
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c', 'd', 'e']) {
      ids.push((await fx.apiKeys.create({ namespace: 'acme', name, role: 'viewer' }, acting(root))).id);
    }
    await fx.apiKeys.revoke({ namespace: 'acme', id: ids[4] }, acting(root));
    const seen: string[] = [];
    let pageToken = '';
    do {
      const page = await fx.apiKeys.list({ namespace: 'acme', pageSize: 2, pageToken, includeRevoked: true });
      expect(page.totalSize).toBe(5);
      seen.push(...page.items.map((k) => k.id));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(seen).toEqual([...ids].reverse());
    const active = await fx.apiKeys.list({ namespace: 'acme' });
    expect(active.totalSize).toBe(4);
    expect(active.items.map((k) => k.status)).toEqual(['active', 'active', 'active', 'active']);
    const bad = await rejectionOf(fx.apiKeys.list({ namespace: 'acme', pageToken: 'x' }));
    expect((bad as ValidationError).violations.map((v) => v.field)).toEqual(['pageToken']);
  });

  it('revoking takes effect on the next verification; twice is -32004 ALREADY_REVOKED', async () => {
    const created = await fx.apiKeys.create({ namespace: 'acme', name: 'gone', role: 'member' }, acting(acmeAdmin));
    expect(await fx.apiKeys.verify(created.key)).toBeDefined();
    const revoked = await fx.apiKeys.revoke(
      { namespace: 'acme', id: created.id.toLowerCase() },
      acting(acmeAdmin, 'req-revoke'),
    );
    expect(revoked).toMatchObject({ id: created.id, status: 'revoked', revokedBy: 'oidc:adam', revision: 2 });
    expect(await fx.apiKeys.verify(created.key)).toBeUndefined();

    const again = await rejectionOf(fx.apiKeys.revoke({ namespace: 'acme', id: created.id }, acting(acmeAdmin)));
    expect(again.kind).toBe('business-rule');
    expect(again.reason).toBe('ALREADY_REVOKED');
  });

  it("only an owner revokes an owner's key: an admin gets -32003 OWNER_REQUIRED and the key lives on", async () => {
    const acmeOwner = principalWith('oidc:olga', { acme: 'owner' });
    await fx.namespaces.create({ namespace: 'acme/child' }, acting(root));
    const ownersKey = await fx.apiKeys.create({ namespace: 'acme', name: 'owners', role: 'owner' }, acting(root));
    const childOwnersKey = await fx.apiKeys.create(
      { namespace: 'acme/child', name: 'owners', role: 'owner' },
      acting(root),
    );
    for (const key of [ownersKey, childOwnersKey]) {
      const refused = await rejectionOf(fx.apiKeys.revoke({ namespace: key.namespace, id: key.id }, acting(acmeAdmin)));
      expect([refused.kind, refused.reason, refused.metadata]).toEqual([
        'authorization',
        'OWNER_REQUIRED',
        { namespace: key.namespace, requiredRole: 'owner' },
      ]);
      expect(await fx.apiKeys.verify(key.key)).toBeDefined();
    }
    expect(await fx.apiKeys.list({ namespace: 'acme', includeRevoked: true })).toMatchObject({
      items: [{ id: ownersKey.id, status: 'active', revision: 1 }],
    });
    // An admin still revokes the keys below owner; an owner revokes the owner's key.
    const admins = await fx.apiKeys.create({ namespace: 'acme', name: 'admins', role: 'admin' }, acting(root));
    expect(await fx.apiKeys.revoke({ namespace: 'acme', id: admins.id }, acting(acmeAdmin))).toMatchObject({
      status: 'revoked',
    });
    expect(await fx.apiKeys.revoke({ namespace: 'acme', id: ownersKey.id }, acting(acmeOwner))).toMatchObject({
      status: 'revoked',
    });
  });

  it('revoking a key of another namespace, or no key, is -32001 KEY_NOT_FOUND', async () => {
    const created = await fx.apiKeys.create({ namespace: 'beta', name: 'b', role: 'viewer' }, acting(root));
    for (const id of [created.id, '01J00000000000000000000000', 'not-a-ulid']) {
      const error = await rejectionOf(fx.apiKeys.revoke({ namespace: 'acme', id }, acting(acmeAdmin)));
      expect(error.kind).toBe('not-found');
      expect(error.reason).toBe('KEY_NOT_FOUND');
    }
    expect(await fx.apiKeys.verify(created.key)).toBeDefined();
  });

  it('revoking by id alone finds the key in its own namespace; one the caller may not manage is not found, as no key is', async () => {
    const acmeMember = principalWith('oidc:mia', { acme: 'member', beta: 'admin' });
    await fx.namespaces.create({ namespace: 'acme/child' }, acting(root));
    const child = await fx.apiKeys.create({ namespace: 'acme/child', name: 'c', role: 'viewer' }, acting(root));
    const acmeKey = await fx.apiKeys.create({ namespace: 'acme', name: 'a', role: 'viewer' }, acting(root));
    const betaKey = await fx.apiKeys.create({ namespace: 'beta', name: 'b', role: 'viewer' }, acting(root));

    // An admin of acme (and so of acme/child) revokes acme/child's key by its id; the audit is acme/child's.
    expect(await fx.apiKeys.revoke({ id: child.id.toLowerCase() }, acting(acmeAdmin))).toMatchObject({
      id: child.id,
      namespace: 'acme/child',
      status: 'revoked',
      revokedBy: 'oidc:adam',
    });
    expect(await fx.apiKeys.verify(child.key)).toBeUndefined();
    const audited: { namespace: string }[] = await fx.dataSource.query(
      "SELECT namespace FROM audit_log WHERE action = 'apikey.revoke' AND target = $1",
      [child.id],
    );
    expect(audited).toEqual([{ namespace: 'acme/child' }]);

    // Beta's key to acme's admin, acme's key to acme's member (admin of beta), an id that exists nowhere:
    // the same answer, which tells nothing of whether the key exists.
    const answers = [];
    for (const [who, id] of [
      [acmeAdmin, betaKey.id],
      [acmeMember, acmeKey.id],
      [acmeAdmin, '01J00000000000000000000000'],
    ] as const) {
      const error = await rejectionOf(fx.apiKeys.revoke({ id }, acting(who)));
      answers.push({
        kind: error.kind,
        reason: error.reason,
        message: error.message.replace(id, 'ID'),
        metadata: { ...error.metadata, id: error.metadata.id === id ? 'ID' : error.metadata.id },
      });
    }
    expect(answers).toEqual(
      Array.from({ length: 3 }, () => ({
        kind: 'not-found',
        reason: 'KEY_NOT_FOUND',
        message: 'No API key ID that you may manage',
        metadata: { id: 'ID' },
      })),
    );
    expect(await fx.apiKeys.verify(acmeKey.key)).toBeDefined();
    expect(await fx.apiKeys.verify(betaKey.key)).toBeDefined();
  });

  it('an expired key fails verification and lists as expired', async () => {
    const created = await fx.apiKeys.create(
      { namespace: 'acme', name: 'short', role: 'viewer', expiresAt: new Date(Date.now() + 60_000).toISOString() },
      acting(root),
    );
    const identity = await fx.apiKeys.verify(created.key);
    expect(identity?.expiresAt).toEqual(new Date(created.expiresAt!));
    await fx.dataSource.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      created.id,
    ]);
    expect(await fx.apiKeys.verify(created.key)).toBeUndefined();
    expect((await fx.apiKeys.list({ namespace: 'acme' })).items[0].status).toBe('expired');
  });

  it('refuses expiresAt in the past, or no instant, as -32602 naming expiresAt', async () => {
    for (const expiresAt of ['2001-01-01T00:00:00Z', new Date(Date.now() - 1000), 'soon']) {
      const error = await rejectionOf(
        fx.apiKeys.create({ namespace: 'acme', name: 'x', role: 'viewer', expiresAt }, acting(root)),
      );
      expect((error as ValidationError).violations.map((v) => v.field)).toEqual(['expiresAt']);
    }
  });

  it('refuses to mint a role stronger than the caller holds there (-32003)', async () => {
    const error = await rejectionOf(
      fx.apiKeys.create({ namespace: 'acme', name: 'up', role: 'owner' }, acting(acmeAdmin)),
    );
    expect(error.kind).toBe('authorization');
    expect(error.reason).toBe('ROLE_ESCALATION');
    expect(error.metadata).toEqual({ namespace: 'acme', requestedRole: 'owner', heldRole: 'admin' });
    // Equal and weaker roles are fine; another namespace is not the caller's at all.
    await fx.apiKeys.create({ namespace: 'acme', name: 'same', role: 'admin' }, acting(acmeAdmin));
    const elsewhere = await rejectionOf(
      fx.apiKeys.create({ namespace: 'beta', name: 'x', role: 'viewer' }, acting(acmeAdmin)),
    );
    expect(elsewhere.reason).toBe('ROLE_ESCALATION');
    // A grant on the parent holds below it.
    await fx.namespaces.create({ namespace: 'acme/web' }, acting(root));
    await fx.apiKeys.create({ namespace: 'acme/web', name: 'child', role: 'admin' }, acting(acmeAdmin));
  });

  it('a name is unique among unrevoked keys of a namespace (-32005)', async () => {
    const first = await fx.apiKeys.create({ namespace: 'acme', name: 'ci', role: 'viewer' }, acting(root));
    const duplicate = await rejectionOf(
      fx.apiKeys.create({ namespace: 'acme', name: 'ci', role: 'viewer' }, acting(root)),
    );
    expect(duplicate.kind).toBe('duplicate');
    expect(duplicate.reason).toBe('KEY_NAME_TAKEN');
    await fx.apiKeys.create({ namespace: 'beta', name: 'ci', role: 'viewer' }, acting(root));
    await fx.apiKeys.revoke({ namespace: 'acme', id: first.id }, acting(root));
    const again = await fx.apiKeys.create({ namespace: 'acme', name: 'ci', role: 'viewer' }, acting(root));
    expect(again.id).not.toBe(first.id);
  });

  it('refuses a namespace that does not exist, a bad name or role', async () => {
    const missing = await rejectionOf(
      fx.apiKeys.create({ namespace: 'ghost', name: 'x', role: 'viewer' }, { actor: operatorActor('cli:ops') }),
    );
    expect(missing.reason).toBe('NAMESPACE_NOT_FOUND');
    const bad = await rejectionOf(
      fx.apiKeys.create({ namespace: 'acme', name: ' spaced out', role: 'god' as 'owner' }, acting(root)),
    );
    expect((bad as ValidationError).violations.map((v) => v.field)).toEqual(['name', 'role']);
  });

  it('records use at most once a minute, without failing the request', async () => {
    const created = await fx.apiKeys.create({ namespace: 'acme', name: 'used', role: 'viewer' }, acting(root));
    expect((await storedRow(created.id)).last_used_at).toBeNull();
    await fx.apiKeys.verify(created.key);
    await fx.apiKeys.whenIdle();
    const firstUse = (await storedRow(created.id)).last_used_at as Date;
    expect(firstUse).toBeInstanceOf(Date);
    for (let i = 0; i < 3; i++) await fx.apiKeys.verify(created.key);
    await fx.apiKeys.whenIdle();
    expect((await storedRow(created.id)).last_used_at).toEqual(firstUse);

    // Another replica (a fresh service) sees the stored time and does not write either.
    const replica = new ApiKeyService(fx.dataSource, fx.repositories.apiKeys, fx.audit, new UncachedIdentityReads());
    await replica.verify(created.key);
    await replica.whenIdle();
    expect((await storedRow(created.id)).last_used_at).toEqual(firstUse);

    // A minute later it is written again.
    await fx.dataSource.query(`UPDATE api_keys SET last_used_at = now() - interval '2 minutes' WHERE id = $1`, [
      created.id,
    ]);
    await replica.verify(created.key);
    await replica.whenIdle();
    expect(((await storedRow(created.id)).last_used_at as Date).getTime()).toBeGreaterThan(Date.now() - 30_000);
  });
});
