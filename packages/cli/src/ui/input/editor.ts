/**
 * The text being written and the cursor in it, with the edits the keys make. Pure functions over
 * a plain value, so the component only decides which key does what. The cursor is an offset into
 * the text (UTF-16 units) and always sits on a boundary between characters as a person sees them.
 */
import { safeText } from '../../safe-text.js';

export interface Editor {
  readonly text: string;
  readonly cursor: number;
}

export const EMPTY: Editor = { text: '', cursor: 0 };

/** An editor holding `text` with the cursor at its end. */
export function editorOf(text: string): Editor {
  return { text, cursor: text.length };
}

/**
 * Text from the keyboard or a paste as it may enter the buffer: line endings made \n, tabs kept, and
 * every escape sequence, control character and direction override dropped (they would reach the
 * screen, and the agent, as something other than what the person saw).
 */
export function cleanInput(text: string): string {
  return safeText(text.replace(/\r\n?/g, '\n'));
}

export function insert(editor: Editor, text: string): Editor {
  if (text === '') return editor;
  const { text: old, cursor } = editor;
  return { text: old.slice(0, cursor) + text + old.slice(cursor), cursor: cursor + text.length };
}

// Grapheme boundaries are looked for in a window around the cursor, so a key costs the same in a huge paste.
const WINDOW = 64;
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** The offset of the character boundary before `at`. */
export function previousBoundary(text: string, at: number): number {
  if (at <= 0) return 0;
  const from = Math.max(0, at - WINDOW);
  let last = from;
  for (const { index } of graphemes.segment(text.slice(from, at))) last = from + index;
  return last;
}

/** The offset of the character boundary after `at`. */
export function nextBoundary(text: string, at: number): number {
  if (at >= text.length) return text.length;
  const first = graphemes
    .segment(text.slice(at, at + WINDOW))
    [Symbol.iterator]()
    .next();
  return first.done ? text.length : at + first.value.segment.length;
}

export function left(editor: Editor): Editor {
  return { ...editor, cursor: previousBoundary(editor.text, editor.cursor) };
}

export function right(editor: Editor): Editor {
  return { ...editor, cursor: nextBoundary(editor.text, editor.cursor) };
}

function lineStart(text: string, at: number): number {
  // lastIndexOf reads a negative position as 0, which would find a line break at the very start.
  return at <= 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1;
}

function lineEnd(text: string, at: number): number {
  const end = text.indexOf('\n', at);
  return end === -1 ? text.length : end;
}

export function home(editor: Editor): Editor {
  return { ...editor, cursor: lineStart(editor.text, editor.cursor) };
}

export function end(editor: Editor): Editor {
  return { ...editor, cursor: lineEnd(editor.text, editor.cursor) };
}

const WORD = /[\p{L}\p{N}_]/u;

/** The start of the word before `at` (skipping what separates it), as readline's Alt-B. */
function wordStartBefore(text: string, at: number): number {
  let i = at;
  while (i > 0 && !WORD.test(text[i - 1])) i -= 1;
  while (i > 0 && WORD.test(text[i - 1])) i -= 1;
  return i;
}

/** The end of the word after `at`, as readline's Alt-F. */
function wordEndAfter(text: string, at: number): number {
  let i = at;
  while (i < text.length && !WORD.test(text[i])) i += 1;
  while (i < text.length && WORD.test(text[i])) i += 1;
  return i;
}

export function wordLeft(editor: Editor): Editor {
  return { ...editor, cursor: wordStartBefore(editor.text, editor.cursor) };
}

export function wordRight(editor: Editor): Editor {
  return { ...editor, cursor: wordEndAfter(editor.text, editor.cursor) };
}

function cut(editor: Editor, from: number, to: number): Editor {
  if (from >= to) return editor;
  return { text: editor.text.slice(0, from) + editor.text.slice(to), cursor: from };
}

export function backspace(editor: Editor): Editor {
  return cut(editor, previousBoundary(editor.text, editor.cursor), editor.cursor);
}

export function deleteForward(editor: Editor): Editor {
  return cut(editor, editor.cursor, nextBoundary(editor.text, editor.cursor));
}

/** Ctrl-U: the line up to the cursor (at a line's start, the line break before it). */
export function killToLineStart(editor: Editor): Editor {
  const start = lineStart(editor.text, editor.cursor);
  return cut(editor, start === editor.cursor ? Math.max(0, start - 1) : start, editor.cursor);
}

/** Ctrl-K: the line after the cursor (at a line's end, the line break after it). */
export function killToLineEnd(editor: Editor): Editor {
  const stop = lineEnd(editor.text, editor.cursor);
  return cut(editor, editor.cursor, stop === editor.cursor ? Math.min(editor.text.length, stop + 1) : stop);
}

/** Ctrl-W: the word before the cursor, with the space after it. */
export function killWordBack(editor: Editor): Editor {
  let from = editor.cursor;
  while (from > 0 && /\s/.test(editor.text[from - 1])) from -= 1;
  while (from > 0 && !/\s/.test(editor.text[from - 1])) from -= 1;
  return cut(editor, from, editor.cursor);
}

/** Alt-Backspace: the word before the cursor, stopping at punctuation as Alt-B does. */
export function killWordLeft(editor: Editor): Editor {
  return cut(editor, wordStartBefore(editor.text, editor.cursor), editor.cursor);
}
