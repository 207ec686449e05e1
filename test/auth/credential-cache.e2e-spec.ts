/**
 * The credential cache (docs/security.md): a known API key, its memberships and its namespace are
 * served from memory — no database read per request — yet a revocation, a membership change or a
 * namespace deletion takes effect on the very next request, on every replica, whoever made it (the
 * API, the admin CLI, SQL). While a replica does not hear the database's notifications it reads
 * everything from the database.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import { ulid } from 'ulid';
import pg from 'pg';
import { ApiKeyService, type CreatedApiKey } from '../../packages/server/src/auth/apikey/api-key.service.js';
import { IdentityCache, MAX_IDENTITY_ENTRIES } from '../../packages/server/src/auth/identity-cache.js';
import { listenerApplicationName } from '../../packages/server/src/database/database-notifications.js';
import type { Role } from '../../packages/server/src/common/principal.js';
import { operatorActor } from '../../packages/server/src/common/actor.js';
import { databaseTargets, createTestDatabase, type TestDatabase } from '../support/database.js';
import { rawCall, startServer, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { DataSource } from 'typeorm';
import { describeNeeding, runningPostgres } from '../support/requirements.js';
import { ifAssigned } from '../support/assigned.js';

const operator = { actor: operatorActor('cli:tests'), requestId: 'credential-cache-tests' };
const API_KEY_AUTH = { CLEVERAGENTS_AUTH_SCHEMES: 'apiKey' };

async function mintKey(server: TestServer, role: Role, namespace = 'default'): Promise<CreatedApiKey> {
  const name = `k-${role}-${Math.random().toString(36).slice(2, 10)}`;
  return server.app.get(ApiKeyService).create({ namespace, name, role }, operator);
}

function call(server: TestServer, key: string, method: string, params: Record<string, unknown> = {}) {
  return rawCall(server.endpoint, { jsonrpc: '2.0', id: 1, method, params }, { 'x-api-key': key });
}

function whoami(server: TestServer, key: string) {
  return call(server, key, '_cleveragents/auth/whoami');
}

function send(server: TestServer, key: string, tenant: string) {
  return rawCall(
    server.endpoint,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: {
        tenant,
        message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: 'hello' }] },
        configuration: { returnImmediately: false },
      },
    },
    { 'x-api-key': key, 'a2a-version': '1.0' },
  );
}

/** A well-formed key whose id no key has (a fresh ULID with a random secret). */
function unknownKey(): string {
  return `ca_${ulid().toLowerCase()}_${randomBytes(32).toString('base64url')}`;
}

function cacheOf(server: TestServer): IdentityCache {
  return server.app.get(IdentityCache);
}

describe.each(databaseTargets())('credential cache on $kind', (target) => {
  let db: TestDatabase;
  let server: TestServer;
  let dataSource: DataSource;
  /** A change by SQL committed through the server's own database connection (so this replica made it). */
  const sql = (query: string, values: unknown[] = []) =>
    dataSource.transaction((manager) => manager.query(query, values));

  beforeAll(async () => {
    db = await target.create();
    server = await startServer(db, API_KEY_AUTH);
    dataSource = server.app.get(DataSource);
  });
  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('is live once the server is up, and reported by diagnostics/health', async () => {
    expect(cacheOf(server).stats()).toMatchObject({ enabled: true, live: true });
    const key = await mintKey(server, 'viewer');
    const res = await call(server, key.key, '_cleveragents/diagnostics/health');
    expect(res.json.result.checks.credentialCache).toMatchObject({ live: true });
  });

  it('serves a key it has seen, its memberships and its namespace from memory', async () => {
    const key = await mintKey(server, 'member');
    expect((await send(server, key.key, 'default')).json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const before = cacheOf(server).stats();
    for (let i = 0; i < 20; i++) {
      expect((await send(server, key.key, 'default')).status).toBe(200);
    }
    const after = cacheOf(server).stats();
    expect(after.misses - before.misses).toBe(0);
    // Each send: the key, the key's memberships, the namespace's existence.
    expect(after.hits - before.hits).toBe(60);
  });

  it('an unknown key id costs one database read however often it is presented, as a known id does', async () => {
    const service = server.app.get(ApiKeyService);
    const known = await mintKey(server, 'viewer');
    const unknown = unknownKey();
    const wrongSecret = `${known.key.slice(0, 30)}${unknownKey().slice(30)}`;
    const reads = jest.spyOn(dataSource, 'query'); // counts, and calls the real query
    try {
      for (let i = 0; i < 20; i++) {
        expect(await service.verify(unknown)).toBeUndefined();
        expect(await service.verify(wrongSecret)).toBeUndefined();
      }
      const keyReads = reads.mock.calls.filter(([query]) => /FROM api_keys WHERE id = \$1/.test(String(query)));
      expect(keyReads.map(([, values]) => (values as string[])[0])).toEqual([
        unknown.slice(3, 29).toUpperCase(),
        known.id,
      ]);
    } finally {
      reads.mockRestore();
    }
  });

  it('a refused key costs one database read the first time, whether its id is unknown, stored or held', async () => {
    const stored = await mintKey(server, 'viewer');
    const inUse = await mintKey(server, 'viewer');
    // Its owner's call: the key's record is now held in memory, as a key in daily use is.
    expect((await whoami(server, inUse.key)).status).toBe(200);
    const wrong = (key: string) => `${key.slice(0, 30)}${unknownKey().slice(30)}`;
    const unknown = unknownKey();
    const reads = jest.spyOn(dataSource, 'query'); // counts, and calls the real query
    const keyReads = () => reads.mock.calls.filter(([query]) => /FROM api_keys WHERE id = \$1/.test(String(query)));
    /** The reads of one refused whoami over HTTP (the guard's whole path). */
    const readsOf = async (key: string) => {
      const before = keyReads().length;
      expect((await whoami(server, key)).status).toBe(401);
      return keyReads().length - before;
    };
    try {
      const counts = {
        unknown: [await readsOf(unknown), await readsOf(unknown)],
        stored: [await readsOf(wrong(stored.key)), await readsOf(wrong(stored.key))],
        held: [await readsOf(wrong(inUse.key)), await readsOf(wrong(inUse.key))],
      };
      // The same work on each path: time cannot tell a stored id, nor one in use, from an unknown one.
      expect(counts).toEqual({ unknown: [1, 0], stored: [1, 0], held: [1, 0] });
    } finally {
      reads.mockRestore();
    }
  });

  it('hashes and compares the presented secret in constant time on every path, unknown id included', async () => {
    const service = server.app.get(ApiKeyService);
    const known = await mintKey(server, 'viewer');
    // records, and runs the real comparison (a protected method, hence the cast)
    const compared = jest.spyOn(
      service as unknown as { compareSecret(secret: string, hash: string): boolean },
      'compareSecret',
    );
    try {
      const presented = [unknownKey(), `${known.key.slice(0, 30)}${unknownKey().slice(30)}`, known.key];
      for (const key of presented) await service.verify(key);
      expect(compared.mock.calls.map(([secret]) => secret)).toEqual(presented.map((key) => key.slice(30)));
      for (const [, hash] of compared.mock.calls) expect(hash).toMatch(/^[0-9a-f]{64}$/);
      expect(compared.mock.results.map((r) => r.value)).toEqual([false, false, true]);
    } finally {
      compared.mockRestore();
    }
  });

  it('a key id remembered as unknown verifies at once when a key with that id is stored', async () => {
    const key = unknownKey();
    expect((await whoami(server, key)).status).toBe(401);
    expect((await whoami(server, key)).status).toBe(401);
    await sql(
      `INSERT INTO api_keys (id, name, namespace, role, secret_hash, created_by) VALUES ($1, $2, 'default', 'viewer', $3, 'sql:operator')`,
      [
        key.slice(3, 29).toUpperCase(),
        `late-${key.slice(3, 11)}`,
        createHash('sha256').update(key.slice(30)).digest('hex'),
      ],
    );
    expect((await whoami(server, key)).status).toBe(200);
  });

  it('holds at most its bound, dropping the least recently used entry first', async () => {
    const cache = cacheOf(server);
    const loads: string[] = [];
    const get = (key: string) =>
      cache.get(key, () => {
        loads.push(key);
        return Promise.resolve(key);
      });
    for (let i = 0; i < MAX_IDENTITY_ENTRIES; i++) await get(`bound:${i}`);
    expect(cache.stats().size).toBe(MAX_IDENTITY_ENTRIES);
    // The first one read again is the most recently used: the overflow drops the second instead.
    await get('bound:0');
    loads.length = 0;
    await get('bound:overflow');
    expect(cache.stats().size).toBe(MAX_IDENTITY_ENTRIES);
    await get('bound:0');
    await get('bound:1');
    expect(loads).toEqual(['bound:overflow', 'bound:1']);
    cache.forget('*');
  });

  it('a key revoked by SQL is refused on the next request', async () => {
    const key = await mintKey(server, 'viewer');
    expect((await whoami(server, key.key)).status).toBe(200);
    expect((await whoami(server, key.key)).status).toBe(200);
    await sql('UPDATE api_keys SET revoked_at = now(), revoked_by = $2 WHERE id = $1', [key.id, 'sql:operator']);
    const res = await whoami(server, key.key);
    expect(res.status).toBe(401);
    expect(res.json.error.data[0].reason).toBe('INVALID_API_KEY');
  });

  it('a key whose expiry an operator moves into the past is refused on the next request', async () => {
    const key = await mintKey(server, 'viewer');
    expect((await whoami(server, key.key)).status).toBe(200);
    await sql(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [key.id]);
    expect((await whoami(server, key.key)).status).toBe(401);
  });

  it('a key deleted outright is refused on the next request', async () => {
    const key = await mintKey(server, 'viewer');
    expect((await whoami(server, key.key)).status).toBe(200);
    await sql('DELETE FROM api_keys WHERE id = $1', [key.id]);
    expect((await whoami(server, key.key)).status).toBe(401);
  });

  it('recording a key’s use does not evict it', async () => {
    const key = await mintKey(server, 'viewer');
    expect((await whoami(server, key.key)).status).toBe(200);
    await server.app.get(ApiKeyService).whenIdle();
    const before = cacheOf(server).stats();
    await sql(`UPDATE api_keys SET last_used_at = now() - interval '1 hour' WHERE id = $1`, [key.id]);
    expect((await whoami(server, key.key)).status).toBe(200);
    expect(cacheOf(server).stats().misses).toBe(before.misses);
  });

  it('a membership granted or removed by SQL changes the role on the next request', async () => {
    await sql(
      `INSERT INTO namespaces (slug, parent, display_name, created_by) VALUES ('cache-team', NULL, 'Cache team', 'test')`,
    );
    const key = await mintKey(server, 'viewer');
    const subject = `apikey:${key.id}`;
    const get = () => call(server, key.key, '_cleveragents/namespace/get', { namespace: 'cache-team' });
    expect((await get()).json.error.code).toBe(-32001);
    expect((await get()).json.error.code).toBe(-32001);

    await sql(
      `INSERT INTO namespace_members (namespace, subject, role, created_by) VALUES ('cache-team', $1, 'viewer', 'test')`,
      [subject],
    );
    expect((await get()).json.result).toMatchObject({ namespace: 'cache-team' });

    await sql(`DELETE FROM namespace_members WHERE namespace = 'cache-team' AND subject = $1`, [subject]);
    expect((await get()).json.error.code).toBe(-32001);
  });

  it('a namespace deleted by SQL is gone for the next send into it', async () => {
    await sql(
      `INSERT INTO namespaces (slug, parent, display_name, created_by) VALUES ('short-lived', NULL, 'x', 'test')`,
    );
    const owner = await mintKey(server, 'owner', 'short-lived');
    expect((await send(server, owner.key, 'short-lived')).status).toBe(200);
    expect((await send(server, owner.key, 'short-lived')).status).toBe(200);
    // Deleting the namespace deletes its keys: send with a key of `*`-free default owner instead.
    const admin = await mintKey(server, 'owner');
    await sql(
      `INSERT INTO namespace_members (namespace, subject, role, created_by) VALUES ('short-lived', $1, 'owner', 'test')`,
      [`apikey:${admin.id}`],
    );
    expect((await send(server, admin.key, 'short-lived')).status).toBe(200);
    await sql(`DELETE FROM tasks WHERE namespace = 'short-lived'`);
    await sql(`DELETE FROM namespaces WHERE slug = 'short-lived'`);
    expect((await send(server, owner.key, 'short-lived')).status).toBe(401);
    const res = await send(server, admin.key, 'short-lived');
    expect(res.json.error).toMatchObject({ code: -32001 });
  });

  it('with CLEVERAGENTS_AUTH_CACHE_TTL_SECONDS=0 nothing is kept', async () => {
    const uncached = await startServer(db, { ...API_KEY_AUTH, CLEVERAGENTS_AUTH_CACHE_TTL_SECONDS: '0' }).catch(
      (error: Error) => error,
    );
    if (uncached instanceof Error) {
      // The embedded database admits one server at a time.
      expect(target.kind).toBe('embedded');
      expect(uncached.message).toMatch(/lock|in use|held/i);
      return;
    }
    try {
      const key = await mintKey(uncached, 'viewer');
      for (let i = 0; i < 3; i++) expect((await whoami(uncached, key.key)).status).toBe(200);
      expect(cacheOf(uncached).stats()).toMatchObject({ enabled: false, live: false, size: 0, hits: 0 });
    } finally {
      await uncached.close();
    }
  });
});

describeNeeding(runningPostgres(), 'credential cache across replicas on PostgreSQL', () => {
  let db: TestDatabase;
  let a: TestServer;
  let b: TestServer;
  let owner: CreatedApiKey;

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await startServer(db, API_KEY_AUTH);
    b = await startServer(db, API_KEY_AUTH);
    owner = await mintKey(a, 'owner');
  });
  afterAll(async () => {
    await ifAssigned(b)?.close();
    await ifAssigned(a)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('a key id replica B remembers as unknown verifies there as soon as replica A stores it', async () => {
    for (let i = 0; i < 10; i++) {
      const key = unknownKey();
      expect((await whoami(b, key)).status).toBe(401);
      expect((await whoami(b, key)).status).toBe(401);
      await a.app
        .get(DataSource)
        .transaction((m) =>
          m.query(
            `INSERT INTO api_keys (id, name, namespace, role, secret_hash, created_by) VALUES ($1, $2, 'default', 'viewer', $3, 'sql:operator')`,
            [
              key.slice(3, 29).toUpperCase(),
              `late-${i}-${key.slice(3, 11)}`,
              createHash('sha256').update(key.slice(30)).digest('hex'),
            ],
          ),
        );
      expect((await whoami(b, key)).status).toBe(200);
    }
  });

  it('a key revoked on replica A is refused by replica B on the very next request, 50 times out of 50', async () => {
    const refusedAtOnce: boolean[] = [];
    for (let i = 0; i < 50; i++) {
      const key = await mintKey(a, 'member');
      expect((await whoami(b, key.key)).status).toBe(200);
      expect((await whoami(b, key.key)).status).toBe(200);
      const revoked = await call(a, owner.key, '_cleveragents/auth/apikey/revoke', {
        namespace: 'default',
        id: key.id,
      });
      expect(revoked.json.result).toMatchObject({ id: key.id, status: 'revoked' });
      refusedAtOnce.push((await whoami(b, key.key)).status === 401);
    }
    expect(refusedAtOnce.filter(Boolean)).toHaveLength(50);
  });

  it('a revoke answers only after every listening replica acknowledged it, a slow one included', async () => {
    // A third "replica": a bare listening connection that acknowledges each barrier once A and B have, and
    // SLOW_ACK_MS after that: a revoke that waited for them alone would answer within that window (well
    // within the 2 s a barrier waits at most).
    const SLOW_ACK_MS = 300;
    const slow = new pg.Client({
      connectionString: db.env.DATABASE_URL,
      application_name: listenerApplicationName('cleveragents_identity'),
    });
    await slow.connect();
    const events: string[] = [];
    /** Per barrier token: how many of A and B acknowledged it, and who waits for both. */
    const acked = new Map<string, number>();
    const waiting = new Map<string, () => void>();
    const bothAcked = (token: string) =>
      new Promise<void>((resolve) => ((acked.get(token) ?? 0) >= 2 ? resolve() : waiting.set(token, resolve)));
    // The server may hear an acknowledgement before its sender has the reply to its own query: each is
    // awaited before the connection ends, or ending it fails the query with "Connection terminated".
    const acknowledgements: Promise<unknown>[] = [];
    slow.on('notification', (message) => {
      const payload = message.payload ?? '';
      if (payload.startsWith('ack:')) {
        const token = payload.split(':')[1];
        acked.set(token, (acked.get(token) ?? 0) + 1);
        if (acked.get(token) === 2) waiting.get(token)?.();
        return;
      }
      events.push(`heard ${payload.split(':')[0]}`);
      if (payload.startsWith('sync:')) {
        const token = payload.slice(5);
        acknowledgements.push(
          bothAcked(token)
            .then(() => {
              events.push('A and B acknowledged');
              return new Promise((resolve) => setTimeout(resolve, SLOW_ACK_MS));
            })
            .then(() => {
              events.push('acknowledged');
              return slow.query('SELECT pg_notify($1, $2)', ['cleveragents_identity', `ack:${token}:slow`]);
            }),
        );
      }
    });
    await slow.query('LISTEN cleveragents_identity');
    try {
      const key = await mintKey(a, 'member');
      events.length = 0;
      const revoked = await call(a, owner.key, '_cleveragents/auth/apikey/revoke', {
        namespace: 'default',
        id: key.id,
      });
      events.push('answered');
      expect(revoked.json.result).toMatchObject({ status: 'revoked' });
      expect(events).toEqual(['heard apikey', 'heard sync', 'A and B acknowledged', 'acknowledged', 'answered']);
    } finally {
      await Promise.all(acknowledgements);
      await slow.end();
    }
  });

  it('a revocation by SQL from outside any replica reaches B with its notification', async () => {
    const key = await mintKey(a, 'member');
    expect((await whoami(b, key.key)).status).toBe(200);
    const hitsBefore = cacheOf(b).stats().hits;
    expect((await whoami(b, key.key)).status).toBe(200);
    expect(cacheOf(b).stats().hits).toBeGreaterThan(hitsBefore);
    const evictionsBefore = cacheOf(b).stats().evictions;
    const operatorClient = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await operatorClient.connect();
    try {
      await operatorClient.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
    } finally {
      await operatorClient.end();
    }
    // Nothing made on B waits for it: the entry goes when the notification arrives.
    await until(() => cacheOf(b).stats().evictions > evictionsBefore, 'the notification to reach B');
    expect((await whoami(b, key.key)).status).toBe(401);
  });

  it('a membership set and removed on A changes the role on B on the next request', async () => {
    expect((await call(a, owner.key, '_cleveragents/namespace/create', { namespace: 'replicated' })).status).toBe(200);
    const key = await mintKey(a, 'viewer');
    const subject = `apikey:${key.id}`;
    const readOnB = () => call(b, key.key, '_cleveragents/namespace/get', { namespace: 'replicated' });
    expect((await readOnB()).json.error.code).toBe(-32001);
    expect((await readOnB()).json.error.code).toBe(-32001);

    const set = await call(a, owner.key, '_cleveragents/namespace/members/set', {
      namespace: 'replicated',
      subject,
      role: 'viewer',
    });
    expect(set.json.result).toMatchObject({ subject, role: 'viewer' });
    expect((await readOnB()).json.result).toMatchObject({ namespace: 'replicated' });

    await call(a, owner.key, '_cleveragents/namespace/members/remove', { namespace: 'replicated', subject });
    expect((await readOnB()).json.error.code).toBe(-32001);
  });

  it('a namespace deleted on A is gone for sends on B at once', async () => {
    expect((await call(a, owner.key, '_cleveragents/namespace/create', { namespace: 'ephemeral' })).status).toBe(200);
    expect((await send(b, owner.key, 'ephemeral')).status).toBe(200);
    expect((await send(b, owner.key, 'ephemeral')).status).toBe(200);
    const tasks = b.app.get(DataSource);
    // Emptied by hand (the sends made tasks and their sessions), so that the namespace may be deleted.
    await tasks.query(`DELETE FROM tasks WHERE namespace = 'ephemeral'`);
    await tasks.query(`DELETE FROM sessions WHERE namespace = 'ephemeral'`);
    const deleted = await call(a, owner.key, '_cleveragents/namespace/delete', { namespace: 'ephemeral' });
    expect(deleted.json.result).toEqual({ namespace: 'ephemeral', deleted: true });
    expect((await send(b, owner.key, 'ephemeral')).json.error).toMatchObject({ code: -32001 });
  });

  it('while B cannot hear notifications it reads credentials from the database, and caches again once back', async () => {
    const key = await mintKey(a, 'viewer');
    expect((await whoami(b, key.key)).status).toBe(200);
    const admin = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await admin.connect();
    try {
      // Cut every listener on this database: A's and B's.
      const cut = await admin.query(
        `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
         WHERE datname = current_database() AND application_name = $1`,
        [listenerApplicationName('cleveragents_identity')],
      );
      expect(cut.rows).toHaveLength(2);
      await until(() => !cacheOf(b).stats().live, 'B to notice the lost connection');
      // A revocation nobody hears: B, not live, asks the database.
      await admin.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
      expect((await whoami(b, key.key)).status).toBe(401);
      // A too: a key stored on A notifies its insert, and A waits for B's acknowledgement only while it listens.
      await until(() => cacheOf(a).stats().live && cacheOf(b).stats().live, 'A and B to listen again');
    } finally {
      await admin.end();
    }
    const fresh = await mintKey(a, 'viewer');
    expect((await whoami(b, fresh.key)).status).toBe(200);
    const before = cacheOf(b).stats();
    expect((await whoami(b, fresh.key)).status).toBe(200);
    expect(cacheOf(b).stats().hits).toBeGreaterThan(before.hits);
  });

  it('does no database read for a known key: the identity tables can be locked and requests still pass', async () => {
    const key = await mintKey(a, 'member');
    expect((await whoami(b, key.key)).status).toBe(200);
    const locker = new pg.Client({ connectionString: db.env.DATABASE_URL });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE api_keys, namespace_members, namespaces IN ACCESS EXCLUSIVE MODE');
      const answers = await Promise.all(Array.from({ length: 10 }, () => whoami(b, key.key)));
      expect(answers.map((res) => res.status)).toEqual(Array(10).fill(200));
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  });
});
