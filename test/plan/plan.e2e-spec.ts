import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { PLAN_STATUSES, PLAN_TRANSITIONS, type PlanStatus } from '../../packages/server/src/plan-store/plan.states.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { fieldsOf, rawCall, reasonOf, startServerWithBootstrapKey, type TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * `_cleveragents/plan/*` (docs/protocol.md §6.5) without execution, over HTTP with API keys: what a plan is,
 * what its params refuse, which transitions each state allows, revisions, who sees a plan, and the
 * audit log. `plan/execute` does not exist yet: where a test needs an executing, paused or finished
 * plan, it sets the status with SQL.
 */

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
/** The operations this step exposes (execute, complete and fail come with execution). */
const WIRE_OPERATIONS = ['update', 'approve', 'pause', 'resume', 'cancel', 'delete'] as const;

describe.each(databaseTargets())('plans on $kind', (target) => {
  let db: TestDatabase;
  let server: TestServer;
  let dataSource: DataSource;
  let ownerKey: string;
  let memberKey: string;
  let otherKey: string;

  const call = async (key: string, method: string, params: Record<string, unknown> = {}) =>
    rawCall(
      server.endpoint,
      { jsonrpc: '2.0', id: 1, method: `_cleveragents/${method}`, params },
      { 'x-api-key': key },
    );
  const ok = async (key: string, method: string, params: Record<string, unknown> = {}) => {
    const answer = await call(key, method, params);
    expect(answer.json.error).toBeUndefined();
    return answer.json.result;
  };
  const draft = (goal = 'Ship the parser', extra: Record<string, unknown> = {}) =>
    ok(memberKey, 'plan/create', { goal, ...extra });
  /** No plan/execute yet: puts a plan in `status` directly. */
  const forceStatus = (planId: string, status: PlanStatus) =>
    dataSource.query('UPDATE plans SET status = $1 WHERE id = $2', [status, planId]);

  beforeAll(async () => {
    db = await target.create();
    const started = await startServerWithBootstrapKey(db);
    server = started.server;
    ownerKey = started.bootstrapKey;
    dataSource = server.app.get(DataSource);
    memberKey = (await ok(ownerKey, 'auth/apikey/create', { name: 'member', role: 'member' })).key;
    otherKey = (await ok(ownerKey, 'auth/apikey/create', { name: 'other', role: 'member' })).key;
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('plan/create makes a draft with a ULID id and what was given; get and status read it', async () => {
    const session = await ok(memberKey, 'session/create', { title: 'parser' });
    const made = await draft('Refactor the parser', {
      sessionId: session.sessionId,
      entries: [
        { content: 'Read the grammar', priority: 'high' },
        { content: 'Write the tests', status: 'completed' },
        { content: 'Rewrite the lexer', priority: 'low', status: 'in_progress' },
      ],
      profile: 'manual',
      budget: { tokens: 50000, toolCalls: 20 },
    });
    expect(made).toEqual({
      planId: expect.stringMatching(ULID),
      namespace: 'default',
      owner: expect.stringMatching(/^apikey:/),
      sessionId: session.sessionId,
      goal: 'Refactor the parser',
      entries: [
        { content: 'Read the grammar', priority: 'high', status: 'pending' },
        { content: 'Write the tests', priority: 'medium', status: 'completed' },
        { content: 'Rewrite the lexer', priority: 'low', status: 'in_progress' },
      ],
      profile: 'manual',
      budget: { tokens: 50000, toolCalls: 20 },
      usage: { tokens: 0, toolCalls: 0, wallTimeMs: 0 },
      status: 'draft',
      revision: 1,
      taskId: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(await ok(memberKey, 'plan/get', { planId: made.planId })).toEqual(made);
    // The snake_case alias of planId (docs/protocol.md §6).
    expect(await ok(memberKey, 'plan/get', { plan_id: made.planId })).toEqual(made);
    expect(await ok(memberKey, 'plan/status', { planId: made.planId })).toEqual({
      planId: made.planId,
      status: 'draft',
      revision: 1,
      entries: { total: 3, pending: 1, inProgress: 1, completed: 1, failed: 0, skipped: 0 },
      taskId: null,
    });
    const bare = await draft('Just a goal');
    expect(bare).toMatchObject({ sessionId: null, entries: [], profile: null, budget: null, status: 'draft' });
  });

  it('plan/list pages newest first and filters by session and status', async () => {
    const session = await ok(memberKey, 'session/create', { title: 'paging' });
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await draft(`paged ${n}`, { sessionId: session.sessionId })).planId);
    await ok(memberKey, 'plan/approve', { planId: ids[0] });

    const first = await ok(memberKey, 'plan/list', { sessionId: session.sessionId, pageSize: 2 });
    expect(first.items.map((p: any) => p.planId)).toEqual([ids[2], ids[1]]);
    expect(first.totalSize).toBe(3);
    expect(first.nextPageToken).not.toBe('');
    const second = await ok(memberKey, 'plan/list', {
      sessionId: session.sessionId,
      pageSize: 2,
      pageToken: first.nextPageToken,
    });
    expect(second.items.map((p: any) => p.planId)).toEqual([ids[0]]);
    expect(second.nextPageToken).toBe('');

    const approved = await ok(memberKey, 'plan/list', { sessionId: session.sessionId, status: 'approved' });
    expect(approved.items.map((p: any) => p.planId)).toEqual([ids[0]]);
    const bad = await call(memberKey, 'plan/list', { status: 'done' });
    expect(bad.json.error.code).toBe(-32602);
    expect(fieldsOf(bad)).toEqual(['status']);
  });

  it('bad params name the field, and nothing is stored', async () => {
    const closed = await ok(memberKey, 'session/create', { title: 'closed' });
    await ok(memberKey, 'session/close', { sessionId: closed.sessionId });
    const others = await ok(otherKey, 'session/create', { title: 'not yours' });
    const before = (await ok(memberKey, 'plan/list', {})).totalSize;
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'goal'],
      [{ goal: '' }, 'goal'],
      [{ goal: 'x'.repeat(10_001) }, 'goal'],
      [{ goal: 'g', entries: [{ content: 'step', priority: 'urgent' }] }, 'entries[0].priority'],
      [{ goal: 'g', entries: [{ content: 'step', status: 'done' }] }, 'entries[0].status'],
      [{ goal: 'g', entries: [{ content: '' }] }, 'entries[0].content'],
      [{ goal: 'g', entries: [{ content: 'x'.repeat(2001) }] }, 'entries[0].content'],
      [{ goal: 'g', entries: Array.from({ length: 201 }, (_, i) => ({ content: `step ${i}` })) }, 'entries'],
      [{ goal: 'g', entries: 'all of it' }, 'entries'],
      [{ goal: 'g', profile: 'nonesuch' }, 'profile'],
      [{ goal: 'g', budget: { tokens: 0 } }, 'budget.tokens'],
      [{ goal: 'g', budget: { tokens: 1_000_000_001 } }, 'budget.tokens'],
      [{ goal: 'g', budget: { wallTimeSeconds: 31 * 24 * 3600 + 1 } }, 'budget.wallTimeSeconds'],
      [{ goal: 'g', budget: { tokens: 1, per: 'day' } }, 'budget.per'],
      [{ goal: 'g', budget: [{ tokens: 1 }] }, 'budget'],
      [{ goal: 'g', entries: [{ content: 'step', due: 'today' }] }, 'entries[0].due'],
      [{ goal: 'g', entries: [[{ content: 'step' }]] }, 'entries[0]'],
      [{ goal: null }, 'goal'],
      [{ goal: 'g', sessionId: closed.sessionId }, 'sessionId'],
      [{ goal: 'g', sessionId: others.sessionId }, 'sessionId'],
      [{ goal: 'g', sessionId: 'no-such-session' }, 'sessionId'],
      [{ goal: 'g', colour: 'red' }, 'colour'],
    ];
    for (const [params, field] of cases) {
      const answer = await call(memberKey, 'plan/create', params);
      expect({ field, code: answer.json.error?.code }).toEqual({ field, code: -32602 });
      expect({ field, named: fieldsOf(answer) }).toEqual({ field, named: expect.arrayContaining([field]) });
    }
    expect((await ok(memberKey, 'plan/list', {})).totalSize).toBe(before);

    const plan = await draft();
    const update = await call(memberKey, 'plan/update', { planId: plan.planId, goal: '', sessionId: 'x' });
    expect(update.json.error.code).toBe(-32602);
    expect(fieldsOf(update).sort()).toEqual(['goal', 'sessionId']);
    expect(await ok(memberKey, 'plan/get', { planId: plan.planId })).toEqual(plan);
  });

  it('an optional param given as null is taken as absent, also an entry’s priority or status and a budget limit', async () => {
    const made = await draft('Nulls', {
      sessionId: null,
      entries: [{ content: 'one', priority: null, status: null }],
      profile: null,
      budget: { tokens: null, toolCalls: 5 },
    });
    expect(made).toMatchObject({
      sessionId: null,
      entries: [{ content: 'one', priority: 'medium', status: 'pending' }],
      profile: null,
      budget: { toolCalls: 5 },
    });
    expect(await draft('No budget', { entries: null, budget: null })).toMatchObject({ entries: [], budget: null });
    const updated = await ok(memberKey, 'plan/update', {
      planId: made.planId,
      goal: null,
      entries: null,
      profile: null,
      budget: null,
      expectedRevision: null,
    });
    expect(updated).toMatchObject({ goal: 'Nulls', entries: made.entries, budget: { toolCalls: 5 }, revision: 2 });
    const listed = await ok(memberKey, 'plan/list', { status: null, sessionId: null, pageSize: null, pageToken: null });
    expect(listed.items.map((p: any) => p.planId)).toContain(made.planId);
    expect(await ok(memberKey, 'plan/approve', { planId: made.planId, expectedRevision: null })).toMatchObject({
      status: 'approved',
    });
  });

  it('a plan goes draft → approved → executing ⇄ paused → canceled, each change a new revision, audited', async () => {
    const plan = await draft('The whole way', { entries: [{ content: 'one' }] });
    const updated = await ok(memberKey, 'plan/update', {
      planId: plan.planId,
      goal: 'The whole way, revised',
      entries: [{ content: 'one', status: 'completed' }, { content: 'two' }],
      budget: { wallTimeSeconds: 60 },
      expectedRevision: 1,
    });
    expect(updated).toMatchObject({
      goal: 'The whole way, revised',
      entries: [
        { content: 'one', priority: 'medium', status: 'completed' },
        { content: 'two', priority: 'medium', status: 'pending' },
      ],
      budget: { wallTimeSeconds: 60 },
      profile: null,
      status: 'draft',
      revision: 2,
    });
    expect(await ok(memberKey, 'plan/approve', { planId: plan.planId, expectedRevision: 2 })).toMatchObject({
      status: 'approved',
      revision: 3,
    });
    await forceStatus(plan.planId, 'executing'); // what plan/execute will do
    expect(await ok(memberKey, 'plan/pause', { planId: plan.planId })).toMatchObject({ status: 'paused', revision: 4 });
    expect(await ok(memberKey, 'plan/update', { planId: plan.planId, profile: 'manual' })).toMatchObject({
      status: 'paused',
      profile: 'manual',
      goal: 'The whole way, revised',
      revision: 5,
    });
    expect(await ok(memberKey, 'plan/resume', { planId: plan.planId })).toMatchObject({
      status: 'executing',
      revision: 6,
    });
    expect(await ok(memberKey, 'plan/cancel', { planId: plan.planId })).toMatchObject({
      status: 'canceled',
      revision: 7,
    });
    expect(await ok(memberKey, 'plan/delete', { planId: plan.planId, expectedRevision: 7 })).toEqual({
      planId: plan.planId,
      deleted: true,
    });
    const gone = await call(memberKey, 'plan/get', { planId: plan.planId });
    expect(gone.json.error.code).toBe(-32001);
    expect(reasonOf(gone)).toBe('PLAN_NOT_FOUND');

    const audit = await ok(ownerKey, 'audit/list', { namespace: 'default', pageSize: 100 });
    const mine = audit.items.filter((i: any) => i.target === `plan/${plan.planId}`).reverse();
    expect(mine.map((i: any) => [i.action, i.details.revision])).toEqual([
      ['plan.create', 1],
      ['plan.update', 2],
      ['plan.approve', 3],
      ['plan.pause', 4],
      ['plan.update', 5],
      ['plan.resume', 6],
      ['plan.cancel', 7],
      ['plan.delete', 7],
    ]);
    expect(mine[0].actor).toBe(plan.owner);
    expect(mine[2].details).toMatchObject({ planId: plan.planId, from: 'draft', to: 'approved' });
    expect(mine[1].details.changed.sort()).toEqual(['budget', 'entries', 'goal']);
  });

  describe.each(PLAN_STATUSES)('a plan in state %s', (status) => {
    const refused = WIRE_OPERATIONS.filter((op) => !(PLAN_TRANSITIONS[op].from as readonly string[]).includes(status));
    it.each(refused)('refuses %s with -32004 INVALID_TRANSITION, and stays as it was', async (operation) => {
      const plan = await draft(`refusing ${operation} when ${status}`);
      if (status !== 'draft') await forceStatus(plan.planId, status);
      const before = await ok(memberKey, 'plan/get', { planId: plan.planId });
      const params: Record<string, unknown> = { planId: plan.planId };
      if (operation === 'update') params.goal = 'changed';
      const answer = await call(memberKey, `plan/${operation}`, params);
      expect(answer.json.error.code).toBe(-32004);
      expect(answer.json.error.data[0]).toMatchObject({
        reason: 'INVALID_TRANSITION',
        metadata: { planId: plan.planId, status, operation },
      });
      expect(answer.json.error.message).toContain(
        `Plan ${plan.planId} is ${status}: ${operation} needs a plan that is`,
      );
      expect(await ok(memberKey, 'plan/get', { planId: plan.planId })).toEqual(before);
    });
  });

  it('a stale expectedRevision is -32004 REVISION_CONFLICT and changes nothing', async () => {
    const plan = await draft('Conflicted');
    await ok(memberKey, 'plan/update', { planId: plan.planId, goal: 'Conflicted, once' });
    const current = await ok(memberKey, 'plan/get', { planId: plan.planId });
    for (const [operation, extra] of [
      ['update', { goal: 'lost update' }],
      ['approve', {}],
      ['cancel', {}],
      ['delete', {}],
    ] as const) {
      const answer = await call(memberKey, `plan/${operation}`, { planId: plan.planId, expectedRevision: 1, ...extra });
      expect({ operation, code: answer.json.error?.code }).toEqual({ operation, code: -32004 });
      expect(answer.json.error.data[0]).toMatchObject({
        reason: 'REVISION_CONFLICT',
        metadata: { expectedRevision: '1', currentRevision: '2' },
      });
    }
    expect(await ok(memberKey, 'plan/get', { planId: plan.planId })).toEqual(current);
  });

  it("another caller, even the namespace's owner, finds the plan exactly as one that does not exist", async () => {
    const plan = await draft('Private');
    const missing = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
    for (const key of [otherKey, ownerKey]) {
      for (const operation of ['get', 'status', 'update', 'approve', 'pause', 'resume', 'cancel', 'delete']) {
        const params = operation === 'update' ? { goal: 'mine now' } : {};
        const real = await call(key, `plan/${operation}`, { planId: plan.planId, ...params });
        const none = await call(key, `plan/${operation}`, { planId: missing, ...params });
        expect({ operation, code: real.json.error?.code, reason: reasonOf(real) }).toEqual({
          operation,
          code: -32001,
          reason: 'PLAN_NOT_FOUND',
        });
        expect(JSON.stringify(real.json).replaceAll(plan.planId, 'ID')).toBe(
          JSON.stringify(none.json).replaceAll(missing, 'ID'),
        );
      }
      const listed = await ok(key, 'plan/list', {});
      expect(listed.items.map((p: any) => p.planId)).not.toContain(plan.planId);
    }
    expect(await ok(memberKey, 'plan/get', { planId: plan.planId })).toEqual(plan);
  });

  it('a namespace holding a plan is not deleted', async () => {
    await ok(ownerKey, 'namespace/create', { namespace: 'planned' });
    const plan = await ok(ownerKey, 'plan/create', { namespace: 'planned', goal: 'Keep the namespace' });
    const refusal = await call(ownerKey, 'namespace/delete', { namespace: 'planned' });
    expect(refusal.json.error.code).toBe(-32004);
    expect(refusal.json.error.data[0]).toMatchObject({
      reason: 'NAMESPACE_NOT_EMPTY',
      metadata: { namespace: 'planned', holds: 'plans' },
    });
    await ok(ownerKey, 'plan/delete', { namespace: 'planned', planId: plan.planId });
    expect(await ok(ownerKey, 'namespace/delete', { namespace: 'planned' })).toMatchObject({ deleted: true });
  });
});
