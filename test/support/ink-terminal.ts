import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import type { ReactNode } from 'react';
import { terminalRows } from './cli-unit.js';

/*
 * An ink app on a headless terminal, in process: a TTY of a given size that keeps every byte written (the
 * rows a person reads come from a headless xterm), and a keyboard the test types on.
 */

/** The screen: a TTY `columns` × `rows` that keeps all it is given; resizable. */
export class HeadlessScreen extends Writable {
  readonly isTTY = true;
  private readonly chunks: Buffer[] = [];

  constructor(
    public columns: number,
    public rows: number,
  ) {
    super();
  }

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.chunks.push(Buffer.from(chunk));
    done();
  }

  /** Everything written, as text (escape sequences included). */
  get bytes(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }

  resize(columns: number, rows: number): void {
    this.columns = columns;
    this.rows = rows;
    this.emit('resize');
  }

  /** The rows a person reads: the scrollback, then the screen. */
  seen(): Promise<string[]> {
    return terminalRows(Buffer.concat(this.chunks), this.columns, this.rows);
  }
}

/** A keyboard: what the test types arrives as a terminal in raw mode sends it. */
export class Keyboard extends EventEmitter {
  readonly isTTY = true;
  private data: string | null = null;
  raw = false;

  type(keys: string): void {
    this.data = keys;
    this.emit('readable');
    this.emit('data', keys);
  }

  read = (): string | null => {
    const { data } = this;
    this.data = null;
    return data;
  };

  setRawMode(raw: boolean): this {
    this.raw = raw;
    return this;
  }

  setEncoding(): this {
    return this;
  }

  resume(): this {
    return this;
  }

  pause(): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }
}

export interface InkTerminal {
  screen: HeadlessScreen;
  keys: Keyboard;
  /** Types, then lets ink read the keys and render. */
  type(keys: string): Promise<void>;
  /** The rows a person reads, once ink has rendered what is pending. */
  seen(): Promise<string[]>;
  unmount(): void;
}

/** Lets ink's renders (throttled, on timers) and React's effects happen. */
export function settle(ms = 60): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Renders `tree` with ink on a headless terminal `columns` × `rows`. */
export async function inkTerminal(tree: ReactNode, columns = 80, rows = 24): Promise<InkTerminal> {
  const { render } = await import('ink');
  const screen = new HeadlessScreen(columns, rows);
  const keys = new Keyboard();
  const instance = render(tree, {
    stdout: screen as unknown as NodeJS.WriteStream,
    stderr: screen as unknown as NodeJS.WriteStream,
    stdin: keys as unknown as NodeJS.ReadStream,
    interactive: true,
    exitOnCtrlC: false,
    patchConsole: false,
    maxFps: 1000,
    kittyKeyboard: { mode: 'disabled' },
  });
  await settle();
  return {
    screen,
    keys,
    async type(typed) {
      keys.type(typed);
      await settle();
    },
    async seen() {
      await settle();
      return screen.seen();
    },
    unmount: () => {
      instance.unmount();
      instance.cleanup();
    },
  };
}
