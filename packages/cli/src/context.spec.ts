import { describe, expect, it } from '@jest/globals';
import { shellWords } from '../../../test/support/cli-unit.js';
import { pickUpCommand } from './context.js';

const wordsOf = shellWords;

describe('pickUpCommand', () => {
  it('names the task so that a shell reads it back as one word, whatever a hostile server made its id', () => {
    const ids = [
      'plain-task-1',
      '$(touch /tmp/pwned-by-a-task-id)',
      '`id`',
      "it's; rm -rf ~",
      'a b\tc',
      'line\nbreak',
      '--server=https://evil.example',
      '*',
    ];
    for (const id of ids) {
      const command = pickUpCommand(id, { server: 'https://agents.example.com' });
      expect(wordsOf(command)).toEqual([
        'cleveragents',
        '--server',
        'https://agents.example.com',
        'tasks',
        'watch',
        id,
      ]);
    }
  });

  it('keeps the connection flags and never a credential', () => {
    const command = pickUpCommand('t1', { context: 'work', apiKey: 'ca_secret' });
    expect(wordsOf(command)).toEqual(['cleveragents', '--context', 'work', 'tasks', 'watch', 't1']);
    expect(command).not.toContain('ca_secret');
  });
});
