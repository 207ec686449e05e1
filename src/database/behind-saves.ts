/** One commit of a call's saves: the latest save of each task staged before it began. */
interface Round<W> {
  writes: Map<string, W>;
  /** Per task, what its write answered (whether the task has push configs). */
  done: Promise<Map<string, boolean>>;
  resolve(answers: Map<string, boolean>): void;
  reject(error: unknown): void;
}

function round<W>(): Round<W> {
  let resolve!: (answers: Map<string, boolean>) => void;
  let reject!: (error: unknown) => void;
  const done = new Promise<Map<string, boolean>>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A round nobody waits for (its stream gone) fails in its writer's log, not as an unhandled rejection.
  done.catch(() => undefined);
  return { writes: new Map(), done, resolve, reject };
}

/** How a call's rounds are written: `write` one task's save (answering whether it has push configs). */
export interface BehindWriter<W> {
  write(key: string, write: W): Promise<boolean>;
  /** A round has settled: its tasks' keys and its commit. */
  settled(keys: readonly string[], done: Promise<unknown>): void;
  failed(error: unknown): void;
}

/**
 * A call's saves made behind its events (TypeOrmTaskStore.writeBehind): the round being written, and the
 * round that gathers the saves made meanwhile, written as soon as the one before it has committed (with
 * none under way, at the next turn of the event loop). In a round, a task's later save replaces its
 * earlier one: it holds the task whole. Rounds commit one after another, in order.
 */
export class BehindSaves<W> {
  private writing: Round<W> | undefined;
  private staged: Round<W> | undefined;

  constructor(private readonly writer: BehindWriter<W>) {}

  /** Stages the save of task `key`; answers the commit of the round that carries it. */
  stage(key: string, write: W): Promise<unknown> {
    let next = this.staged;
    if (next === undefined) {
      next = this.staged = round<W>();
      if (this.writing === undefined) setImmediate(() => this.writeNext());
    }
    next.writes.set(key, write);
    return next.done;
  }

  /** The commit of every save staged so far; undefined when none is waiting. */
  flushed(): Promise<unknown> | undefined {
    return (this.staged ?? this.writing)?.done;
  }

  /** For task `key`'s latest save, until it commits: whether the task has push configs as of that commit. */
  commitOf(key: string): Promise<boolean> | undefined {
    const carrying = this.staged?.writes.has(key)
      ? this.staged
      : this.writing?.writes.has(key)
        ? this.writing
        : undefined;
    return carrying?.done.then((answers) => answers.get(key) !== false);
  }

  private writeNext(): void {
    const current = this.staged;
    if (current === undefined || this.writing !== undefined) return;
    this.staged = undefined;
    this.writing = current;
    const writes = [...current.writes];
    void Promise.all(writes.map(async ([key, write]) => [key, await this.writer.write(key, write)] as const))
      .then(
        (answers) => current.resolve(new Map(answers)),
        (error: unknown) => {
          this.writer.failed(error);
          current.reject(error);
        },
      )
      .finally(() => {
        this.writer.settled(
          writes.map(([key]) => key),
          current.done,
        );
        this.writing = undefined;
        this.writeNext();
      });
  }
}
