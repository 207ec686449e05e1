/**
 * Runs work one at a time per key, in arrival order, across keys concurrently. The local backend
 * keys it by thread: two turns of one session must not run the graph on the same checkpoint at once.
 */
export class KeyedSerializer {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = new Promise<void>((resolve) => (release = resolve));
    this.tails.set(key, tail);
    try {
      await previous;
      return await work();
    } finally {
      release();
      // The last in line forgets the key, so the map holds only threads with work queued.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys with work running or queued. */
  get size(): number {
    return this.tails.size;
  }
}
