import { describe, expect, it } from '@jest/globals';
import type { CleverAgentsClient } from '@cleveragents/client/node';
import { styleFor } from '../style.js';
import { ChatSessions } from './chat-sessions.js';

/*
 * The chat's /sessions and /title against a stand-in for the server's session methods, which answers
 * with hostile titles where the test says: what is said is one-line safe, numbers pick from the last list.
 */

const session = (sessionId: string, title: string | null) => ({
  sessionId,
  title,
  actor: 'default',
  updatedAt: '2026-12-07T00:00:00.000Z',
});

function setUp(items = [session('S1', 'First'), session('S2', '\u001b]0;pwned\u0007Evil\ntitle\u202e')]) {
  const said: string[] = [];
  const asked: unknown[] = [];
  const client = {
    sessions: {
      list: () => Promise.resolve({ items, nextPageToken: '', totalSize: items.length }),
      get: ({ sessionId }: { sessionId: string }) => {
        asked.push(sessionId);
        const found = items.find((s) => s.sessionId === sessionId);
        return found ? Promise.resolve(found) : Promise.reject(new Error(`no session ${sessionId}`));
      },
      update: (params: { sessionId: string; title: string }) => {
        asked.push(params);
        return Promise.resolve(session(params.sessionId, `${params.title}\u001b[2J`));
      },
    },
  } as unknown as CleverAgentsClient;
  const style = styleFor({ isTTY: false } as NodeJS.WriteStream, {});
  const sessions = new ChatSessions({ client, say: (text) => said.push(text), style, options: {} });
  return { sessions, said, asked };
}

describe('ChatSessions', () => {
  it('lists sessions numbered, one line each, made safe, the current one marked', async () => {
    const { sessions, said } = setUp();
    await sessions.list('S1');
    expect(said).toEqual([
      ' 1. First S1 · 2026-12-07T00:00:00.000Z (this one)',
      ' 2. Evil title S2 · 2026-12-07T00:00:00.000Z',
      'Go to one with /sessions N (or its id).',
    ]);
  });

  it('picks by number from the last list or by id; a number not listed is said, and nothing is asked', async () => {
    const { sessions, said, asked } = setUp();
    await sessions.list(undefined);
    expect((await sessions.pick('2'))?.sessionId).toBe('S2');
    expect((await sessions.pick('S1'))?.sessionId).toBe('S1');
    expect(await sessions.pick('7')).toBeUndefined();
    expect(asked).toEqual(['S2', 'S1']);
    expect(said.at(-1)).toBe('No session 7 in the last list: /sessions lists them.');
    expect(said.join('\n')).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u202e]/);
  });

  it('renames the current session; none yet, or no title, is said without asking', async () => {
    const { sessions, said, asked } = setUp();
    await sessions.retitle(undefined, 'x');
    await sessions.retitle('S1', '');
    expect(asked).toEqual([]);
    await sessions.retitle('S1', 'Renamed');
    expect(asked).toEqual([{ sessionId: 'S1', title: 'Renamed' }]);
    expect(said).toEqual([
      'No session yet: it starts with your first message.',
      '/title needs the new title: /title TEXT',
      'Session titled "Renamed".',
    ]);
  });
});
