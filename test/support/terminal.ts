import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pty from '@lydell/node-pty';
import xterm from '@xterm/headless';

/** The built `cleveragents` executable. */
export const CLI_BIN = fileURLToPath(new URL('../../dist/client/cli/bin.js', import.meta.url));

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
    proc.onData((data) => {
      this.raw += data;
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

  kill(): void {
    try {
      this.proc.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}
