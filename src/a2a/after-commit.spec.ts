import { describe, expect, it } from '@jest/globals';
import { afterCommit } from './after-commit.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A source whose events are pushed by the test; `stopped` once its generator has finished. */
function pushedSource<T>() {
  const queue: T[] = [];
  let wake: (() => void) | undefined;
  let failure: Error | undefined;
  let closed = false;
  const state = { read: 0, stopped: false };
  async function* events(): AsyncGenerator<T> {
    try {
      for (;;) {
        while (queue.length === 0 && !closed && failure === undefined) await new Promise<void>((r) => (wake = r));
        if (queue.length > 0) {
          state.read += 1;
          yield queue.shift()!;
        } else if (failure !== undefined) throw failure;
        else return;
      }
    } finally {
      state.stopped = true;
    }
  }
  return {
    events: events(),
    state,
    push: (...items: T[]) => {
      queue.push(...items);
      wake?.();
    },
    fail: (error: Error) => {
      failure = error;
      wake?.();
    },
    end: () => {
      closed = true;
      wake?.();
    },
  };
}

/** A flush the test completes: each call waits until release(). */
function heldFlush() {
  const waiting: (() => void)[] = [];
  let failure: Error | undefined;
  return {
    calls: 0,
    flush(): Promise<void> {
      this.calls += 1;
      return new Promise<void>((resolve, reject) => waiting.push(() => (failure ? reject(failure) : resolve())));
    },
    release: () => waiting.splice(0).forEach((go) => go()),
    failWith: (error: Error) => {
      failure = error;
    },
    get pending() {
      return waiting.length;
    },
  };
}

describe('afterCommit', () => {
  it('gives an event out only after a flush that began once it was read; those read meanwhile come together', async () => {
    const source = pushedSource<string>();
    const commits = heldFlush();
    const out = afterCommit(source.events, () => commits.flush());
    const got: string[] = [];
    const consuming = (async () => {
      for await (const event of out) got.push(event);
    })();
    source.push('task');
    await nextTurn();
    expect(commits.pending).toBe(1);
    expect(got).toEqual([]);
    // Read while the first commit is under way: not given out with it.
    source.push('working', 'artifact', 'completed');
    source.end();
    await nextTurn();
    expect(source.state.read).toBe(4);
    commits.release();
    await nextTurn();
    expect(got).toEqual(['task']);
    expect(commits.pending).toBe(1);
    commits.release();
    await consuming;
    expect(got).toEqual(['task', 'working', 'artifact', 'completed']);
    expect(commits.calls).toBe(2);
  });

  it("ends with the source's error after the events read before it, each flushed", async () => {
    const source = pushedSource<string>();
    let flushes = 0;
    const got: string[] = [];
    source.push('task', 'working');
    source.fail(new Error('the run broke'));
    await expect(
      (async () => {
        for await (const event of afterCommit(source.events, () => {
          flushes += 1;
          return Promise.resolve();
        })) {
          got.push(event);
        }
      })(),
    ).rejects.toThrow('the run broke');
    expect(got).toEqual(['task', 'working']);
    expect(flushes).toBeGreaterThanOrEqual(1);
  });

  it('gives out nothing a failed flush did not commit, and stops the source', async () => {
    const source = pushedSource<string>();
    const commits = heldFlush();
    const got: string[] = [];
    const consuming = (async () => {
      for await (const event of afterCommit(source.events, () => commits.flush())) got.push(event);
    })();
    source.push('task');
    await nextTurn();
    commits.failWith(new Error('the database refused it'));
    commits.release();
    await expect(consuming).rejects.toThrow('the database refused it');
    expect(got).toEqual([]);
    // The source stops at its next event, as at a yield.
    source.push('working');
    await nextTurn();
    expect(source.state.stopped).toBe(true);
  });

  it('stops the source when its reader returns early', async () => {
    const source = pushedSource<string>();
    const out = afterCommit(source.events, () => Promise.resolve());
    source.push('task', 'working');
    expect((await out.next()).value).toBe('task');
    await out.return(undefined);
    source.push('artifact');
    await nextTurn();
    expect(source.state.stopped).toBe(true);
    expect(source.state.read).toBe(3);
  });
});
