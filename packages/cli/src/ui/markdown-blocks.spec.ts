import { describe, expect, it } from '@jest/globals';
import { finishedBlocks } from './markdown-blocks.js';

describe('finishedBlocks', () => {
  it('cuts after a paragraph ended by a blank line, keeping the paragraph being written', () => {
    expect(finishedBlocks('First paragraph.\n\nSecond is')).toEqual({
      done: 'First paragraph.\n\n',
      tail: 'Second is',
    });
  });

  it('keeps a paragraph whole until its blank line comes', () => {
    expect(finishedBlocks('one line\nanother line\n')).toEqual({ done: '', tail: 'one line\nanother line\n' });
  });

  it('does not cut inside an open code fence, even at a blank line', () => {
    const text = 'Code:\n\n```js\nconst a = 1;\n\nconst b = 2;\n';
    expect(finishedBlocks(text)).toEqual({ done: 'Code:\n\n', tail: '```js\nconst a = 1;\n\nconst b = 2;\n' });
  });

  it('cuts right after a closed fence; a shorter or other closer does not close it', () => {
    expect(finishedBlocks('````\n```\n~~~~\n````\nafter').done).toBe('````\n```\n~~~~\n````\n');
  });

  it('a list ends at its blank line', () => {
    expect(finishedBlocks('- a\n- b\n\nThen')).toEqual({ done: '- a\n- b\n\n', tail: 'Then' });
  });
});
