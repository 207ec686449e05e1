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

/**
 * `text` on one line with every control, line break and direction override shown as an escape
 * (`\e`, `\n`, `\x07`, `\u{202e}`): for what a person approves (commands, arguments, variables,
 * paths), which must read exactly as it will be used.
 */
export function visibleText(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\\]/g, (char) =>
    char === '\\' ? '\\\\' : escapeOf(char),
  );
}
