import { randomBytes } from 'node:crypto';
import { SECRET_KEY_BYTES, SecretBox } from '../../packages/server/src/common/secret-box.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { REGISTRY_KINDS, type RegistryKind } from '../../packages/server/src/registry/registry.kinds.js';
import { AppConfig } from '../../packages/server/src/config/app.config.js';
import { ModelEndpointGuard } from '../../packages/server/src/execution/model-endpoint.guard.js';
import { RegistryService } from '../../packages/server/src/registry/registry.service.js';
import type { RegistryEntry } from '../../packages/server/src/registry/registry-entry.js';
import { SyncService, type PushedChange, type SyncChange } from '../../packages/server/src/sync/sync.service.js';
import { acting, principalWith } from '../factories/principals.js';
import { OTHER_SPECS, VALID_SPECS, VALID_SPECS_ENV } from '../factories/registry.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { openIdentityFixture, rejectionOf, type IdentityFixture } from '../support/identity-database.js';
import { extensionCalls, fieldsOf, startServer, type TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

const root = acting(principalWith('oidc:root', { '*': 'owner' }));
const alice = acting(principalWith('oidc:alice', { '*': 'owner' }));
const bob = acting(principalWith('oidc:bob', { '*': 'owner' }));

/** A client's local copy: what applying pulled changes in order leaves. */
class LocalCopy {
  readonly entries = new Map<string, RegistryEntry>();
  cursor = 0;
  readonly seen: number[] = [];

  apply(change: SyncChange): void {
    this.seen.push(change.seq);
    const key = `${change.kind}/${change.name}`;
    if (change.op === 'delete') this.entries.delete(key);
    else this.entries.set(key, change.entity!);
  }

  /** Pulls until caught up; returns the number of pages. */
  async pullAll(sync: SyncService, namespace: string, limit: number): Promise<number> {
    let pages = 0;
    for (;;) {
      const page = await sync.pull(namespace, this.cursor, limit);
      pages++;
      expect(page.changes.length).toBeLessThanOrEqual(limit);
      for (const change of page.changes) this.apply(change);
      this.cursor = page.cursor;
      if (!page.hasMore) return pages;
    }
  }

  sorted(): RegistryEntry[] {
    return [...this.entries.values()].sort((a, b) => (`${a.kind}/${a.name}` < `${b.kind}/${b.name}` ? -1 : 1));
  }
}

/** Every live entry of a namespace, through registry/list. */
async function serverRegistry(registry: RegistryService, namespace: string): Promise<RegistryEntry[]> {
  const all: RegistryEntry[] = [];
  let pageToken = '';
  do {
    const page = await registry.list({ namespace, pageSize: 100, pageToken });
    all.push(...page.items);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return all.sort((a, b) => (`${a.kind}/${a.name}` < `${b.kind}/${b.name}` ? -1 : 1));
}

/** The seqs of a namespace's change log, in order, read straight from the table. */
async function loggedSeqs(fx: IdentityFixture, namespace: string): Promise<number[]> {
  const rows: { seq: string }[] = await fx.dataSource.query(
    'SELECT seq FROM registry_changes WHERE namespace = $1 ORDER BY seq',
    [namespace],
  );
  return rows.map((row) => Number(row.seq));
}

function oneToN(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1);
}

/** A deterministic pseudo-random sequence (so that a failure can be replayed). */
function lcg(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

describe.each(databaseTargets())('sync on $kind', (target) => {
  let fx: IdentityFixture;
  let registry: RegistryService;
  let sync: SyncService;

  beforeAll(async () => {
    fx = await openIdentityFixture(target);
    const modelEndpoints = new ModelEndpointGuard(AppConfig.fromEnv(VALID_SPECS_ENV));
    const entries = fx.repositories.registry;
    const secretBox = new SecretBox([randomBytes(SECRET_KEY_BYTES)]);
    registry = new RegistryService(fx.dataSource, entries, fx.audit, modelEndpoints, secretBox);
    sync = new SyncService(fx.dataSource, registry, entries, modelEndpoints);
  });
  afterAll(async () => {
    await ifAssigned(fx)?.close();
  });
  beforeEach(async () => {
    await fx.reset();
    await fx.namespaces.create({ namespace: 'acme' }, root);
  });

  it('two clients edit the same entry from the same base: one push applies, the other gets the winner as a conflict', async () => {
    const created = await registry.create(
      { namespace: 'acme', kind: 'tool', name: 'grep', spec: VALID_SPECS.tool },
      root,
    );
    const edit = (spec: object): PushedChange[] => [
      { kind: 'tool', name: 'grep', op: 'upsert', baseRevision: created.revision, spec },
    ];
    const aliceSpec = { ...OTHER_SPECS.tool, description: 'alice' };
    const bobSpec = { ...OTHER_SPECS.tool, description: 'bob' };
    const [a, b] = await Promise.all([
      sync.push('acme', edit(aliceSpec), false, alice),
      sync.push('acme', edit(bobSpec), false, bob),
    ]);
    const winner = a.applied.length === 1 ? a : b;
    const loser = winner === a ? b : a;
    const winnerSpec = winner === a ? aliceSpec : bobSpec;
    expect(winner).toEqual({ applied: [expect.objectContaining({ index: 0, revision: 2 })], conflicts: [] });
    expect(loser.applied).toEqual([]);
    expect(loser.conflicts).toEqual([
      {
        index: 0,
        kind: 'tool',
        name: 'grep',
        op: 'upsert',
        baseRevision: 1,
        currentRevision: 2,
        reason: 'STALE_REVISION',
        entity: expect.objectContaining({ revision: 2, spec: winnerSpec }),
      },
    ]);
    // Nothing was overwritten: the server holds the winner's edit, and the loser can retry from it.
    expect((await registry.get({ namespace: 'acme', kind: 'tool', name: 'grep' })).spec).toEqual(winnerSpec);
    const retried = await sync.push(
      'acme',
      [
        {
          kind: 'tool',
          name: 'grep',
          op: 'upsert',
          baseRevision: loser.conflicts[0].currentRevision,
          spec: OTHER_SPECS.tool,
        },
      ],
      false,
      winner === a ? bob : alice,
    );
    expect(retried.applied).toEqual([expect.objectContaining({ revision: 3 })]);
  });

  it('reports each kind of conflict with the server revision, and applies the rest when not atomic', async () => {
    await registry.create({ namespace: 'acme', kind: 'skill', name: 'kept', spec: VALID_SPECS.skill }, root);
    await registry.create({ namespace: 'acme', kind: 'skill', name: 'gone', spec: VALID_SPECS.skill }, root);
    await registry.delete({ namespace: 'acme', kind: 'skill', name: 'gone' }, root);
    const result = await sync.push(
      'acme',
      [
        { kind: 'skill', name: 'kept', op: 'upsert', spec: OTHER_SPECS.skill },
        { kind: 'skill', name: 'fresh', op: 'upsert', spec: VALID_SPECS.skill, labels: { from: 'push' } },
        { kind: 'skill', name: 'gone', op: 'upsert', baseRevision: 1, spec: OTHER_SPECS.skill },
        { kind: 'skill', name: 'never', op: 'delete', baseRevision: 3 },
        { kind: 'skill', name: 'kept', op: 'delete', baseRevision: 7 },
        { kind: 'skill', name: 'gone', op: 'upsert', baseRevision: 0, spec: OTHER_SPECS.skill },
        { kind: 'skill', name: 'fresh', op: 'upsert', baseRevision: 1, spec: OTHER_SPECS.skill },
      ],
      false,
      alice,
    );
    expect(result.applied.map((a) => [a.index, a.name, a.revision])).toEqual([
      [1, 'fresh', 1],
      [5, 'gone', 3],
      [6, 'fresh', 2],
    ]);
    expect(result.conflicts.map((c) => [c.index, c.reason, c.currentRevision, c.entity?.revision ?? null])).toEqual([
      [0, 'ALREADY_EXISTS', 1, 1],
      [2, 'NOT_FOUND', 2, null],
      [3, 'NOT_FOUND', 0, null],
      [4, 'STALE_REVISION', 1, 1],
    ]);
    // Labels absent from an upsert are kept.
    expect((await registry.get({ namespace: 'acme', kind: 'skill', name: 'fresh' })).labels).toEqual({ from: 'push' });
  });

  it('atomic: a conflict anywhere applies nothing, and reports the committed state', async () => {
    await registry.create({ namespace: 'acme', kind: 'tool', name: 'grep', spec: VALID_SPECS.tool }, root);
    const before = await sync.status('acme');
    const changes: PushedChange[] = [
      { kind: 'tool', name: 'sed', op: 'upsert', spec: VALID_SPECS.tool },
      { kind: 'tool', name: 'grep', op: 'upsert', baseRevision: 1, spec: OTHER_SPECS.tool },
      { kind: 'tool', name: 'grep', op: 'upsert', baseRevision: 1, spec: VALID_SPECS.tool },
      { kind: 'tool', name: 'awk', op: 'upsert', spec: VALID_SPECS.tool },
    ];
    const refused = await sync.push('acme', changes, true, alice);
    expect(refused.applied).toEqual([]);
    // Change 2 conflicts with change 1 of the same push, which was rolled back: the server still holds revision 1.
    expect(refused.conflicts).toEqual([
      expect.objectContaining({
        index: 2,
        reason: 'STALE_REVISION',
        currentRevision: 1,
        entity: expect.objectContaining({ spec: VALID_SPECS.tool }),
      }),
    ]);
    expect(await sync.status('acme')).toEqual(before);
    expect((await rejectionOf(registry.get({ namespace: 'acme', kind: 'tool', name: 'sed' }))).reason).toBe(
      'REGISTRY_ENTRY_NOT_FOUND',
    );

    const accepted = await sync.push('acme', [changes[0], changes[1], changes[3]], true, alice);
    expect(accepted.conflicts).toEqual([]);
    expect(accepted.applied.map((a) => [a.index, a.seq])).toEqual([
      [0, before.latestSeq + 1],
      [1, before.latestSeq + 2],
      [2, before.latestSeq + 3],
    ]);
    expect((await sync.status('acme')).counts).toMatchObject({ tool: 3 });
  });

  it('a delete is a tombstone in the log; the name used again counts its revisions on', async () => {
    await registry.create({ namespace: 'acme', kind: 'actor', name: 'bot', spec: VALID_SPECS.actor }, root);
    await registry.delete({ namespace: 'acme', kind: 'actor', name: 'bot' }, root);
    await sync.push('acme', [{ kind: 'actor', name: 'bot', op: 'upsert', spec: OTHER_SPECS.actor }], false, alice);
    const pulled = await sync.pull('acme', 5, 100);
    expect(pulled).toEqual({
      changes: [
        {
          seq: 6,
          kind: 'actor',
          name: 'bot',
          op: 'upsert',
          revision: 1,
          entity: expect.objectContaining({ spec: VALID_SPECS.actor }),
        },
        { seq: 7, kind: 'actor', name: 'bot', op: 'delete', revision: 2 },
        {
          seq: 8,
          kind: 'actor',
          name: 'bot',
          op: 'upsert',
          revision: 3,
          entity: expect.objectContaining({ spec: OTHER_SPECS.actor }),
        },
      ],
      cursor: 8,
      hasMore: false,
    });
    expect(pulled.changes[2].entity!.createdBy).toBe('oidc:alice');
    expect(await sync.pull('acme', 8, 100)).toEqual({ changes: [], cursor: 8, hasMore: false });
    const ahead = await rejectionOf(sync.pull('acme', 9, 100));
    expect([ahead.kind, ahead.reason]).toEqual(['validation', 'CURSOR_AHEAD']);
    const audit = await fx.audit.list({ namespace: 'acme', pageSize: 3 });
    expect(audit.items.map((r) => [r.action, r.actor, r.details.via, r.details.seq])).toEqual([
      ['registry.create', 'oidc:alice', 'sync', 8],
      ['registry.delete', 'oidc:root', 'registry', 7],
      ['registry.create', 'oidc:root', 'registry', 6],
    ]);
  });

  it('no lost update and no gap under 20 concurrent writers, with a client pulling all along', async () => {
    const WRITERS = 20;
    const INCREMENTS = 5;
    const OWN = 3;
    await registry.create(
      { namespace: 'acme', kind: 'tool', name: 'counter', spec: VALID_SPECS.tool, labels: { count: '0' } },
      root,
    );
    let conflicts = 0;
    const writer = async (w: number) => {
      const by = acting(principalWith(`oidc:writer-${w}`, { '*': 'owner' }));
      for (let n = 0; n < OWN; n++) {
        await registry.create({ namespace: 'acme', kind: 'skill', name: `w${w}-${n}`, spec: VALID_SPECS.skill }, by);
      }
      let current = await registry.get({ namespace: 'acme', kind: 'tool', name: 'counter' });
      for (let done = 0; done < INCREMENTS;) {
        const count = Number(current.labels.count) + 1;
        const result = await sync.push(
          'acme',
          [
            {
              kind: 'tool',
              name: 'counter',
              op: 'upsert',
              baseRevision: current.revision,
              spec: current.spec,
              labels: { count: String(count) },
            },
          ],
          false,
          by,
        );
        if (result.applied.length === 1) {
          done++;
          current = { ...current, revision: result.applied[0].revision, labels: { count: String(count) } };
        } else {
          conflicts++;
          current = result.conflicts[0].entity!;
        }
      }
    };
    const client = new LocalCopy();
    let writing = true;
    const pullWhileWriting = async (): Promise<void> => {
      while (writing) await client.pullAll(sync, 'acme', 7);
    };
    const puller = pullWhileWriting();
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    writing = false;
    await puller;
    await client.pullAll(sync, 'acme', 7);

    const counter = await registry.get({ namespace: 'acme', kind: 'tool', name: 'counter' });
    expect(counter.labels.count).toBe(String(WRITERS * INCREMENTS));
    expect(counter.revision).toBe(1 + WRITERS * INCREMENTS);
    const mutations = 1 + WRITERS * (OWN + INCREMENTS);
    const { latestSeq } = await sync.status('acme');
    expect(latestSeq).toBe(5 + mutations);
    expect(await loggedSeqs(fx, 'acme')).toEqual(oneToN(latestSeq));
    // The client pulled while the writers wrote: every seq once, in order, none skipped.
    expect(client.seen).toEqual(oneToN(latestSeq));
    expect(client.sorted()).toEqual(await serverRegistry(registry, 'acme'));
    console.log(
      `[${target.kind}] concurrency: ${WRITERS} writers, ${mutations} mutations (${conflicts} conflicts retried), ` +
        `change log seq 1..${latestSeq}, gaps=0, duplicates=0, counter=${counter.labels.count}`,
    );
  });

  it('pull from 0 after 1,000 mixed mutations reproduces the registry exactly, at any page size', async () => {
    const random = lcg(47);
    const names = Array.from({ length: 60 }, (_, n) => `n${n}`);
    const counts = { create: 0, update: 0, delete: 0, push: 0 };
    for (let m = 0; m < 1000; m++) {
      const kind: RegistryKind = REGISTRY_KINDS[Math.floor(random() * 4)];
      const name = names[Math.floor(random() * names.length)];
      const specs = random() < 0.5 ? VALID_SPECS : OTHER_SPECS;
      const key = { namespace: 'acme', kind, name };
      const existing = await registry.get(key).catch(() => undefined);
      const labels = { step: String(m) };
      if (!existing) {
        if (random() < 0.3) {
          await sync.push('acme', [{ kind, name, op: 'upsert', spec: specs[kind], labels }], false, bob);
          counts.push++;
        } else {
          await registry.create({ ...key, spec: specs[kind], labels }, alice);
        }
        counts.create++;
      } else if (random() < 0.3) {
        await registry.delete({ ...key, expectedRevision: existing.revision }, alice);
        counts.delete++;
      } else {
        await registry.update({ ...key, spec: specs[kind], labels, expectedRevision: existing.revision }, alice);
        counts.update++;
      }
    }
    expect(counts.create + counts.update + counts.delete).toBe(1000);
    expect(counts.delete).toBeGreaterThan(100);
    const server = await serverRegistry(registry, 'acme');
    const { latestSeq } = await sync.status('acme');
    expect(latestSeq).toBe(1005);
    for (const limit of [1, 37, 100, 1000]) {
      const client = new LocalCopy();
      const pages = await client.pullAll(sync, 'acme', limit);
      expect(client.seen).toEqual(oneToN(latestSeq));
      expect(pages).toBe(Math.ceil(latestSeq / limit));
      expect(client.sorted()).toEqual(server);
    }
    const status = await sync.status('acme');
    expect(status.counts.total).toBe(server.length);
    console.log(
      `[${target.kind}] replay: ${counts.create} creates (${counts.push} by push), ${counts.update} updates, ` +
        `${counts.delete} deletes; seq 1..${latestSeq}; ${server.length} live entries reproduced at page sizes 1, 37, 100, 1000`,
    );
    // About 3,000 calls one after another: seconds on a quiet machine, past a minute on a busy one.
  }, 300_000);

  it('a push then a pull round-trips between two clients', async () => {
    const a = new LocalCopy();
    await a.pullAll(sync, 'acme', 50);
    const b = new LocalCopy();
    await b.pullAll(sync, 'acme', 50);
    const manual = a.entries.get('profile/manual')!;
    const pushed = await sync.push(
      'acme',
      [
        { kind: 'tool', name: 'lint', op: 'upsert', spec: VALID_SPECS.tool, labels: { lang: 'ts' } },
        {
          kind: 'profile',
          name: 'manual',
          op: 'upsert',
          baseRevision: manual.revision,
          spec: { ...manual.spec, budget: { tokens: 10 } },
        },
        { kind: 'actor', name: 'default', op: 'delete', baseRevision: 1 },
      ],
      true,
      alice,
    );
    expect(pushed.conflicts).toEqual([]);
    await a.pullAll(sync, 'acme', 50);
    await b.pullAll(sync, 'acme', 50);
    expect(a.sorted()).toEqual(b.sorted());
    expect(b.sorted()).toEqual(await serverRegistry(registry, 'acme'));
    expect(b.entries.get('tool/lint')).toMatchObject({ labels: { lang: 'ts' }, revision: 1, createdBy: 'oidc:alice' });
    expect(b.entries.has('actor/default')).toBe(false);
    expect(b.entries.get('profile/manual')!.spec).toEqual({ ...manual.spec, budget: { tokens: 10 } });
  });

  it('namespaces predating the registry get the built-ins once, at bootstrap', async () => {
    await fx.dataSource.query(
      `INSERT INTO namespaces (slug, parent, display_name, created_by) VALUES ('legacy', NULL, 'legacy', 'oidc:old')`,
    );
    expect(await sync.status('legacy')).toMatchObject({ latestSeq: 0, counts: { total: 0 } });
    const first = await fx.bootstrap.bootstrapIdentity({ defaultNamespace: 'default', authSchemes: ['none'] });
    expect(first).toEqual({ createdNamespaces: [], builtinsInstalledIn: ['legacy'] });
    expect((await serverRegistry(registry, 'legacy')).map((e) => [e.kind, e.name, e.createdBy])).toEqual([
      ['actor', 'default', 'system:bootstrap'],
      ['profile', 'autonomous', 'system:bootstrap'],
      ['profile', 'guarded', 'system:bootstrap'],
      ['profile', 'manual', 'system:bootstrap'],
      ['profile', 'supervised', 'system:bootstrap'],
    ]);
    // A built-in deleted later stays deleted.
    await registry.delete({ namespace: 'legacy', kind: 'profile', name: 'autonomous' }, root);
    expect(await fx.bootstrap.bootstrapIdentity({ defaultNamespace: 'default', authSchemes: ['none'] })).toEqual({
      createdNamespaces: [],
    });
    expect(await sync.status('legacy')).toMatchObject({ latestSeq: 6, counts: { profile: 3, total: 4 } });
  });
});

describe.each(databaseTargets())('sync methods over HTTP on $kind', (target) => {
  let database: TestDatabase;
  let server: TestServer;
  const { call } = extensionCalls(() => server);
  const fieldsNamed = (answer: { json: any }): string[] => [...new Set(fieldsOf(answer))].sort();

  beforeAll(async () => {
    database = await target.create();
    server = await startServer(database);
  });
  afterAll(async () => {
    await ifAssigned(server)?.close();
    await database.cleanup();
  });

  it('pushes, pulls and reports status', async () => {
    const pushed = await call('sync/push', {
      changes: [
        { kind: 'skill', name: 'review', op: 'upsert', baseRevision: 0, spec: VALID_SPECS.skill },
        { kind: 'actor', name: 'default', op: 'upsert', baseRevision: 1, spec: OTHER_SPECS.actor },
      ],
      atomic: true,
    });
    expect(pushed.json.result).toEqual({
      applied: [
        { index: 0, kind: 'skill', name: 'review', op: 'upsert', revision: 1, seq: 6 },
        { index: 1, kind: 'actor', name: 'default', op: 'upsert', revision: 2, seq: 7 },
      ],
      conflicts: [],
    });
    const pulled = await call('sync/pull', { cursor: 5, limit: 1 });
    expect(pulled.json.result).toMatchObject({
      changes: [{ seq: 6, name: 'review', op: 'upsert' }],
      cursor: 6,
      hasMore: true,
    });
    expect((await call('sync/status')).json.result).toEqual({
      namespace: 'default',
      latestSeq: 7,
      counts: { actor: 1, tool: 0, skill: 1, profile: 4, total: 6 },
    });
  });

  it('refuses a bad change with -32602 naming it by index, and applies none of the push', async () => {
    const good = { kind: 'skill', name: 'ok', op: 'upsert', spec: VALID_SPECS.skill };
    const cases: [unknown[], string[]][] = [
      [
        [good, good, good, { kind: 'actor', name: 'a', op: 'upsert', spec: { graphId: 'g', x: 1 } }],
        ['changes[3].spec.x'],
      ],
      [
        [{ kind: 'actor', name: 'a', op: 'upsert', spec: { graphId: 'g', model: { model: 'm', temperature: -1 } } }],
        ['changes[0].spec.model.temperature'],
      ],
      [[{ kind: 'skill', name: 'ok', op: 'delete' }], ['changes[0].baseRevision']],
      [
        [{ kind: 'skill', name: 'ok', op: 'delete', baseRevision: 1, spec: VALID_SPECS.skill, labels: {} }],
        ['changes[0].labels', 'changes[0].spec'],
      ],
      [
        [good, { kind: 'skill', name: 'ok', op: 'rename' }],
        ['changes[1].op', 'changes[1].spec'],
      ],
      [[{ kind: 'skill', name: 'ok', op: 'upsert' }], ['changes[0].spec']],
      [
        [{ kind: 'skill', name: 'ok', op: 'upsert', baseRevision: -1, spec: VALID_SPECS.skill }],
        ['changes[0].baseRevision'],
      ],
      [[], ['changes']],
    ];
    const before = (await call('sync/status')).json.result;
    for (const [changes, fields] of cases) {
      const answer = await call('sync/push', { changes });
      expect([answer.json.error?.code, fieldsNamed(answer)]).toEqual([-32602, fields]);
    }
    expect(fieldsNamed(await call('sync/pull', { limit: 5000 }))).toEqual(['limit']);
    expect(fieldsNamed(await call('sync/pull', { cursor: -1 }))).toEqual(['cursor']);
    expect(fieldsNamed(await call('sync/pull', { cursor: 999 }))).toEqual(['cursor']);
    expect((await call('sync/status')).json.result).toEqual(before);
  });
});
