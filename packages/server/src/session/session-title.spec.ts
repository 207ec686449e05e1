import { describe, expect, it } from '@jest/globals';
import { MAX_DERIVED_TITLE_LENGTH, sessionTitleOf } from './session-title.js';

describe('sessionTitleOf', () => {
  it('is the first line with text, whitespace collapsed', () => {
    expect(sessionTitleOf('\n   \n  Fix   the\tbuild  \nand then the tests')).toBe('Fix the build');
  });

  it('drops control characters, escape sequences and bidirectional overrides', () => {
    expect(sessionTitleOf('\u001b[31mred\u001b[0m \u202eevil\u0007 title\r\nsecond')).toBe('[31mred[0m evil title');
  });

  it('cuts a long line to the limit, ellipsis included, never inside a character', () => {
    const title = sessionTitleOf(`${'😀'.repeat(100)} tail`)!;
    expect(Array.from(title)).toHaveLength(MAX_DERIVED_TITLE_LENGTH);
    expect(title.endsWith('😀…')).toBe(true);
    expect(sessionTitleOf('a'.repeat(MAX_DERIVED_TITLE_LENGTH))).toBe('a'.repeat(MAX_DERIVED_TITLE_LENGTH));
  });

  it('is undefined for a text with nothing to show', () => {
    expect(sessionTitleOf('')).toBeUndefined();
    expect(sessionTitleOf(' \n\t\u0000\u001b \r\n')).toBeUndefined();
  });
});
