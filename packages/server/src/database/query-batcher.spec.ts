import { describe, expect, it } from '@jest/globals';
import { QueryBatcher } from './query-batcher.js';

describe('QueryBatcher', () => {
  it('answers the calls of one turn with one run, in input order', async () => {
    const runs: number[][] = [];
    const batcher = new QueryBatcher<number, string>(
      (inputs) => {
        runs.push([...inputs]);
        return Promise.resolve(inputs.map((n) => `v${n}`));
      },
      { maxBatch: 100, maxInFlight: 1 },
    );
    const answers = await Promise.all([1, 2, 3, 4].map((n) => batcher.submit(n)));
    expect(answers).toEqual(['v1', 'v2', 'v3', 'v4']);
    expect(runs).toEqual([[1, 2, 3, 4]]);
  });

  it('gathers the calls that arrive while runs are under way into the next run, within maxBatch', async () => {
    const runs: number[][] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batcher = new QueryBatcher<number, number>(
      async (inputs) => {
        runs.push([...inputs]);
        if (runs.length === 1) await gate;
        return inputs.map((n) => n * 10);
      },
      { maxBatch: 3, maxInFlight: 1 },
    );
    const first = batcher.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [2, 3, 4, 5, 6].map((n) => batcher.submit(n));
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toEqual([[1]]);
    release();
    expect(await Promise.all([first, ...later])).toEqual([10, 20, 30, 40, 50, 60]);
    expect(runs).toEqual([[1], [2, 3, 4], [5, 6]]);
  });

  it('keeps at most maxInFlight runs under way', async () => {
    let running = 0;
    let most = 0;
    const batcher = new QueryBatcher<number, number>(
      async (inputs) => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
        return [...inputs];
      },
      { maxBatch: 1, maxInFlight: 2 },
    );
    expect(await Promise.all(Array.from({ length: 10 }, (_, i) => batcher.submit(i)))).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
    expect(most).toBe(2);
  });

  it('when a batch fails, retries each call alone so only the bad one fails', async () => {
    const runs: number[][] = [];
    const batcher = new QueryBatcher<number, number>(
      (inputs) => {
        runs.push([...inputs]);
        if (inputs.includes(13)) return Promise.reject(new Error('unlucky'));
        return Promise.resolve(inputs.map((n) => n + 1));
      },
      { maxBatch: 100, maxInFlight: 1 },
    );
    const settled = await Promise.allSettled([12, 13, 14].map((n) => batcher.submit(n)));
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([
      13,
      'unlucky',
      15,
    ]);
    expect(runs).toEqual([[12, 13, 14], [12], [13], [14]]);
  });
});
