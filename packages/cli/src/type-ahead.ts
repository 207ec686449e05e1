/** The keys a terminal sends for Enter (CR, or LF) and Ctrl-C. */
const CR = 0x0d;
const LF = 0x0a;
const CTRL_C = 0x03;
const CTRL_D = 0x04;
const NUL = 0x00;

/**
 * Keys typed while the chat is not at its prompt, kept (raw mode, no echo) for the next prompt; Ctrl-C
 * among them cancels (docs/design-notes.md#type-ahead).
 */
export class TypeAhead {
  private keys = Buffer.alloc(0);
  private listening = false;
  private onInterrupt: () => void = () => undefined;
  private readonly onData = (chunk: Buffer | string): void => {
    let data = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    for (let i = data.indexOf(CTRL_C); i >= 0; i = data.indexOf(CTRL_C)) {
      this.keys = Buffer.alloc(0);
      data = data.subarray(i + 1);
      this.onInterrupt();
    }
    this.keys = Buffer.concat([this.keys, data]);
  };

  constructor(private readonly input: NodeJS.ReadStream) {}

  /** Only a terminal has keys to keep (piped input is read line by line as it comes). */
  get active(): boolean {
    return this.input.isTTY === true;
  }

  /** Collects keys until stop() or pause(); `onInterrupt` is what a Ctrl-C among them does. */
  listen(onInterrupt?: () => void): void {
    if (onInterrupt) this.onInterrupt = onInterrupt;
    if (!this.active || this.listening) return;
    this.listening = true;
    this.input.setRawMode(true);
    this.input.on('data', this.onData);
    this.input.resume();
  }

  /** Stops collecting, the terminal left raw: the next prompt takes over without a gap in line mode. */
  stop(): void {
    if (!this.listening) return;
    this.listening = false;
    this.input.off('data', this.onData);
    this.input.pause();
  }

  /** Stops collecting and gives the terminal back in line mode (an editor, a question's own prompt). */
  pause(): void {
    if (!this.listening) return;
    this.stop();
    this.input.setRawMode(false);
  }

  /** Stops collecting and leaves the terminal in line mode, as the chat found it. */
  restore(): void {
    this.stop();
    if (this.active) this.input.setRawMode(false);
  }

  /** Keeps keys a prompt was given past its line (the rest of a paste) for the prompts after, last. */
  keep(keys: string): void {
    this.keys = Buffer.concat([this.keys, Buffer.from(keys)]);
  }

  /** Forgets what was typed so far. */
  drop(): void {
    this.keys = Buffer.alloc(0);
  }

  /**
   * Puts the keys typed ahead, up to and including the first Enter, back at the front of the input, so
   * that the prompt about to read it sees them first; the rest waits for the prompt after.
   */
  feedLine(): void {
    if (!this.active || this.keys.length === 0) return;
    const ends = [this.keys.indexOf(CR), this.keys.indexOf(LF)].filter((i) => i >= 0);
    const cut = ends.length > 0 ? Math.min(...ends) + 1 : this.keys.length;
    const line = this.keys.subarray(0, cut);
    this.keys = this.keys.subarray(cut);
    this.input.unshift(line);
  }
}

/**
 * Keys typed before the interactive UI reads them: kept (raw, no echo) and handed to it. Read by the terminal
 * in line mode meanwhile, a Ctrl-D typed as the prompt appeared ended the input, and the UI then waited for
 * keys that could not come. A Ctrl-C among them, or a SIGINT, is still one: the terminal is given back as it
 * was, then the signal does what it does without a handler (the chat ends with 130).
 *
 * Read as the UI reads (a 'readable' listener, not 'data' and resume/pause, after which a 'readable' listener
 * was never called again), so that the UI's own listener takes over the stream as it is.
 */
export class EarlyKeys {
  private keys = Buffer.alloc(0);
  private holding = false;
  private readonly interrupt = (): void => {
    this.release();
    process.kill(process.pid, 'SIGINT');
  };
  private readonly onReadable = (): void => {
    for (let chunk: Buffer | string | null; (chunk = this.input.read() as Buffer | string | null) !== null;) {
      const data = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      if (data.includes(CTRL_C)) return this.interrupt();
      this.keys = Buffer.concat([this.keys, data]);
    }
  };

  constructor(private readonly input: NodeJS.ReadStream) {}

  /** Starts holding the keys (a terminal only). */
  hold(): this {
    if (this.input.isTTY !== true || this.holding) return this;
    this.holding = true;
    process.once('SIGINT', this.interrupt);
    this.input.setRawMode(true);
    this.input.on('readable', this.onReadable);
    return this;
  }

  /** Stops holding, the terminal left raw, and puts the keys held back at the front of the input for the UI. */
  handOver(): void {
    if (!this.stop()) return;
    // Keys typed before the terminal was raw went through its line mode. An Enter came as LF; raw it is CR,
    // which the UI sends a message on (an LF there is Ctrl-J, a new line in the message). A Ctrl-D on an empty
    // line was the end of input, read once raw as a NUL: it is the Ctrl-D the person typed (leave).
    for (const [i, key] of this.keys.entries()) {
      if (key === LF) this.keys[i] = CR;
      else if (key === NUL) this.keys[i] = CTRL_D;
    }
    if (this.keys.length > 0) this.input.unshift(this.keys);
    this.keys = Buffer.alloc(0);
  }

  /** Stops holding (if it still does) and gives the terminal back in line mode. */
  release(): void {
    if (this.stop() || this.input.isTTY === true) this.input.setRawMode(false);
  }

  private stop(): boolean {
    if (!this.holding) return false;
    this.holding = false;
    process.off('SIGINT', this.interrupt);
    this.input.off('readable', this.onReadable);
    return true;
  }
}
