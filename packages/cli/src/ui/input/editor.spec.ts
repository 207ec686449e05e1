import { describe, expect, it } from '@jest/globals';
import {
  type Editor,
  backspace,
  cleanInput,
  deleteForward,
  end,
  home,
  killToLineEnd,
  killToLineStart,
  killWordBack,
  left,
  right,
  wordLeft,
  wordRight,
} from './editor.js';

/* The buffer's edits as plain values: `|` marks the cursor in the texts below. */

function at(marked: string): Editor {
  return { text: marked.replace('|', ''), cursor: marked.indexOf('|') };
}

function marked(editor: Editor): string {
  return editor.text.slice(0, editor.cursor) + '|' + editor.text.slice(editor.cursor);
}

describe('editor', () => {
  it('Ctrl-U and Ctrl-K stop at the line, and at its edge take the line break (joining the lines)', () => {
    expect(marked(killToLineStart(at('one\ntw|o')))).toBe('one\n|o');
    expect(marked(killToLineStart(at('one\n|two')))).toBe('one|two');
    expect(marked(killToLineStart(at('|one')))).toBe('|one');
    expect(marked(killToLineEnd(at('o|ne\ntwo')))).toBe('o|\ntwo');
    expect(marked(killToLineEnd(at('one|\ntwo')))).toBe('one|two');
    expect(marked(killToLineEnd(at('one|')))).toBe('one|');
  });

  it('Ctrl-W takes the word before the cursor with the spaces after it; Alt-B and Alt-F stop at punctuation', () => {
    expect(marked(killWordBack(at('git commit -m  |')))).toBe('git commit |');
    expect(marked(killWordBack(at('path/to/fi|le')))).toBe('|le');
    expect(marked(wordLeft(at('path/to/fi|le')))).toBe('path/to/|file');
    expect(marked(wordRight(at('pa|th/to')))).toBe('path|/to');
    expect(marked(wordLeft(at('|start')))).toBe('|start');
    expect(marked(wordRight(at('end|')))).toBe('end|');
  });

  it('Home and End keep to the line the cursor is on, the first line included', () => {
    expect(marked(home(at('\n\nab|c')))).toBe('\n\n|abc');
    expect(marked(home(at('|\nabc')))).toBe('|\nabc');
    expect(marked(end(at('a|b\ncd')))).toBe('ab|\ncd');
  });

  it('steps over a surrogate pair, a flag and a combining mark as one character', () => {
    expect(marked(left(at('a🇫🇷|')))).toBe('a|🇫🇷');
    expect(marked(right(at('|e\u0301x')))).toBe('e\u0301|x');
    expect(marked(backspace(at('x😀|')))).toBe('x|');
    expect(marked(deleteForward(at('|😀x')))).toBe('|x');
    expect(marked(backspace(at('|x')))).toBe('|x');
    expect(marked(deleteForward(at('x|')))).toBe('x|');
  });

  it('cleans text before it enters: line endings made \\n, tabs kept, escapes, controls and overrides dropped', () => {
    expect(cleanInput('a\r\nb\rc\n\td')).toBe('a\nb\nc\n\td');
    expect(cleanInput('\u001b[31mred\u001b[0m \u001b]52;c;aGk=\u0007\u0008x\u202e\u009b2Jy')).toBe('red xy');
  });
});
