import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { pickUpCommand } from './context.js';

/** The words a POSIX shell reads from `command`, as the person who pastes it would run it. */
function wordsOf(command: string): string[] {
  const run = spawnSync('sh', ['-c', `set -- ${command}; printf '%s\\0' "$@"`], { encoding: 'utf8' });
  expect(run.status).toBe(0);
  return run.stdout.split('\0').slice(0, -1);
}

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
