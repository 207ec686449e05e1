/**
 * Text from the agent, the model or the server on its way to the screen. Terminals obey escape
 * sequences (OSC 52 sets the clipboard, OSC 8 makes links, CSI moves the cursor and rewrites lines),
 * so nothing untrusted may carry them: `safeText` drops them, `visibleText` shows them escaped where
 * a person must see exactly what will run. The client's own styling is added after, never before.
 */

// ESC followed by: a CSI (ESC [ params intermediates final), a string command (OSC ] , DCS P, SOS X,
// PM ^, APC _) up to its terminator (BEL or ESC \), or any other one- or two-byte sequence.
const ESCAPE_SEQUENCE = /\u001b(?:\[[0-?]*[ -/]*[@-~]?|[\]PX^_][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[ -/]*[0-~]?)/g;
// 8-bit forms: CSI (0x9b) with its params, string commands (0x90, 0x98, 0x9d-0x9f) up to ST (0x9c) or BEL.
const C1_SEQUENCE = /\u009b[0-?]*[ -/]*[@-~]?|[\u0090\u0098\u009d-\u009f][^\u0007\u009c]*[\u0007\u009c]?/g;
// What is left of the controls: C0 but tab and newline, DEL, C1.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// Characters that reorder or hide what is around them (bidirectional overrides and isolates).
const BIDI = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

// An escape sequence begun at the very end of a text and not finished there (the next chunk may finish
// it), or the first half of a surrogate pair (written alone, each half would reach the screen as U+FFFD).
const UNFINISHED_TAIL =
  /(?:\u001b(?:\[[0-?]*[ -/]*|[\]PX^_][^\u0007\u001b]*\u001b?|[ -/]*)|\u009b[0-?]*[ -/]*|[\u0090\u0098\u009d-\u009f][^\u0007\u009c]*|[\ud800-\udbff])$/;
// Held back, an unfinished sequence keeps only what decides how it ends: a string command its opener (and an
// ESC that may begin its ESC \ terminator), a CSI or other escape whether intermediate bytes began. Its text
// and parameters are dropped whatever follows, so a stream that never ends one holds a few characters, not
// all it sent (each chunk would otherwise scan everything held before it). An 8-bit string command holding an
// ESC is not compacted (`safeText` removes ESC sequences first, and one of them may take the BEL that would
// have ended it); past HOLD_LIMIT it is let go as it stands.
const HELD_ESC_STRING = /^(\u001b[\]PX^_])[^\u0007\u001b]*(\u001b?)$/;
const HELD_C1_STRING = /^([\u0090\u0098\u009d-\u009f])[^\u0007\u009c\u001b]*$/;
const HELD_CSI = /^(\u001b\[|\u009b|\u001b(?![[\]PX^_]))[0-?]*([ -/]*)$/;
/** The most a stream holds back; past it, what is held is shown made safe, and the text goes on from there. */
const HOLD_LIMIT = 1024;

function compactHeld(held: string): string {
  const escString = HELD_ESC_STRING.exec(held);
  if (escString) return escString[1] + escString[2];
  const c1String = HELD_C1_STRING.exec(held);
  if (c1String) return c1String[1];
  const csi = HELD_CSI.exec(held);
  if (csi) return csi[1] + (csi[2] ? ' ' : '');
  return held;
}

// SGR (colours, bold, underline): the only sequence a renderer of ours may emit.
const SGR = /\u001b\[[0-9;:]*m/g;

export interface SafeTextOptions {
  /** Keep line breaks and tabs (default true); false turns them into spaces. */
  multiline?: boolean;
}

/** `text` with every terminal control sequence and control character removed (line breaks kept). */
export function safeText(text: string, options: SafeTextOptions = {}): string {
  let clean = text
    .replace(/\r\n/g, '\n')
    .replace(ESCAPE_SEQUENCE, '')
    .replace(C1_SEQUENCE, '')
    .replace(CONTROL, '')
    .replace(BIDI, '');
  if (options.multiline === false) clean = clean.replace(/[\n\t]/g, ' ');
  return clean;
}

function escapeOf(char: string): string {
  const code = char.codePointAt(0)!;
  if (char === '\n') return '\\n';
  if (char === '\t') return '\\t';
  if (char === '\r') return '\\r';
  if (char === '\u001b') return '\\e';
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}

// Controls, format characters (bidi marks, zero-width spaces and joiners, soft hyphen, BOM, tags),
// line and paragraph separators, and the backslash that escapes them.
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}\\]/gu;

/**
 * `text` on one line with every control, line break, direction override and invisible character shown
 * as an escape (`\e`, `\n`, `\x07`, `\u{202e}`, `\u{200b}`): for what a person approves (commands, arguments, variables,
 * paths), which must read exactly as it will be used.
 */
export function visibleText(text: string): string {
  return text.replace(INVISIBLE, (char) => (char === '\\' ? '\\\\' : escapeOf(char)));
}

/**
 * `safeText` for text arriving in chunks: a split escape sequence or UTF-16 pair is held back until it
 * ends (docs/design-notes.md#safe-text-in-chunks).
 */
export class SafeTextStream {
  private pending = '';

  /** The safe text of `chunk` that can be shown now. */
  push(chunk: string): string {
    const text = this.pending + chunk;
    const tail = UNFINISHED_TAIL.exec(text);
    const cut = tail ? tail.index : text.length;
    const held = compactHeld(text.slice(cut));
    if (held.length > HOLD_LIMIT) {
      this.pending = '';
      return safeText(text);
    }
    this.pending = held;
    return safeText(text.slice(0, cut));
  }

  /** How many characters are held back (at most a few, whatever an unfinished sequence goes on with). */
  get held(): number {
    return this.pending.length;
  }

  /** The text is whole: what was held back, made safe (an unfinished sequence is dropped). */
  end(): string {
    const rest = safeText(this.pending);
    this.pending = '';
    return rest;
  }
}

/**
 * Output of a renderer fed only safe text (the Markdown renderer): its colours kept, anything else it
 * may emit (an OSC 8 link, a decoded `&#27;` or `&#x202e;` entity) dropped.
 */
export function safeRendered(rendered: string): string {
  const styles = rendered.match(SGR) ?? [];
  return rendered
    .split(SGR)
    .map((piece, i) => safeText(piece) + (styles[i] ?? ''))
    .join('');
}

/**
 * A server record with every string in it made one-line safe (`safeText`, no line breaks), for
 * tables and fields; `--json` prints the record itself.
 */
export function safeData<T>(value: T): T {
  if (typeof value === 'string') return safeText(value, { multiline: false }) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => safeData(item)) as T;
  if (value !== null && typeof value === 'object') {
    const proto = Object.getPrototypeOf(value) as unknown;
    // Only plain records: dates, buffers and class instances are not text.
    if (proto !== Object.prototype && proto !== null) return value;
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, safeData(item)])) as T;
  }
  return value;
}

/** `safeText` on one line: for names, ids and notes that sit within a line of the client's. */
export function safeLine(text: string | null | undefined): string {
  return safeText(text ?? '', { multiline: false });
}
