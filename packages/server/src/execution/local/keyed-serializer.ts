/** Thrown by `KeyedSerializer.run` when its signal aborts before the work's turn came. */
export class SerializedWorkAbortedError extends Error {
  constructor() {
    super('Aborted while waiting for earlier work on the same key');
    this.name = 'SerializedWorkAbortedError';
  }
}

/**
 * Runs work one at a time per key, in arrival order, across keys concurrently. The local backend
 * keys it by thread: two turns of one session must not run the graph on the same checkpoint at once.
 */
export class KeyedSerializer {
  private readonly tails = new Map<string, Promise<void>>();

  /**
   * Runs `work` once all earlier work on `key` has settled. If `signal` aborts while it waits, rejects
   * at once with SerializedWorkAbortedError (later work still waits for the earlier work).
   */
  async run<T>(key: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = new Promise<void>((resolve) => (release = resolve));
    this.tails.set(key, tail);
    const done = () => {
      release();
      // The last in line forgets the key, so the map holds only keys with work queued.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
    if (!(await this.waitFor(previous, signal))) {
      void previous.then(done);
      throw new SerializedWorkAbortedError();
    }
    try {
      return await work();
    } finally {
      done();
    }
  }

  /** Keys with work running or queued. */
  get size(): number {
    return this.tails.size;
  }

  /** True once `previous` settled; false if `signal` aborted first. */
  private waitFor(previous: Promise<void>, signal: AbortSignal | undefined): Promise<boolean> {
    if (!signal) return previous.then(() => true);
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = () => resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
      void previous.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      });
    });
  }
}
