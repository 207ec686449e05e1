import { closeSync, constants, existsSync, openSync, writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pty from '@lydell/node-pty';
import xterm from '@xterm/headless';
import { ARM_MS } from '../../packages/cli/src/ui/dialog.js';
import { screenHtml } from './screen-image.js';

/** The built `cleveragents` executable. */
export const CLI_BIN = fileURLToPath(new URL('../../packages/cli/dist/bin.js', import.meta.url));

export function assertCliBuilt(): void {
  if (!existsSync(CLI_BIN)) throw new Error(`${CLI_BIN} is missing: run "npm run build" first (npm test does)`);
}

/** Keys as a terminal sends them. */
export const KEYS = {
  enter: '\r',
  ctrlC: '\u0003',
  ctrlD: '\u0004',
  down: '\u001b[B',
  up: '\u001b[A',
} as const;

/** Written to the terminal by the test once the program exited: everything before it has been read. */
const END_OF_OUTPUT = '\u001b]7770;cleveragents-test-end\u0007';

/**
 * Has node-pty report the exit only once the program's last output has been read. When the program
 * exits, Linux may end the terminal (EOF) with output still queued in the kernel, and that output was
 * lost: on a loaded machine, a screen without its last lines. So the test holds the terminal's other end
 * open itself (nothing ends it early), and when node-pty would close the terminal after the exit, it
 * writes END_OF_OUTPUT there first: the terminal delivers in order, so once that mark is read (`seen`),
 * so is everything the program wrote, and the terminal closes.
 */
class OutputEnd {
  /** The mark was written: look for it in what is read. */
  awaited = false;
  private markRead!: () => void;
  private readonly read = new Promise<void>((resolve) => (this.markRead = resolve));

  constructor(proc: pty.IPty) {
    const socket = (proc as unknown as { _socket?: { destroy: (error?: Error) => unknown; destroyed: boolean } })
      ._socket;
    const ptsName = (proc as unknown as { ptsName?: string }).ptsName;
    if (!socket || typeof socket.destroy !== 'function' || !ptsName) {
      throw new Error('node-pty no longer has _socket and ptsName: review OutputEnd');
    }
    const held = openSync(ptsName, constants.O_RDWR | constants.O_NOCTTY);
    const destroy = socket.destroy.bind(socket);
    const release = () => {
      closeSync(held);
      destroy();
    };
    // node-pty destroys the socket (without an error) when the program has exited and the terminal did
    // not close within 200 ms; an error (EIO) closes it at once, as before.
    socket.destroy = (error?: Error) => {
      if (error !== undefined || this.awaited || socket.destroyed) return destroy(error);
      this.awaited = true;
      try {
        writeSync(held, END_OF_OUTPUT);
        void this.read.then(release);
      } catch {
        release();
      }
      return socket;
    };
  }

  /** `output` without the mark, once it was read (from `from` on). */
  seen(output: string, from: number): string {
    const at = output.indexOf(END_OF_OUTPUT, Math.max(0, from - END_OF_OUTPUT.length));
    if (at < 0) return output;
    this.markRead();
    return output.slice(0, at) + output.slice(at + END_OF_OUTPUT.length);
  }
}

/**
 * A program on a real pseudo-terminal, its screen rendered by a headless xterm: keystrokes in, the
 * text a person would see out. Used to drive the interactive CLI as a user does.
 */
export class TerminalSession {
  private readonly terminal: InstanceType<typeof xterm.Terminal>;
  private raw = '';
  readonly exited: Promise<{ exitCode: number; signal?: number }>;

  private constructor(
    private readonly proc: pty.IPty,
    cols: number,
    rows: number,
  ) {
    this.terminal = new xterm.Terminal({ cols, rows, allowProposedApi: true, scrollback: 5000 });
    const end = new OutputEnd(proc);
    proc.onData((data) => {
      const from = this.raw.length;
      this.raw += data;
      if (end.awaited) this.raw = end.seen(this.raw, from);
      // The terminal ignores an OSC sequence it does not know: the end mark shows nowhere.
      this.terminal.write(data);
    });
    // The headless terminal parses writes asynchronously: once the process is gone, flush what it
    // wrote last before anyone reads the screen.
    this.exited = new Promise((resolve) => proc.onExit((e) => this.terminal.write('', () => resolve(e))));
  }

  static start(
    file: string,
    args: string[],
    options: { env: Record<string, string>; cwd: string; cols?: number; rows?: number },
  ): TerminalSession {
    const cols = options.cols ?? 120;
    const rows = options.rows ?? 50;
    const proc = pty.spawn(file, args, { name: 'xterm-256color', cols, rows, cwd: options.cwd, env: options.env });
    return new TerminalSession(proc, cols, rows);
  }

  get pid(): number {
    return this.proc.pid;
  }

  /** Everything written to the terminal so far (escape sequences included). */
  get output(): string {
    return this.raw;
  }

  write(keys: string): void {
    this.proc.write(keys);
  }

  /** The whole buffer (scrollback and screen) as text, one line per written line (wrapped rows joined). */
  text(): string {
    const buffer = this.terminal.buffer.active;
    const lines: string[] = [];
    for (let i = 0; i < buffer.length; i++) {
      const line = buffer.getLine(i);
      const text = line?.translateToString(true) ?? '';
      if (line?.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
      else lines.push(text);
    }
    while (lines.length > 0 && lines.at(-1) === '') lines.pop();
    return lines.join('\n');
  }

  /** Waits until the rendered text matches, failing with the screen when it does not in time. */
  async waitFor(pattern: string | RegExp, timeoutMs = 20000, from = 0): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    const matches = (): boolean => {
      const text = this.text().slice(from);
      return typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text);
    };
    for (;;) {
      // The headless terminal parses writes asynchronously: flush before reading.
      await new Promise<void>((resolve) => this.terminal.write('', resolve));
      if (matches()) return this.text();
      if (Date.now() > deadline) {
        throw new Error(`Timed out waiting for ${String(pattern)}; the screen shows:\n${this.text()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The screen as it shows now (the rows in view, colours and all), as an HTML page (screen-image.ts). */
  async screenHtml(caption?: string): Promise<string> {
    await new Promise<void>((resolve) => this.terminal.write('', resolve));
    const buffer = this.terminal.buffer.active;
    const top = buffer.viewportY;
    // Down to the last row with something on it: the blank rows below are left out of the picture.
    let bottom = top + this.terminal.rows;
    while (
      bottom > top + 1 &&
      !buffer
        .getLine(bottom - 1)
        ?.translateToString(true)
        .trim()
    ) {
      bottom -= 1;
    }
    return screenHtml(buffer, this.terminal.cols, top, bottom, caption);
  }

  kill(): void {
    try {
      this.proc.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

/**
 * Keys for the interactive chat's dialog, one at a time as a person types them, once it takes keys (those
 * typed as it shows, or arriving together, are not taken: ARM_MS).
 */
export async function choose(chat: TerminalSession, ...keys: string[]): Promise<void> {
  const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
  await pause(ARM_MS + 200);
  for (const key of keys) {
    chat.write(key);
    await pause(150);
  }
}
