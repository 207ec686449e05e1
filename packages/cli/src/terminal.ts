import type { Ora } from 'ora';
import { SafeTextStream, safeLine, safeRendered, safeText } from './safe-text.js';
import type { Style } from './style.js';

/** How long a wait must last before a spinner shows (a fast answer shows none). */
export const SPINNER_DELAY_MS = 300;

/**
 * A spinner on stderr for waits over SPINNER_DELAY_MS, only on a TTY (never in pipes or logs).
 * `stop()` clears it; safe to call more than once.
 */
export class Wait {
  private spinner?: Ora;
  private timer?: NodeJS.Timeout;
  /** Counts start() and stop(): a spinner loaded after its wait ended is not shown. */
  private generation = 0;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly style: Style,
  ) {}

  /** Shows `text` (made safe: it may name the agent's tool) after SPINNER_DELAY_MS. */
  start(untrusted: string): void {
    const text = safeLine(untrusted);
    this.stop();
    if (!this.style.tty) return;
    const generation = this.generation;
    this.timer = setTimeout(() => {
      // ora loads with the first spinner shown, not with the CLI.
      void import('ora').then(({ default: ora }) => {
        if (generation !== this.generation) return;
        // stdin is left alone (the prompt and Ctrl-C handling own it).
        this.spinner = ora({ text, stream: this.stream, color: 'cyan', discardStdin: false, isEnabled: true }).start();
      });
    }, SPINNER_DELAY_MS);
    this.timer.unref();
  }

  stop(): void {
    this.generation += 1;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.spinner) this.spinner.stop();
    this.spinner = undefined;
  }
}

/** Runs `work` with a spinner saying `text` while it takes longer than SPINNER_DELAY_MS. */
export async function withSpinner<T>(
  stream: NodeJS.WriteStream,
  style: Style,
  text: string,
  work: () => Promise<T>,
): Promise<T> {
  const wait = new Wait(stream, style);
  wait.start(text);
  try {
    return await work();
  } finally {
    wait.stop();
  }
}

/** Renders Markdown for a terminal at a width, synchronously (its modules loaded already). */
export type MarkdownRenderer = (text: string, width: number) => string;

/**
 * Markdown for a terminal (headings, lists, code, emphasis), loaded only when a TTY needs it. The
 * text is made safe first and the rendering after (the renderer decodes `&#27;`); a link shows its
 * target beside its text, never as a terminal hyperlink whose target is hidden.
 */
/** The Markdown packages a renderer uses: loaded on first use, or given by a caller that has them already. */
export interface MarkdownModules {
  Marked: typeof import('marked').Marked;
  markedTerminal: typeof import('marked-terminal').markedTerminal;
}

async function loadMarkdownModules(): Promise<MarkdownModules> {
  const [{ Marked }, { markedTerminal }] = await Promise.all([import('marked'), import('marked-terminal')]);
  return { Marked, markedTerminal };
}

export async function markdownRenderer(style: Style, modules?: MarkdownModules): Promise<MarkdownRenderer> {
  const { Marked, markedTerminal } = modules ?? (await loadMarkdownModules());
  return (text, width) => {
    const marked = new Marked();
    // marked-terminal's typings lag marked's extension type.
    marked.use(markedTerminal({ width, reflowText: true, tab: 2, showSectionPrefix: false }) as never);
    // marked-terminal leaves the inline Markdown of list items as written (`**bold**`): parse it.
    marked.use({
      renderer: {
        text(token) {
          return typeof token === 'object' && 'tokens' in token && token.tokens
            ? this.parser.parseInline(token.tokens)
            : false;
        },
        // marked-terminal turns links into OSC 8 hyperlinks where it guesses the terminal has them.
        link(token) {
          const shown = this.parser.parseInline(token.tokens);
          const plain = stripAnsi(shown);
          const same = plain === token.href || `mailto:${plain}` === token.href;
          return same ? style.cyan(token.href) : `${shown} ${style.dim(`(${style.cyan(token.href)})`)}`;
        },
      },
    });
    const rendered = safeRendered(marked.parse(safeText(text), { async: false }));
    return style.color ? rendered.trimEnd() : stripAnsi(rendered).trimEnd();
  };
}

export async function renderMarkdown(text: string, style: Style, width: number): Promise<string> {
  return (await markdownRenderer(style))(text, width);
}

const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

// Characters that take no column: marks, format characters, Hangul medial and final jamo.
const ZERO_WIDTH = /[\p{M}\p{Cf}\u1160-\u11ff]/gu;

/**
 * The rows `text` takes on a terminal `columns` wide, never more: the answer's redraw goes up that
 * many rows and clears below, so a count too high would erase what was printed before the answer.
 */
export function rowsOf(text: string, columns: number): number {
  return stripAnsi(text)
    .replace(ZERO_WIDTH, '')
    .split('\n')
    .reduce((rows, line) => rows + Math.max(1, Math.ceil([...line].length / Math.max(1, columns))), 0);
}

/** Whether text reads as Markdown worth rendering (headings, lists, code, emphasis, links, tables). */
export function looksLikeMarkdown(text: string): boolean {
  return /(^|\n)\s{0,3}(#{1,6} |[-*+] |\d+\. |```|> |\|.*\|)|\*\*[^*]+\*\*|`[^`]+`|\[[^\]]+\]\([^)]+\)/.test(text);
}

/** The line between an answer shown and the same answer started over on another course. */
export const ANSWER_RESTART_MARKER = '--- the answer started over ---';

/**
 * Prints an answer as it streams, made safe (an escape split across chunks held back until whole).
 * On a terminal, once the answer is whole, nothing else was printed meanwhile and it fits on the
 * screen, it is redrawn as rendered Markdown; elsewhere it stays as the agent wrote it.
 */
export class AnswerPrinter {
  /** The answer as shown so far (made safe). */
  private text = '';
  private safe = new SafeTextStream();
  private clean = true;
  private open = false;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly style: Style,
  ) {}

  write(delta: string): void {
    if (!delta) return;
    this.show(this.safe.push(delta));
  }

  private show(text: string): void {
    if (!text) return;
    this.out.write(text);
    this.text += text;
    this.open = true;
  }

  /**
   * The answer started over and took another course than what was shown (docs/client.md): a marker
   * line, then the answer again from its start. Nothing is erased, so a pipe reads the same.
   */
  replace(text: string): void {
    if (this.open && !this.text.endsWith('\n')) this.out.write('\n');
    if (this.text !== '' || !this.clean) this.out.write(`${this.style.dim(ANSWER_RESTART_MARKER)}\n`);
    this.text = '';
    this.clean = true;
    this.open = false;
    this.safe = new SafeTextStream();
    this.write(text);
  }

  /** Something else is about to be printed: end the answer's line, and keep it as written. */
  interrupt(): void {
    if (this.open && !this.text.endsWith('\n')) this.out.write('\n');
    if (this.open) this.clean = false;
    this.open = false;
  }

  /** The answer is whole: render it (terminal, Markdown, undisturbed) and end its line. */
  async finish(): Promise<void> {
    this.show(this.safe.end());
    if (this.text === '') return;
    const columns = this.out.columns || 80;
    const rows = this.out.isTTY ? rowsOf(this.text, columns) : 0;
    // The cursor cannot go back above the screen: an answer taller than it stays as written.
    const fits = !this.out.rows || rows <= this.out.rows;
    if (this.out.isTTY && this.clean && this.open && fits && looksLikeMarkdown(this.text)) {
      // Back to the answer's first row, clear to the end of the screen, print it rendered.
      this.out.write(`\r${rows > 1 ? `\u001b[${rows - 1}A` : ''}\u001b[J`);
      this.out.write(`${await renderMarkdown(this.text, this.style, columns)}\n`);
    } else if (this.open && !this.text.endsWith('\n')) {
      this.out.write('\n');
    }
    this.text = '';
    this.open = false;
    this.clean = true;
  }
}
