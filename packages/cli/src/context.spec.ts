import { describe, expect, it } from '@jest/globals';
import { shellWords } from '../../../test/support/cli-unit.js';
import type { Command } from 'commander';
import { buildProgram } from './main.js';
import { cliCommand, operand, pickUpCommand } from './context.js';

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
        // An id that looks like an option follows `--`: see the CLI's own reading below.
        ...(id.startsWith('-') ? ['--'] : []),
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

/** What the CLI itself makes of a command line: the command it would run, its operands and options. */
async function parsedBy(
  line: string,
): Promise<{ command: string; operands: unknown[]; options: Record<string, unknown> }> {
  const program = buildProgram();
  const quiet = (command: Command): void => {
    command.exitOverride().configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
    command.commands.forEach(quiet);
  };
  quiet(program);
  let seen: { command: string; operands: unknown[]; options: Record<string, unknown> } | undefined;
  program.hook('preAction', (_program, action) => {
    const names: string[] = [];
    for (let c: Command | null = action; c && c !== program; c = c.parent) names.unshift(c.name());
    seen = { command: names.join(' '), operands: action.processedArgs, options: action.optsWithGlobals() };
    throw new Error('parsed');
  });
  const [first, ...words] = wordsOf(line);
  expect(first).toBe('cleveragents');
  await program.parseAsync(words, { from: 'user' }).catch((err: unknown) => {
    if (!(err instanceof Error && err.message === 'parsed')) throw err;
  });
  if (!seen) throw new Error(`${line}: the CLI ran no command`);
  return seen;
}

describe('a hint with an id a hostile server chose, run as printed', () => {
  const ids = ['-x', '--server=https://evil.example', '--help', '--', '-', '--local', 'plain-id'];
  const server = { server: 'https://agents.example.com' };

  it('tasks watch ID: the id is the operand, and the server stays the one the run reached', async () => {
    for (const id of ids) {
      const seen = await parsedBy(pickUpCommand(id, server));
      expect({ id, ...seen, options: { server: seen.options.server, local: seen.options.local } }).toEqual({
        id,
        command: 'tasks watch',
        operands: [id],
        options: { server: server.server, local: undefined },
      });
    }
  });

  it('chat --session ID and keys revoke ID: the id is the option value or the operand, nothing else', async () => {
    for (const id of ids) {
      const chat = await parsedBy(cliCommand(['chat', '--session', operand(id)], server));
      expect({ id, command: chat.command, session: chat.options.session, server: chat.options.server }).toEqual({
        id,
        command: 'chat',
        session: id,
        server: server.server,
      });
      const revoke = await parsedBy(cliCommand(['keys', 'revoke', operand(id)], server));
      expect({ id, command: revoke.command, operands: revoke.operands }).toEqual({
        id,
        command: 'keys revoke',
        operands: [id],
      });
    }
  });
});
