import { describe, expect, it } from '@jest/globals';
import { KeyedSerializer, SerializedWorkAbortedError } from './keyed-serializer.js';

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('KeyedSerializer', () => {
  it('runs work on one key one at a time, in arrival order', async () => {
    const serializer = new KeyedSerializer();
    const log: string[] = [];
    const first = gate();
    const a = serializer.run('t', async () => {
      log.push('a start');
      await first.promise;
      log.push('a end');
      return 'a';
    });
    const b = serializer.run('t', () => {
      log.push('b');
      return Promise.resolve('b');
    });
    await Promise.resolve();
    await Promise.resolve();
    expect(log).toEqual(['a start']);
    first.open();
    expect(await Promise.all([a, b])).toEqual(['a', 'b']);
    expect(log).toEqual(['a start', 'a end', 'b']);
    expect(serializer.size).toBe(0);
  });

  it('runs work on different keys concurrently', async () => {
    const serializer = new KeyedSerializer();
    const blocked = gate();
    const slow = serializer.run('one', () => blocked.promise.then(() => 'one'));
    expect(await serializer.run('two', () => Promise.resolve('two'))).toBe('two');
    blocked.open();
    expect(await slow).toBe('one');
  });

  it('goes on with the next work after a failure', async () => {
    const serializer = new KeyedSerializer();
    const failing = serializer.run('t', () => Promise.reject(new Error('boom')));
    const next = serializer.run('t', () => Promise.resolve('next'));
    await expect(failing).rejects.toThrow('boom');
    expect(await next).toBe('next');
    expect(serializer.size).toBe(0);
  });

  it('gives up waiting when the signal aborts, while later work still waits for the earlier', async () => {
    const serializer = new KeyedSerializer();
    const first = gate();
    const log: string[] = [];
    const running = serializer.run('t', async () => {
      await first.promise;
      log.push('first');
    });
    const controller = new AbortController();
    const abandoned = serializer.run('t', () => Promise.resolve(log.push('abandoned')), controller.signal);
    const third = serializer.run('t', () => Promise.resolve(log.push('third')));
    controller.abort();

    await expect(abandoned).rejects.toBeInstanceOf(SerializedWorkAbortedError);
    expect(log).toEqual([]);
    first.open();
    await running;
    await third;
    expect(log).toEqual(['first', 'third']);
    expect(serializer.size).toBe(0);
  });
});
