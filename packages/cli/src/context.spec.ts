import { describe, expect, it } from '@jest/globals';
import { shellWords } from '../../../test/support/cli-unit.js';
import { cliCommand, pickUpCommand } from './context.js';

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

describe('cliCommand', () => {
  it('says how the run reached its server: --local with its data directory, --server, --context, --agent', () => {
    expect(cliCommand(['chat', '--session', 'S1'], { local: true, dataDir: '/tmp/my data' })).toBe(
      "cleveragents --local --data-dir '/tmp/my data' chat --session S1",
    );
    expect(cliCommand(['keys', 'revoke', 'K1'], { server: 'https://agents.example.com' })).toBe(
      'cleveragents --server https://agents.example.com keys revoke K1',
    );
    expect(cliCommand(['login'], { context: 'work', agent: 'https://agent.example.com' })).toBe(
      'cleveragents --context work --agent https://agent.example.com login',
    );
    // The default server (from the stored login or the environment) needs no flag.
    expect(cliCommand(['tasks', 'list'], {})).toBe('cleveragents tasks list');
  });

  it('never names a credential, nor a data directory without --local', () => {
    const command = cliCommand(['whoami'], { server: 'https://a.example', apiKey: 'ca_secret', dataDir: '/d' });
    expect(command).toBe('cleveragents --server https://a.example whoami');
  });
});
