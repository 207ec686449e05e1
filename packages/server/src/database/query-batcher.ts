/** How a QueryBatcher groups its calls. */
export interface QueryBatcherOptions {
  /** Most calls answered by one query. */
  maxBatch: number;
  /** Most queries of this batcher under way at once (each holds a pooled connection). */
  maxInFlight: number;
}

interface Pending<I, O> {
  input: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

/**
 * Group commit: concurrent calls of one kind share one query, each resolving when its query finished;
 * a failed batch retries each call alone (docs/design-notes.md#query-batcher).
 */
export class QueryBatcher<I, O> {
  private readonly queue: Pending<I, O>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly run: (inputs: readonly I[]) => Promise<O[]>,
    private readonly options: QueryBatcherOptions,
  ) {}

  submit(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0 || this.inFlight >= this.options.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
        const batch = this.queue.splice(0, this.options.maxBatch);
        this.inFlight += 1;
        void this.execute(batch).finally(() => {
          this.inFlight -= 1;
          this.schedule();
        });
      }
    });
  }

  private async execute(batch: Pending<I, O>[]): Promise<void> {
    let results: O[];
    try {
      results = await this.run(batch.map((pending) => pending.input));
    } catch (error) {
      if (batch.length === 1) {
        batch[0].reject(error);
        return;
      }
      await Promise.all(batch.map((pending) => this.execute([pending])));
      return;
    }
    batch.forEach((pending, i) => pending.resolve(results[i]));
  }
}
