import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { DataSource } from 'typeorm';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { TurnTaskStore } from '../../packages/server/src/turn/turn-task.store.js';
import { databaseTargets, type TestDatabase, watchQueries } from '../support/database.js';
import { rawCall, startServer, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { sendRequest } from '../factories/messages.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * `_cleveragents/session/*` (docs/protocol.md §6.4) on the conformance actor, over HTTP with API keys: what a
 * session is, how it starts (create, or a message), who sees it, and what a closed session refuses.
 */

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const KEY = /\bca_[0-9a-z]{26}_[A-Za-z0-9_-]{43}\b/;

describe.each(databaseTargets())('sessions on $kind', (target) => {
  let db: TestDatabase;
  let server: TestServer;
  let ownerKey: string;
  let memberKey: string;
  const printed: string[] = [];

  const call = async (key: string, method: string, params: Record<string, unknown> = {}, version?: string) => {
    const headers: Record<string, string> = { 'x-api-key': key };
    if (version) headers['a2a-version'] = version;
    return (await rawCall(server.endpoint, { jsonrpc: '2.0', id: 1, method, params }, headers)).json;
  };
  const ok = async (key: string, method: string, params: Record<string, unknown> = {}) => {
    const json = await call(key, method, params);
    expect(json.error).toBeUndefined();
    return json.result;
  };

  beforeAll(async () => {
    db = await target.create();
    // The bootstrap key (owner of `default`) is printed once on stderr at the first start.
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    try {
      server = await startServer(db, { CLEVERAGENTS_AUTH_SCHEMES: 'apiKey' });
    } finally {
      spy.mockRestore();
    }
    ownerKey = printed.join('').match(KEY)![0];
    const minted = await ok(ownerKey, '_cleveragents/auth/apikey/create', { name: 'member', role: 'member' });
    memberKey = minted.key;
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('session/create starts a session with a ULID id, the default actor and what was given', async () => {
    const made = await ok(memberKey, '_cleveragents/session/create', {
      title: 'Refactor the parser',
      budget: { tokens: 50000, toolCalls: 20, wallTimeSeconds: 600 },
      profile: 'manual',
    });
    expect(made).toEqual({
      sessionId: expect.stringMatching(ULID),
      namespace: 'default',
      owner: expect.stringMatching(/^apikey:/),
      actor: 'default',
      profile: 'manual',
      title: 'Refactor the parser',
      budget: { tokens: 50000, toolCalls: 20, wallTimeSeconds: 600 },
      usage: { tokens: 0, toolCalls: 0, wallTimeMs: 0 },
      status: 'open',
      origin: 'create',
      revision: 1,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      closedAt: null,
    });
    expect(await ok(memberKey, '_cleveragents/session/get', { sessionId: made.sessionId })).toEqual(made);
  });

  it('an optional param given as null is taken as absent, also a budget limit', async () => {
    const made = await ok(memberKey, '_cleveragents/session/create', {
      actor: null,
      profile: null,
      title: null,
      budget: { tokens: null, toolCalls: 3 },
    });
    expect(made).toMatchObject({ actor: 'default', profile: null, title: null, budget: { toolCalls: 3 } });
    expect(await ok(memberKey, '_cleveragents/session/create', { budget: null })).toMatchObject({ budget: null });
    const listed = await ok(memberKey, '_cleveragents/session/list', { status: null, pageSize: null, pageToken: null });
    expect(listed.items.map((s: any) => s.sessionId)).toContain(made.sessionId);
    const history = { sessionId: made.sessionId, pageSize: null, pageToken: null };
    expect(await ok(memberKey, '_cleveragents/session/history', history)).toMatchObject({ totalSize: 0 });
    expect(
      await ok(memberKey, '_cleveragents/session/close', { sessionId: made.sessionId, expectedRevision: null }),
    ).toMatchObject({ status: 'closed' });
  });

  it('bad params name the field; unknown actor or profile is refused before anything is stored', async () => {
    const before = await ok(memberKey, '_cleveragents/session/list', {});
    const cases: [Record<string, unknown>, string][] = [
      [{ actor: 'nobody' }, 'actor'],
      [{ profile: 'nonesuch' }, 'profile'],
      [{ actor: 'Not A Name' }, 'actor'],
      [{ budget: { tokens: 0 } }, 'budget.tokens'],
      [{ budget: { wallTimeSeconds: 'soon' } }, 'budget.wallTimeSeconds'],
      [{ budget: { toolCalls: 1_000_001 } }, 'budget.toolCalls'],
      [{ budget: { tokens: 1, per: 'day' } }, 'budget.per'],
      [{ budget: [] }, 'budget'],
      [{ title: 'x'.repeat(201) }, 'title'],
      [{ sessionId: 'mine' }, 'sessionId'],
    ];
    for (const [params, field] of cases) {
      const json = await call(memberKey, '_cleveragents/session/create', params);
      expect({ params, code: json.error?.code }).toEqual({ params, code: -32602 });
      const fields = json.error.data.flatMap((d: any) => d.fieldViolations ?? []).map((v: any) => v.field);
      expect(fields).toContain(field);
    }
    const after = await ok(memberKey, '_cleveragents/session/list', {});
    expect(after.totalSize).toBe(before.totalSize);
  });

  it('a message without contextId starts a session (ULID); a new contextId of the client starts one with that id', async () => {
    const first = await call(
      memberKey,
      'SendMessage',
      { message: { messageId: 'tck-complete-task-s1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
      '1.0',
    );
    const contextId = first.result.task.contextId as string;
    expect(contextId).toMatch(ULID);
    expect(await ok(memberKey, '_cleveragents/session/get', { sessionId: contextId })).toMatchObject({
      origin: 'message',
      actor: 'default',
      status: 'open',
    });

    const chosen = `client-chosen-${Date.now()}`;
    const second = await call(
      memberKey,
      'message/send',
      {
        message: {
          messageId: 'tck-complete-task-s2',
          role: 'user',
          kind: 'message',
          contextId: chosen,
          parts: [{ kind: 'text', text: 'hi' }],
        },
      },
      '0.3',
    );
    expect(second.result.contextId).toBe(chosen);
    const again = await call(
      memberKey,
      'SendMessage',
      {
        message: { messageId: 'tck-complete-task-s3', role: 'ROLE_USER', contextId: chosen, parts: [{ text: 'more' }] },
      },
      '1.0',
    );
    expect(again.result.task.contextId).toBe(chosen);
    const history = await ok(memberKey, '_cleveragents/session/history', { sessionId: chosen });
    expect(history.totalSize).toBe(2);
    expect(history.items.map((t: Task & { id: string }) => t.id)).toEqual([second.result.id, again.result.task.id]);
    expect(history.items[0].history[0].parts[0].text).toBe('hi');

    const bad = await call(
      memberKey,
      'SendMessage',
      {
        message: {
          messageId: 'tck-complete-task-s4',
          role: 'ROLE_USER',
          contextId: 'has space',
          parts: [{ text: 'x' }],
        },
      },
      '1.0',
    );
    expect(bad.error.code).toBe(-32602);
    expect(bad.error.data.flatMap((d: any) => d.fieldViolations ?? [])[0].field).toBe('message.contextId');
  });

  it('sessions are their owner’s: another caller, even the namespace owner, is told -32001 as for a missing one', async () => {
    const mine = await ok(memberKey, '_cleveragents/session/create', { title: 'private' });
    const theirs = await call(ownerKey, '_cleveragents/session/get', { sessionId: mine.sessionId });
    const missing = await call(ownerKey, '_cleveragents/session/get', { sessionId: 'NO-SUCH-SESSION' });
    expect(theirs.error).toMatchObject({ code: -32001, data: [{ reason: 'SESSION_NOT_FOUND' }] });
    expect(theirs.error.message.replace(mine.sessionId, '<id>')).toBe(
      missing.error.message.replace('NO-SUCH-SESSION', '<id>'),
    );
    const listed = await ok(ownerKey, '_cleveragents/session/list', {});
    expect(listed.items.map((s: { sessionId: string }) => s.sessionId)).not.toContain(mine.sessionId);
    // The same id in the owner's scope is another session: a message there starts the owner's own.
    const owners = await call(
      ownerKey,
      'SendMessage',
      {
        message: {
          messageId: 'tck-complete-task-o1',
          role: 'ROLE_USER',
          contextId: mine.sessionId,
          parts: [{ text: 'x' }],
        },
      },
      '1.0',
    );
    expect(owners.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(await ok(memberKey, '_cleveragents/session/history', { sessionId: mine.sessionId })).toMatchObject({
      totalSize: 0,
    });
  });

  it('list pages newest first and filters by status; a token from another list is refused', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await ok(ownerKey, '_cleveragents/session/create', { title: `p${i}` })).sessionId);
    }
    await ok(ownerKey, '_cleveragents/session/close', { sessionId: ids[1] });
    const seen: string[] = [];
    let pageToken = '';
    let total = -1;
    do {
      const page = await ok(ownerKey, '_cleveragents/session/list', { pageSize: 2, pageToken });
      total = page.totalSize;
      seen.push(...page.items.map((s: { sessionId: string }) => s.sessionId));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(seen).toHaveLength(total);
    expect(seen.slice(0, 5)).toEqual([...ids].reverse());
    const closed = await ok(ownerKey, '_cleveragents/session/list', { status: 'closed' });
    expect(closed.items.map((s: { sessionId: string }) => s.sessionId)).toEqual([ids[1]]);
    const registryToken = (await ok(ownerKey, '_cleveragents/registry/list', { pageSize: 1 })).nextPageToken;
    const refused = await call(ownerKey, '_cleveragents/session/list', { pageToken: registryToken });
    expect(refused.error.code).toBe(-32602);
    expect(refused.error.data[0]).toMatchObject({ reason: 'INVALID_PAGE_TOKEN', metadata: { fields: 'pageToken' } });
  });

  it('close: refused while a task is unfinished, then done once; closed sessions refuse messages; stale revision is -32004', async () => {
    const session = await ok(memberKey, '_cleveragents/session/create', {});
    const waiting = await call(
      memberKey,
      'SendMessage',
      {
        message: {
          messageId: 'tck-input-required-c1',
          role: 'ROLE_USER',
          contextId: session.sessionId,
          parts: [{ text: 'x' }],
        },
      },
      '1.0',
    );
    const taskId = waiting.result.task.id as string;
    expect(waiting.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const busy = await call(memberKey, '_cleveragents/session/close', { sessionId: session.sessionId });
    expect(busy.error).toMatchObject({
      code: -32004,
      data: [{ reason: 'SESSION_BUSY', metadata: { taskIds: taskId } }],
    });
    const stale = await call(memberKey, '_cleveragents/session/close', {
      sessionId: session.sessionId,
      expectedRevision: 7,
    });
    expect(stale.error).toMatchObject({ code: -32004, data: [{ reason: 'REVISION_CONFLICT' }] });

    await call(memberKey, 'CancelTask', { id: taskId }, '1.0');
    const closed = await ok(memberKey, '_cleveragents/session/close', {
      sessionId: session.sessionId,
      expectedRevision: 1,
    });
    expect(closed).toMatchObject({ status: 'closed', revision: 2, closedAt: expect.any(String) });
    const twice = await call(memberKey, '_cleveragents/session/close', { sessionId: session.sessionId });
    expect(twice.error).toMatchObject({ code: -32004, data: [{ reason: 'INVALID_TRANSITION' }] });

    for (const [method, version, message] of [
      [
        'SendMessage',
        '1.0',
        { messageId: 'tck-complete-task-c2', role: 'ROLE_USER', contextId: session.sessionId, parts: [{ text: 'x' }] },
      ],
      [
        'message/stream',
        '0.3',
        {
          messageId: 'tck-stream-001-c3',
          role: 'user',
          kind: 'message',
          contextId: session.sessionId,
          parts: [{ kind: 'text', text: 'x' }],
        },
      ],
    ] as const) {
      const refused = await call(memberKey, method, { message }, version);
      expect({ method, error: refused.error }).toMatchObject({
        method,
        error: { code: -32004, data: [{ reason: 'SESSION_CLOSED', metadata: { sessionId: session.sessionId } }] },
      });
    }
    expect((await ok(memberKey, '_cleveragents/session/history', { sessionId: session.sessionId })).totalSize).toBe(1);
  });

  it('a reply to a waiting task is read from the database once for its admission and the SDK continuing it', async () => {
    const waiting = await call(
      memberKey,
      'SendMessage',
      { message: { messageId: 'tck-input-required-r1', role: 'ROLE_USER', parts: [{ text: 'x' }] } },
      '1.0',
    );
    const taskId = waiting.result.task.id as string;
    expect(waiting.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const dataSource = server.app.get(DataSource);
    // The SDK's store: the admission's read (loadForCall) and the SDK's loads both go through it.
    const store = server.app.get(TurnTaskStore);
    let reads = 0;
    // Each read of the task, in order, with the database reads of it that it made.
    const loads: number[] = [];
    const queries = watchQueries(dataSource, (sql, params) => {
      if (/^\s*SELECT\b[\s\S]*\bFROM tasks\b/.test(sql) && JSON.stringify(params ?? []).includes(taskId)) reads++;
    });
    const measured =
      (read: (id: string, context: ServerCallContext) => Promise<Task | undefined>) =>
      async (id: string, context: ServerCallContext): Promise<Task | undefined> => {
        const before = reads;
        const task = await read(id, context);
        if (id === taskId) loads.push(reads - before);
        return task;
      };
    const [loadForCall, load] = [store.loadForCall.bind(store), store.load.bind(store)];
    const spies = [
      jest.spyOn(store, 'loadForCall').mockImplementation(measured(loadForCall)),
      jest.spyOn(store, 'load').mockImplementation(measured(load)),
    ];
    let reply;
    try {
      reply = await call(
        memberKey,
        'SendMessage',
        { message: { messageId: 'r1-answer', role: 'ROLE_USER', taskId, parts: [{ text: 'go on' }] } },
        '1.0',
      );
    } finally {
      queries.stop();
      for (const spy of spies) spy.mockRestore();
    }
    expect(reply.error).toBeUndefined();
    // The admission reads it; the SDK's own load before it continues the task gets that copy. (The SDK
    // loads it again as it stores the run's events: those are its own.)
    expect(loads.slice(0, 2)).toEqual([1, 0]);
  });

  it('context/assemble in conformance mode says there is no model context', async () => {
    const session = await ok(memberKey, '_cleveragents/session/create', {});
    for (const maxTokens of [100, null]) {
      const json = await call(memberKey, '_cleveragents/context/assemble', { sessionId: session.sessionId, maxTokens });
      expect(json.error).toMatchObject({ code: -32004, data: [{ reason: 'NO_MODEL_CONTEXT' }] });
    }
    const bad = await call(memberKey, '_cleveragents/context/assemble', {
      sessionId: session.sessionId,
      maxTokens: 10_000_001,
    });
    expect(bad.error.data.flatMap((d: any) => d.fieldViolations ?? []).map((v: any) => v.field)).toEqual(['maxTokens']);
  });

  it('a namespace holding sessions is not deleted', async () => {
    await ok(ownerKey, '_cleveragents/namespace/create', { namespace: 'sessions-ns' });
    await ok(ownerKey, '_cleveragents/session/create', { namespace: 'sessions-ns' });
    const refused = await call(ownerKey, '_cleveragents/namespace/delete', { namespace: 'sessions-ns' });
    expect(refused.error).toMatchObject({ code: -32004, data: [{ reason: 'NAMESPACE_NOT_EMPTY' }] });
    expect(refused.error.data[0].metadata.holds).toContain('sessions');
  });
});

describe.each(databaseTargets())('a task left working by a stopped server, on $kind', (target) => {
  it('is failed with a reason at the next start when its actor cannot resume it (the conformance actor)', async () => {
    const db = await target.create();
    try {
      // The conformance actor holds `test-resubscribe-message-id` tasks working; the first server stops
      // with no grace, leaving the task working in the database.
      // With PostgreSQL another replica might be running it: it is failed once unchanged for two lease
      // periods (2 s each here); on the embedded database, no other process can be, so at once.
      const env = { CLEVERAGENTS_TASK_LEASE_SECONDS: '2' };
      let server = await startServer(db, { ...env, CLEVERAGENTS_SHUTDOWN_GRACE_MS: '0' });
      const client = await new ClientFactory().createFromUrl(server.baseUrl);
      const started = (await client.sendMessage(
        sendRequest('test-resubscribe-message-id-r1', { returnImmediately: true }),
      )) as Task;
      await until(
        async () =>
          (await client.getTask({ id: started.id, tenant: '' })).status?.state === TaskState.TASK_STATE_WORKING,
        'the task to be working',
      );
      await server.close();
      server = await startServer(db, env);
      const after = await new ClientFactory().createFromUrl(server.baseUrl);
      const current = () => after.getTask({ id: started.id, tenant: '' });
      if (target.kind === 'embedded') expect((await current()).status?.state).toBe(TaskState.TASK_STATE_FAILED);
      await until(
        async () => (await current()).status?.state === TaskState.TASK_STATE_FAILED,
        'the task to fail',
        15000,
      );
      const task = await current();
      await server.close();
      expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      const reason = task.status?.message?.parts[0]?.content;
      expect(reason).toEqual({
        $case: 'text',
        value: expect.stringContaining('server stopped while this task was working'),
      });
    } finally {
      await db.cleanup();
    }
  });
});
