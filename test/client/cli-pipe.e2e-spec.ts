import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EXIT } from '../../packages/cli/src/exit-codes.js';
import { cliHome, type CliHome } from '../support/cli.js';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { startServer, type TestServer } from '../support/server.js';
import { CLI_BIN, assertCliBuilt } from '../support/terminal.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The CLI in a shell pipeline whose reader leaves early (`cleveragents send … | head -n 1`, `| true`):
 * a real pipe made by /bin/sh, the built CLI writing into it after its reader has gone. The command
 * ends quietly with exit 141 (no stack trace, nothing on stderr); the reader got what it read.
 */

/** The answer the model streams: a line at a time, slowly enough that `head` leaves long before the end. */
const LINES = Array.from({ length: 20 }, (_, i) => `line ${i + 1}\n`);

interface PipedRun {
  /** What the reader (`head`) printed. */
  read: string;
  /** The CLI's own exit code and stderr (the shell's pipeline reports only the reader's). */
  code: number;
  stderr: string;
}

describe('cleveragents in a pipeline whose reader leaves early', () => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let home: CliHome;

  beforeAll(async () => {
    assertCliBuilt();
    home = await cliHome();
    model = await OpenAiCompatibleEndpoint.start({ tokens: LINES, delayMs: 100 });
    db = await createEmbeddedTestDatabase();
    server = await startServer(db, {
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'piped',
    });
  }, 90000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
    await ifAssigned(home)?.cleanup();
  });

  /** `sh -c '{ cleveragents ARGS 2>ERR; echo $? >CODE; } | READER'`. */
  async function piped(args: string[], reader: string, name: string): Promise<PipedRun> {
    const err = join(home.dir, `${name}.stderr`);
    const code = join(home.dir, `${name}.code`);
    const child = spawn(
      '/bin/sh',
      ['-c', `{ "$@" 2>"$ERR"; echo $? >"$CODE"; } | ${reader}`, 'sh', process.execPath, CLI_BIN, ...args],
      {
        cwd: home.dir,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...home.env, ERR: err, CODE: code },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the pipeline of cleveragents ${args.join(' ')} did not end in 60 s`));
      }, 60000);
      child.on('error', reject);
      child.on('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return {
      read: Buffer.concat(out).toString('utf8'),
      code: Number((await readFile(code, 'utf8')).trim()),
      stderr: await readFile(err, 'utf8'),
    };
  }

  it('send | head -n 1: the first line is read, then the CLI stops quietly with exit 141', async () => {
    const run = await piped(['--server', server.baseUrl, 'send', '--no-tools', 'Count to twenty'], 'head -n 1', 'send');
    expect(run).toEqual({ read: 'line 1\n', code: EXIT.OUTPUT_CLOSED, stderr: '' });
  });

  it('send --json | head -n 1: the first event line is read, then the CLI stops quietly with exit 141', async () => {
    const run = await piped(
      ['--server', server.baseUrl, '--json', 'send', '--no-tools', 'Count to twenty'],
      'head -n 1',
      'send-json',
    );
    expect({ ...run, read: Object.keys(JSON.parse(run.read) as object) }).toEqual({
      read: ['task'],
      code: EXIT.OUTPUT_CLOSED,
      stderr: '',
    });
  });

  it.each([
    { name: 'tasks-list', args: ['tasks', 'list'] },
    { name: 'sessions-json', args: ['--json', 'sessions', 'list'] },
    { name: 'card', args: ['card'] },
  ])('$name | true: the output nobody reads ends the command quietly with exit 141', async ({ name, args }) => {
    const run = await piped(['--server', server.baseUrl, ...args], 'true', name);
    expect(run).toEqual({ read: '', code: EXIT.OUTPUT_CLOSED, stderr: '' });
  });

  it('with a reader that reads it all, the exit code is the command’s own', async () => {
    const run = await piped(['--server', server.baseUrl, 'tasks', 'list'], 'cat', 'whole');
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: EXIT.OK, stderr: '' });
    expect(run.read).toMatch(/^(TASK +STATE +SESSION +UPDATED|No tasks\.)\n/);
  });
});
