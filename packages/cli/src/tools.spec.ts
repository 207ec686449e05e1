import { describe, expect, it } from '@jest/globals';
import { shellWords } from '../../../test/support/cli-unit.js';
import { styleFor } from './style.js';
import { colorDiff, commandLine } from './tools.js';

/*
 * What a person is shown before a command runs or a file is written: the command line exactly as it
 * runs, the write as a coloured diff. Control sequences in either are shown as escapes, never obeyed.
 */

const colours = styleFor({ isTTY: true } as NodeJS.WriteStream, { FORCE_COLOR: '1' });

const wordsOf = shellWords;

describe('commandLine', () => {
  it('quotes only the words that need it, so that a shell reads back the words that run', () => {
    const args = ['-c', 'a b', '$(touch /tmp/x)', '`id`', '*', '--flag=v', 'x;y', ''];
    const line = commandLine('sh', args);
    expect(line).toBe(`sh -c 'a b' '$(touch /tmp/x)' '\`id\`' '*' --flag=v 'x;y' ''`);
    expect(wordsOf(line)).toEqual(['sh', ...args]);
  });

  it('quotes an apostrophe without a backslash, which the escaped view would show doubled', () => {
    const args = ['-m', "it's done", "'"];
    const line = commandLine('git', args);
    expect(line).toBe(`git -m 'it'"'"'s done' ''"'"''`);
    expect(wordsOf(line)).toEqual(['git', ...args]);
  });

  it('shows controls and invisible characters as escapes, on one line', () => {
    expect(commandLine('echo', ['ok\r\u001b[2Kpwned', 'a\nb', 'rm\u202e', 'zero\u200bwidth'])).toBe(
      "echo 'ok\\r\\e[2Kpwned' 'a\\nb' 'rm\\u{202e}' 'zero\\u{200b}width'",
    );
  });
});

describe('colorDiff', () => {
  it('colours the headers, hunks, removed and added lines; context lines as they are', () => {
    const diff = ['--- a/x', '+++ b/x', '@@ -1,2 +1,2 @@', ' same', '-old', '+new'].join('\n');
    expect(colorDiff(diff, colours).split('\n')).toEqual([
      colours.bold('--- a/x'),
      colours.bold('+++ b/x'),
      colours.cyan('@@ -1,2 +1,2 @@'),
      ' same',
      colours.red('-old'),
      colours.green('+new'),
    ]);
  });

  it('an added line cannot end the diff early or rewrite a line above: its controls are escaped, its tabs kept', () => {
    const shown = colorDiff('+\tindented\r\u001b[1A\u001b[2K+fake\u0007', colours);
    expect(shown).toBe(colours.green('+\tindented\\r\\e[1A\\e[2K+fake\\x07'));
  });
});
