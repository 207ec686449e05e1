import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startServer, type TestServer } from '../support/server.js';
import { ManualClock } from '../support/manual-clock.js';
import { ifAssigned } from '../support/assigned.js';

const BOOTED_AT = Date.UTC(2026, 0, 15, 9, 30, 12, 750);
const HOUR = 3_600_000;

/** The Agent Card's validators (ETag, Last-Modified) and conditional GETs, against the real server. */
describe('the Agent Card cache validators', () => {
  let db: TestDatabase;
  let server: TestServer | undefined;
  const clock = new ManualClock(BOOTED_AT);

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server!.baseUrl}${path}`, { headers });

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServer(db, {}, { clock });
  }, 60_000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('Last-Modified is the HTTP date the card was fixed, the same on every request while it does not change', async () => {
    const first = await get('/.well-known/agent-card.json');
    expect(first.status).toBe(200);
    expect(first.headers.get('last-modified')).toBe('Thu, 15 Jan 2026 09:30:12 GMT');
    clock.advance(HOUR);
    const later = await get('/.well-known/agent-card.json');
    expect(later.headers.get('last-modified')).toBe(first.headers.get('last-modified'));
    expect(later.headers.get('etag')).toBe(first.headers.get('etag'));
    for (const path of ['/.well-known/agent.json', '/.well-known/agent-card.json?A2A-Version=0.3']) {
      expect((await get(path)).headers.get('last-modified')).toBe('Thu, 15 Jan 2026 09:30:12 GMT');
    }
  });

  it('If-Modified-Since at or after Last-Modified is 304; before it, or unparsable, is 200', async () => {
    const lastModified = (await get('/.well-known/agent-card.json')).headers.get('last-modified')!;
    for (const path of ['/.well-known/agent-card.json', '/.well-known/agent.json']) {
      const same = await get(path, { 'If-Modified-Since': lastModified });
      expect(same.status).toBe(304);
      expect(same.headers.get('last-modified')).toBe(lastModified);
      expect(await same.text()).toBe('');
      const later = await get(path, { 'If-Modified-Since': new Date(BOOTED_AT + HOUR).toUTCString() });
      expect(later.status).toBe(304);
      const earlier = await get(path, { 'If-Modified-Since': new Date(BOOTED_AT - 1000).toUTCString() });
      expect(earlier.status).toBe(200);
      expect((await earlier.json()) as object).toHaveProperty('name');
      expect((await get(path, { 'If-Modified-Since': 'yesterday' })).status).toBe(200);
    }
  });

  it('If-None-Match takes precedence over If-Modified-Since', async () => {
    const card = await get('/.well-known/agent-card.json');
    const etag = card.headers.get('etag')!;
    const lastModified = card.headers.get('last-modified')!;
    const stale = await get('/.well-known/agent-card.json', {
      'If-None-Match': 'W/"another-card"',
      'If-Modified-Since': lastModified,
    });
    expect(stale.status).toBe(200);
    const current = await get('/.well-known/agent-card.json', {
      'If-None-Match': etag,
      'If-Modified-Since': new Date(BOOTED_AT - HOUR).toUTCString(),
    });
    expect(current.status).toBe(304);
    expect((await get('/.well-known/agent-card.json', { 'If-None-Match': `"x", ${etag}` })).status).toBe(304);
    expect((await get('/.well-known/agent-card.json', { 'If-None-Match': '*' })).status).toBe(304);
  });

  it('a card that changed (a server started with another configuration) has a later Last-Modified', async () => {
    const before = await get('/.well-known/agent-card.json');
    const lastModified = before.headers.get('last-modified')!;
    await server!.close();
    server = undefined;
    clock.advance(HOUR);
    server = await startServer(db, { CLEVERAGENTS_ACTOR_BACKEND: 'none' }, { clock });
    const after = await get('/.well-known/agent-card.json');
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
    expect(Date.parse(after.headers.get('last-modified')!)).toBeGreaterThan(Date.parse(lastModified));
    const conditional = await get('/.well-known/agent-card.json', { 'If-Modified-Since': lastModified });
    expect(conditional.status).toBe(200);
    expect((await conditional.json()).capabilities.streaming).toBe(false);
  }, 60_000);
});
