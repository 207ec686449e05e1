import { describe, expect, it } from '@jest/globals';
import type { ChannelListener, DatabaseNotifications } from './database-notifications.js';
import { FinishedTaskCache } from './finished-task.cache.js';

/** A notifications source the test drives: `notify` as a trigger would, `reset` as a reconnect. */
function channel() {
  let listener: ChannelListener | undefined;
  const notifications = {
    listen: (_channel: string, l: ChannelListener) => {
      listener = l;
      return Promise.resolve({ close: () => Promise.resolve() });
    },
  } as unknown as DatabaseNotifications;
  return { notifications, notify: () => listener!.notify(''), reset: (live: boolean) => listener!.reset(live) };
}

async function liveCache(limits?: ConstructorParameters<typeof FinishedTaskCache>[0]) {
  const source = channel();
  const cache = new FinishedTaskCache(limits);
  await cache.start(source.notifications);
  source.reset(true);
  return { cache, ...source };
}

const DONE = 'TASK_STATE_COMPLETED';

describe('FinishedTaskCache', () => {
  it('keeps finished tasks only, and only while it listens', async () => {
    const { cache, reset } = await liveCache();
    cache.keep('a', DONE, '{"a":1}');
    cache.keep('w', 'TASK_STATE_WORKING', '{"w":1}');
    expect(cache.get('a')).toBe('{"a":1}');
    expect(cache.get('w')).toBeUndefined();
    reset(false);
    expect(cache.get('a')).toBeUndefined();
    cache.keep('b', DONE, '{}');
    reset(true);
    expect(cache.get('b')).toBeUndefined();
  });

  it('drops everything on a notification, and does not keep a read that a notification overtook', async () => {
    const { cache, notify } = await liveCache();
    cache.keep('a', DONE, '{}');
    const generation = cache.currentGeneration;
    notify();
    expect(cache.get('a')).toBeUndefined();
    cache.keep('b', DONE, '{}', generation);
    expect(cache.get('b')).toBeUndefined();
    cache.keep('b', DONE, '{}');
    expect(cache.get('b')).toBe('{}');
  });

  it('holds at most maxTasks, letting the least recently used go first', async () => {
    const { cache } = await liveCache({ maxTasks: 3 });
    for (const key of ['a', 'b', 'c']) cache.keep(key, DONE, key);
    expect(cache.get('a')).toBe('a'); // a is now the most recently used
    cache.keep('d', DONE, 'd');
    expect(['a', 'b', 'c', 'd'].map((key) => cache.get(key))).toEqual(['a', undefined, 'c', 'd']);
  });

  it('holds at most maxBytes of JSON, and never a task over maxTaskBytes', async () => {
    const { cache } = await liveCache({ maxBytes: 10, maxTaskBytes: 6 });
    cache.keep('big', DONE, '1234567');
    expect(cache.get('big')).toBeUndefined();
    cache.keep('a', DONE, '12345');
    cache.keep('b', DONE, '12345');
    expect(cache.get('a')).toBe('12345');
    cache.keep('c', DONE, '123');
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual(['12345', undefined, '123']);
  });

  it('forgets a task kept again in an unfinished state', async () => {
    const { cache } = await liveCache();
    cache.keep('a', DONE, '{}');
    cache.keep('a', 'TASK_STATE_WORKING', '{}');
    expect(cache.get('a')).toBeUndefined();
  });
});
