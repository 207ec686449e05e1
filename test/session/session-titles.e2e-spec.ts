import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_SESSION_TITLE_LENGTH } from '../../packages/contract/src/index.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { wireMessage, type Json } from '../support/orchestration.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { extensionCalls, fieldsOf, rawCall, reasonOf, startServer, type TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * Session titles (docs/protocol.md §6.4) on the local backend: a session without a title takes one from its
 * first message (first line, whitespace collapsed, control characters removed, at most 80 characters with
 * an ellipsis), and `_cleveragents/session/update` renames it: revision bumped, audited, REVISION_CONFLICT on
 * a stale expectedRevision, -32602 naming `title` for a bad one.
 */

describe.each(databaseTargets())('session titles on $kind', (target) => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  const { ok, call } = extensionCalls(() => server);

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start({ tokens: ['Fine.'] });
    db = await target.create();
    server = await startServer(db, {
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'titles',
    });
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
  });

  async function send(text: string, extra: Json = {}): Promise<Json> {
    const answer = await rawCall(
      server.endpoint,
      { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: wireMessage(text, extra) } },
      { 'A2A-Version': '1.0' },
    );
    expect(answer.json.error).toBeUndefined();
    return (answer.json.result.task ?? answer.json.result) as Json;
  }

  const titleOf = async (sessionId: string) => (await ok('session/get', { sessionId })).title as string | null;

  it("a session a message starts is titled from the message's first line; a later message changes nothing", async () => {
    const task = await send('\n  Plan   the\tmigration \nwith every detail');
    const sessionId = String(task.contextId);
    expect(await titleOf(sessionId)).toBe('Plan the migration');
    await send('Something else entirely', { contextId: sessionId });
    expect(await titleOf(sessionId)).toBe('Plan the migration');
  });

  it('a hostile first line loses its control characters and is cut to 80 characters with an ellipsis', async () => {
    const task = await send(`\u001b]0;pwned\u0007\u202e${'long words '.repeat(20)}`);
    const title = (await titleOf(String(task.contextId)))!;
    expect(title).not.toMatch(/[\u0000-\u001f\u007f\u202e]/);
    expect(Array.from(title).length).toBeLessThanOrEqual(80);
    expect(Array.from(title).length).toBeGreaterThan(70);
    expect(title.startsWith(']0;pwned')).toBe(true);
    expect(title.endsWith('…')).toBe(true);
  });

  it('session/create without a title: the first message gives one; with a title: it is kept', async () => {
    const untitled = String((await ok('session/create', {})).sessionId);
    expect(await titleOf(untitled)).toBeNull();
    await send('Review the release notes', { contextId: untitled });
    expect(await titleOf(untitled)).toBe('Review the release notes');

    const titled = String((await ok('session/create', { title: 'Mine' })).sessionId);
    await send('Review the release notes', { contextId: titled });
    expect(await titleOf(titled)).toBe('Mine');
  });

  it('session/update renames (revision bumped, audited), clears with null, and refuses a stale revision', async () => {
    const made = await ok('session/create', { title: 'Before' });
    const sessionId = String(made.sessionId);
    const renamed = await ok('session/update', { sessionId, title: 'After', expectedRevision: made.revision });
    expect(renamed).toMatchObject({ sessionId, title: 'After', revision: made.revision + 1 });
    expect(await titleOf(sessionId)).toBe('After');

    const stale = await call('session/update', { sessionId, title: 'Lost', expectedRevision: made.revision });
    expect({ code: stale.json.error?.code, reason: reasonOf(stale) }).toEqual({
      code: -32004,
      reason: 'REVISION_CONFLICT',
    });
    expect(await titleOf(sessionId)).toBe('After');

    const cleared = await ok('session/update', { sessionId, title: null });
    expect(cleared).toMatchObject({ title: null, revision: made.revision + 2 });

    const audit = await ok('audit/list', { namespace: 'default', action: 'session.update', pageSize: 100 });
    const records = (audit.items as { target: string; details: Json }[]).filter(
      (r) => r.target === `session/${sessionId}`,
    );
    expect(records.map((r) => r.details.title).sort()).toEqual(['After', null].sort());
  });

  it.each([
    [{ title: '' }, 'title'],
    [{ title: 'x'.repeat(MAX_SESSION_TITLE_LENGTH + 1) }, 'title'],
    [{ title: 7 }, 'title'],
    [{}, 'title'],
  ])('a bad title %j is refused (-32602 naming %s); nothing changes', async (params, field) => {
    const made = await ok('session/create', { title: 'Kept' });
    const answer = await call('session/update', { sessionId: made.sessionId, ...params });
    expect({ code: answer.json.error?.code, fields: fieldsOf(answer) }).toEqual({ code: -32602, fields: [field] });
    expect(await ok('session/get', { sessionId: made.sessionId })).toMatchObject({ title: 'Kept', revision: 1 });
  });

  it('an unknown session is -32001', async () => {
    const answer = await call('session/update', { sessionId: 'no-such-session', title: 'x' });
    expect(answer.json.error?.code).toBe(-32001);
  });
});
