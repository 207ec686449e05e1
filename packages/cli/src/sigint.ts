import type { Io } from './context.js';
import { safeLine } from './safe-text.js';

/** Where Ctrl-C arrives as SIGINT: the process, or a stand-in for it. */
export type SignalSource = Pick<NodeJS.EventEmitter, 'on' | 'off'>;

/**
 * Ctrl-C while a task runs: the first cancels the task (CancelTask) and lets its stream end with the
 * canceled state; the second leaves at once (the stream is aborted, the exit code is 130).
 */
export class SigintGuard {
  private readonly controller = new AbortController();
  private cancel?: () => Promise<unknown>;
  private presses = 0;
  private readonly handler = (): void => this.press();

  constructor(
    private readonly io: Io,
    private readonly signals: SignalSource = process,
  ) {
    signals.on('SIGINT', this.handler);
  }

  /** Aborted on the second Ctrl-C. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** How many times Ctrl-C was pressed while this guard stood. */
  get pressed(): number {
    return this.presses;
  }

  get interrupted(): boolean {
    return this.controller.signal.aborted;
  }

  /** What the first Ctrl-C does: cancel the task now running. */
  onCancel(cancel: () => Promise<unknown>): void {
    this.cancel = cancel;
  }

  press(): void {
    this.presses += 1;
    const style = this.io.errStyle;
    if (this.presses === 1 && this.cancel) {
      this.io.err.write(`\n${style.yellow('Canceling the task…')} ${style.dim('(Ctrl-C again to leave now)')}\n`);
      this.cancel().catch((err: unknown) => {
        // The reason comes from the server: made safe before it is shown.
        this.io.err.write(
          `${style.red('Could not cancel:')} ${safeLine(err instanceof Error ? err.message : String(err))}\n`,
        );
      });
      return;
    }
    this.controller.abort(new Error('Interrupted'));
  }

  dispose(): void {
    this.signals.off('SIGINT', this.handler);
  }
}
