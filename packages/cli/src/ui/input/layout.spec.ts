import { describe, expect, it } from '@jest/globals';
import { charWidth, layout, moveVertically, textWidth } from './layout.js';

/* The rows the input draws, and the cursor's moves between them, as plain values. */

function rowsOf(text: string, cursor: number, width: number, maxRows = 50): string[] {
  return layout(text, cursor, width, maxRows).rows.map((row) => text.slice(row.start, row.end));
}

describe('widths', () => {
  it('counts wide characters as two cells, marks and invisible characters as none, a tab as four', () => {
    expect(textWidth('abc')).toBe(3);
    expect(textWidth('漢字')).toBe(4);
    expect(textWidth('e\u0301')).toBe(1);
    expect(textWidth('a\u200bb')).toBe(2);
    expect(charWidth('\t')).toBe(4);
    expect(textWidth('🙂')).toBe(2);
  });
});

describe('layout', () => {
  it('breaks lines at the width and keeps empty lines', () => {
    expect(rowsOf('abcdefg\n\nxy', 0, 3)).toEqual(['abc', 'def', 'g', '', 'xy']);
  });

  it('never splits a wide character or a surrogate pair across rows', () => {
    expect(rowsOf('a漢字🙂b', 0, 4)).toEqual(['a漢', '字🙂', 'b']);
  });

  it('handles a buffer starting with a line break, the cursor anywhere on it', () => {
    const text = '\n\nabc';
    for (let cursor = 0; cursor <= text.length; cursor++) expect(rowsOf(text, cursor, 10)).toEqual(['', '', 'abc']);
    expect(layout(text, 0, 10, 5).cursorRow).toBe(0);
    expect(layout(text, 1, 10, 5).cursorRow).toBe(1);
    expect(layout(text, 4, 10, 5).cursorRow).toBe(2);
  });

  it('puts the cursor at the end of a full row on a new row', () => {
    const view = layout('abcdef', 6, 3, 10);
    expect(view.rows.map((row) => [row.start, row.end])).toEqual([
      [0, 3],
      [3, 6],
      [6, 6],
    ]);
    expect(view.cursorRow).toBe(2);
  });

  it('shows a window of rows around the cursor and says what is hidden', () => {
    const text = Array.from({ length: 100 }, (_, i) => `l${i}`).join('\n');
    const middle = text.indexOf('l50');
    const view = layout(text, middle, 10, 6);
    expect(view.rows.map((row) => text.slice(row.start, row.end))).toEqual(['l47', 'l48', 'l49', 'l50', 'l51', 'l52']);
    expect(view.cursorRow).toBe(3);
    expect(view.hiddenAbove && view.hiddenBelow).toBe(true);
    const top = layout(text, 0, 10, 6);
    expect(top.hiddenAbove).toBe(false);
    expect(top.rows).toHaveLength(6);
  });

  it('lays out only the rows near the cursor of a huge line quickly', () => {
    const text = 'é'.repeat(200_000);
    const started = performance.now();
    const view = layout(text, 100_000, 80, 12);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(view.rows).toHaveLength(12);
    expect(view.rows[view.cursorRow].start).toBeLessThanOrEqual(100_000);
  });
});

describe('moveVertically', () => {
  it('moves between wrapped rows at the same cell, then to the next line, and stops at the edges', () => {
    const text = 'abcdefgh\nxy';
    expect(moveVertically(text, 6, 4, -1)).toBe(2);
    expect(moveVertically(text, 2, 4, -1)).toBeUndefined();
    expect(moveVertically(text, 2, 4, 1)).toBe(6);
    // From the second row of "abcdefgh" to "xy", at its end.
    expect(moveVertically(text, 6, 4, 1)).toBe(11);
    expect(moveVertically(text, 11, 4, 1)).toBeUndefined();
    // Up from "xy" lands on the last row of the line above.
    expect(moveVertically(text, 10, 4, -1)).toBe(5);
  });

  it('lands on the row above at the same cell, never at the end of a row its line goes on from', () => {
    // "abc" then "漢x" (the wide character does not fit the first row): up from cell 3 stops before "c",
    // since the end of "abc" is shown as the start of the next row.
    expect(moveVertically('abc漢x', 5, 4, -1)).toBe(2);
    expect(moveVertically('abcdefgh\nxyz', 12, 4, -1)).toBe(7);
    expect(moveVertically('abcdefghij\nxyz', 14, 8, -1)).toBe(10);
    expect(moveVertically('abcdefghijk\nxy', 14, 4, -1)).toBe(10);
    expect(moveVertically('abcdefgh\n12345678', 17, 4, -1)).toBe(13);
  });

  it('counts cells, not characters, across wide characters', () => {
    const text = '漢字\nabcd';
    expect(moveVertically(text, 5, 10, -1)).toBe(1);
    expect(moveVertically(text, 8, 10, -1)).toBe(2);
  });
});
