/**
 * The buffer cut into the rows the terminal shows: each line broken at the width (by cells, wide
 * characters taking two), and only the rows around the cursor kept, so that a huge paste costs a
 * key no more than the few rows on screen.
 */
import { nextBoundary, previousBoundary } from './editor.js';

/** One row on screen: `text[start, end)` of the buffer. */
export interface Row {
  start: number;
  end: number;
  /** The row starts a line of the buffer (it gets the prompt or its indent; a wrapped row does not differ visibly). */
  first: boolean;
}

export interface Layout {
  rows: Row[];
  /** The row index (within rows) and cell the cursor is on. */
  cursorRow: number;
  /** Rows of the buffer not shown, above and below. */
  hiddenAbove: boolean;
  hiddenBelow: boolean;
}

/** How wide a tab is shown. */
export const TAB_WIDTH = 4;

// East Asian wide and fullwidth ranges, and the emoji blocks terminals draw two cells wide.
const WIDE =
  /[\u1100-\u115f\u231a\u231b\u2329\u232a\u23e9-\u23ec\u23f0\u23f3\u25fd\u25fe\u2614\u2615\u2648-\u2653\u267f\u2693\u26a1\u26aa\u26ab\u26bd\u26be\u26c4\u26c5\u26ce\u26d4\u26ea\u26f2\u26f3\u26f5\u26fa\u26fd\u2705\u270a\u270b\u2728\u274c\u274e\u2753-\u2755\u2757\u2795-\u2797\u27b0\u27bf\u2b1b\u2b1c\u2b50\u2b55\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{1f004}\u{1f0cf}\u{1f18e}\u{1f191}-\u{1f19a}\u{1f200}-\u{1f251}\u{1f300}-\u{1f64f}\u{1f680}-\u{1f6ff}\u{1f7e0}-\u{1f7eb}\u{1f90c}-\u{1f9ff}\u{1fa70}-\u{1faff}\u{20000}-\u{3fffd}]/u;
// Marks drawn on the character before them, and characters drawn as nothing.
const ZERO = /[\p{M}\p{Cf}]/u;

/** The cells `char` (one code point) takes on a terminal. */
export function charWidth(char: string): number {
  if (char === '\t') return TAB_WIDTH;
  if (char.charCodeAt(0) < 0x300) return 1;
  if (ZERO.test(char)) return 0;
  return WIDE.test(char) ? 2 : 1;
}

/** The cells `text` takes. */
export function textWidth(text: string): number {
  let width = 0;
  for (const char of text) width += charWidth(char);
  return width;
}

const PLAIN = /^[\x20-\x7e]*$/;

/** The rows of one line of the buffer (`text[start, stop)`) at `width` cells; a line that fits is one row. */
function wrapLine(text: string, start: number, stop: number, width: number, rows: Row[]): void {
  if (PLAIN.test(text.slice(start, stop))) {
    let at = start;
    do {
      rows.push({ start: at, end: Math.min(stop, at + width), first: at === start });
      at += width;
    } while (at < stop);
    return;
  }
  let rowStart = start;
  let cells = 0;
  let at = start;
  while (at < stop) {
    const code = text.codePointAt(at)!;
    const size = code > 0xffff ? 2 : 1;
    const cellsOfChar = charWidth(String.fromCodePoint(code));
    if (cells + cellsOfChar > width && at > rowStart) {
      rows.push({ start: rowStart, end: at, first: rowStart === start });
      rowStart = at;
      cells = 0;
    }
    cells += cellsOfChar;
    at += size;
  }
  rows.push({ start: rowStart, end: stop, first: rowStart === start });
}

/**
 * The rows around the cursor, at most `maxRows`, for a text area `width` cells wide. The cursor is on
 * the row holding it; at the very end of a full row it goes to a new row below, as in an editor.
 */
export function layout(text: string, cursor: number, width: number, maxRows: number): Layout {
  const cells = Math.max(1, width);
  // Lines far from the cursor cannot be on screen: only those within maxRows lines of it are wrapped.
  // (lastIndexOf reads a negative position as 0, which would find a line break at the very start.)
  const lineStartBefore = (at: number): number => (at <= 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1);
  let from = lineStartBefore(cursor);
  for (let i = 0; i < maxRows && from > 0; i++) from = lineStartBefore(from - 1);
  let to = text.indexOf('\n', cursor);
  for (let i = 0; i < maxRows && to !== -1; i++) to = text.indexOf('\n', to + 1);
  if (to === -1) to = text.length;

  const rows: Row[] = [];
  let lineStart = from;
  for (;;) {
    const newline = text.indexOf('\n', lineStart);
    const lineStop = newline === -1 || newline > to ? to : newline;
    wrapLine(text, lineStart, lineStop, cells, rows);
    if (lineStop >= to) break;
    lineStart = lineStop + 1;
  }

  let cursorRow = rows.findIndex((row) => cursor >= row.start && cursor < row.end);
  if (cursorRow === -1) {
    // The cursor at the end of a line: on that line's last row, or a new row if that one is full.
    cursorRow = rows.findLastIndex((row) => row.end === cursor);
    const row = rows[cursorRow];
    if (textWidth(text.slice(row.start, row.end)) >= cells) {
      rows.splice(cursorRow + 1, 0, { start: cursor, end: cursor, first: false });
      cursorRow += 1;
    }
  }

  // The window: the cursor's row kept in view, rows below it preferred to rows above once they overflow.
  const top = Math.max(0, Math.min(cursorRow - Math.floor(maxRows / 2), rows.length - maxRows));
  const shown = rows.slice(top, top + maxRows);
  return {
    rows: shown,
    cursorRow: cursorRow - top,
    hiddenAbove: top > 0 || from > 0,
    hiddenBelow: top + maxRows < rows.length || to < text.length,
  };
}

/** The start and end of the buffer line holding `at`. */
function lineAround(text: string, at: number): { start: number; stop: number } {
  const start = at <= 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1;
  const newline = text.indexOf('\n', at);
  return { start, stop: newline === -1 ? text.length : newline };
}

function rowsOfLine(text: string, line: { start: number; stop: number }, cells: number): Row[] {
  const rows: Row[] = [];
  wrapLine(text, line.start, line.stop, cells, rows);
  return rows;
}

/**
 * The cursor moved one row up (-1) or down (+1) on screen, wrapped rows counted, at the same cell
 * or the row's end; undefined on the buffer's first or last row (the caller then turns to the history).
 */
export function moveVertically(text: string, cursor: number, width: number, direction: -1 | 1): number | undefined {
  const cells = Math.max(1, width);
  const line = lineAround(text, cursor);
  const rows = rowsOfLine(text, line, cells);
  let index = rows.findIndex((row) => cursor >= row.start && cursor < row.end);
  let column: number;
  if (index === -1) {
    // At the line's end: on its last row, or on the new row below it when that one is full.
    index = rows.length - 1;
    const last = rows[index];
    column = textWidth(text.slice(last.start, cursor));
    if (column >= cells) {
      index = rows.length;
      column = 0;
    }
  } else {
    column = textWidth(text.slice(rows[index].start, cursor));
  }

  const target = index + direction;
  if (target >= 0 && target < rows.length) return cellIn(text, rows[target], target === rows.length - 1, column);
  if (direction < 0 && target === -1 && line.start > 0) {
    const above = rowsOfLine(text, lineAround(text, line.start - 1), cells);
    return cellIn(text, above[above.length - 1], true, column);
  }
  if (direction > 0 && target >= rows.length && line.stop < text.length) {
    const below = rowsOfLine(text, lineAround(text, line.stop + 1), cells);
    return cellIn(text, below[0], below.length === 1, column);
  }
  return undefined;
}

/** The offset in `row` at `column` cells, or its end (its last character when the line goes on below it). */
function cellIn(text: string, row: Row, lastOfLine: boolean, column: number): number {
  const limit = lastOfLine ? row.end : previousBoundary(text, row.end);
  let at = row.start;
  let cells = 0;
  while (at < limit) {
    const next = nextBoundary(text, at);
    const width = textWidth(text.slice(at, next));
    if (cells + width > column) break;
    cells += width;
    at = next;
  }
  return Math.min(at, limit);
}
