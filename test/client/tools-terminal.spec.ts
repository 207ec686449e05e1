import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClientCall, ClientCallResult } from '../../packages/contract/src/index.js';
import {
  ClientToolRunner,
  OutputTail,
  type ClientToolRunnerOptions,
  type CommandPreview,
} from '../../packages/cli/src/tools/index.js';
import { eventually, holdsThroughout, until } from '../support/wait.js';

const NODE = process.execPath;
let base: string;
let ws: string;
let counter = 0;
const runners: ClientToolRunner[] = [];

function call(method: string, params: unknown): ClientCall {
  return { id: `c${++counter}`, method, params } as ClientCall;
}

function reasonOf(result: ClientCallResult): string | undefined {
  return (result.error?.data as { reason?: string } | undefined)?.reason;
}

function runner(options: ClientToolRunnerOptions = {}): ClientToolRunner {
  const r = new ClientToolRunner({ workspace: ws, sandbox: 'off', autoApproveCommands: true, ...options });
  runners.push(r);
  return r;
}

async function start(r: ClientToolRunner, params: Record<string, unknown>): Promise<string> {
  const created = await r.run(call('terminal/create', params));
  expect(created.error).toBeUndefined();
  return (created.result as { terminalId: string }).terminalId;
}

async function output(r: ClientToolRunner, terminalId: string) {
  const result = await r.run(call('terminal/output', { terminalId }));
  expect(result.error).toBeUndefined();
  return result.result as {
    output: string;
    truncated: boolean;
    exitStatus?: { exitCode: number | null; signal: string | null };
  };
}

/** Polls a terminal's output until it matches. */
function outputMatching(r: ClientToolRunner, terminalId: string, pattern: RegExp): Promise<RegExpMatchArray> {
  return eventually(
    async () => (await output(r, terminalId)).output.match(pattern) ?? undefined,
    `output matching ${pattern}`,
    10_000,
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits (up to 10 s) for a process to be gone; zombies count as gone once reaped by init. */
async function gone(pid: number): Promise<boolean> {
  return until(() => !alive(pid), `process ${pid} to end`, 10_000).then(
    () => true,
    () => false,
  );
}

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'cleveragents-term-')));
  ws = join(base, 'ws');
  mkdirSync(join(ws, 'sub'), { recursive: true });
});

afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.dispose()));
  rmSync(base, { recursive: true, force: true });
});

describe('client tools: terminals', () => {
  it('creates a terminal, reads its output, waits for its exit code', async () => {
    const r = runner();
    const id = await start(r, { command: 'sh', args: ['-c', 'echo out; echo err >&2; exit 3'] });
    const exit = await r.run(call('terminal/wait_for_exit', { terminalId: id }));
    expect(exit.result).toEqual({ exitCode: 3, signal: null });
    const after = await output(r, id);
    expect(after.output).toContain('out\n');
    expect(after.output).toContain('err\n');
    expect(after).toMatchObject({ truncated: false, exitStatus: { exitCode: 3, signal: null } });
  });

  it('has no exit status while the command runs', async () => {
    const r = runner();
    const id = await start(r, { command: 'sh', args: ['-c', 'echo started; sleep 30'] });
    await outputMatching(r, id, /started/);
    expect((await output(r, id)).exitStatus).toBeUndefined();
  });

  it('runs in a cwd inside the workspace, with a minimal environment plus the agent’s variables', async () => {
    const r = runner({
      baseEnv: { PATH: process.env.PATH, HOME: '/root', SECRET_TOKEN: 'hunter2' },
      allowEnv: ['FOO'],
    });
    const id = await start(r, {
      command: 'sh',
      args: ['-c', 'pwd; echo "foo=$FOO ci=$CI"; env'],
      cwd: 'sub',
      env: [
        { name: 'FOO', value: 'bar baz' },
        { name: 'CI', value: 'true' },
      ],
    });
    await r.run(call('terminal/wait_for_exit', { terminalId: id }));
    const text = (await output(r, id)).output;
    expect(text.split('\n')[0]).toBe(join(ws, 'sub'));
    expect(text).toContain('foo=bar baz ci=true');
    expect(text).toContain('HOME=/root');
    expect(text).not.toContain('hunter2');
  });

  it('runs without a shell: arguments are not interpreted', async () => {
    const r = runner();
    const id = await start(r, { command: 'echo', args: ['$HOME', '; rm -rf /', '`id`'] });
    await r.run(call('terminal/wait_for_exit', { terminalId: id }));
    expect((await output(r, id)).output).toBe('$HOME ; rm -rf / `id`\n');
  });

  it('keeps the tail of the output within outputByteLimit, cut on a character boundary', async () => {
    const r = runner();
    const id = await start(r, {
      command: NODE,
      args: ['-e', "process.stdout.write('é'.repeat(500) + 'END')"],
      outputByteLimit: 104,
    });
    await r.run(call('terminal/wait_for_exit', { terminalId: id }));
    const result = await output(r, id);
    expect(result.truncated).toBe(true);
    expect(result.output.endsWith('END')).toBe(true);
    expect(result.output).not.toContain('\uFFFD');
    expect(result.output).toBe('é'.repeat(50) + 'END');
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(104);
  });

  it('caps output at 1 MiB by default', async () => {
    const r = runner();
    const id = await start(r, { command: NODE, args: ['-e', "process.stdout.write('x'.repeat(1536 * 1024) + 'END')"] });
    await r.run(call('terminal/wait_for_exit', { terminalId: id }));
    const result = await output(r, id);
    expect(result.truncated).toBe(true);
    expect(result.output.length).toBe(1024 * 1024);
    expect(result.output.endsWith('xEND')).toBe(true);
  });

  it('kills the whole process group when the timeout passes', async () => {
    const r = runner({ commandTimeoutMs: 700 });
    const id = await start(r, { command: 'sh', args: ['-c', 'sleep 30 & echo "child=$!"; wait'] });
    const child = Number((await outputMatching(r, id, /child=(\d+)/))[1]);
    // The sleep would end on its own after 30 s with code 0: SIGKILL and timedOut are the timeout's.
    const exit = await r.run(call('terminal/wait_for_exit', { terminalId: id }));
    expect(exit.result).toEqual({ exitCode: null, signal: 'SIGKILL', timedOut: true });
    expect(await gone(child)).toBe(true);
    expect(await output(r, id)).toMatchObject({ exitStatus: { signal: 'SIGKILL' }, timedOut: true });
  });

  it('kill stops the command and keeps the terminal', async () => {
    const r = runner();
    const id = await start(r, { command: 'sh', args: ['-c', 'echo "pid=$$"; exec sleep 30'] });
    const pid = Number((await outputMatching(r, id, /pid=(\d+)/))[1]);
    expect((await r.run(call('terminal/kill', { terminalId: id }))).result).toEqual({});
    expect((await r.run(call('terminal/wait_for_exit', { terminalId: id }))).result).toEqual({
      exitCode: null,
      signal: 'SIGKILL',
    });
    expect(await gone(pid)).toBe(true);
    expect((await output(r, id)).output).toContain(`pid=${pid}`);
    expect((await r.run(call('terminal/kill', { terminalId: id }))).result).toEqual({});
  });

  it('release kills a running command and forgets the terminal', async () => {
    const r = runner();
    const id = await start(r, { command: 'sh', args: ['-c', 'echo "pid=$$"; exec sleep 30'] });
    const pid = Number((await outputMatching(r, id, /pid=(\d+)/))[1]);
    expect((await r.run(call('terminal/release', { terminalId: id }))).result).toEqual({});
    expect(await gone(pid)).toBe(true);
    for (const method of ['terminal/output', 'terminal/wait_for_exit', 'terminal/kill', 'terminal/release']) {
      const after = await r.run(call(method, { terminalId: id }));
      expect(after.error).toMatchObject({ code: -32001, data: { reason: 'UNKNOWN_TERMINAL' } });
    }
  });

  it('says UNKNOWN_TERMINAL for an id it never gave, INVALID_PARAMS for none', async () => {
    const r = runner();
    const unknown = await r.run(call('terminal/output', { terminalId: 'term_nope' }));
    expect(unknown.error).toMatchObject({
      code: -32001,
      data: { reason: 'UNKNOWN_TERMINAL', terminalId: 'term_nope' },
    });
    const none = await r.run(call('terminal/wait_for_exit', {}));
    expect(none.error).toMatchObject({ code: -32602, data: { reason: 'INVALID_PARAMS', field: 'terminalId' } });
  });

  it('refuses a cwd outside the workspace or not a directory, and malformed params', async () => {
    const r = runner();
    for (const cwd of ['/etc', '..', base]) {
      const result = await r.run(call('terminal/create', { command: 'true', cwd }));
      expect(result.error).toMatchObject({ code: -32003, data: { reason: 'OUTSIDE_WORKSPACE' } });
    }
    const missing = await r.run(call('terminal/create', { command: 'true', cwd: 'nope' }));
    expect(reasonOf(missing)).toBe('NOT_FOUND');
    const badEnv = await r.run(call('terminal/create', { command: 'true', env: [{ name: 'A=B', value: 'x' }] }));
    expect(badEnv.error).toMatchObject({ code: -32602, data: { field: 'env[0].name' } });
    const badArgs = await r.run(call('terminal/create', { command: 'true', args: ['ok', 3] }));
    expect(badArgs.error).toMatchObject({ code: -32602, data: { field: 'args[1]' } });
    const noCommand = await r.run(call('terminal/create', { args: [] }));
    expect(noCommand.error).toMatchObject({ code: -32602, data: { field: 'command' } });
  });

  it('says COMMAND_NOT_FOUND for a command not on PATH', async () => {
    const result = await runner().run(call('terminal/create', { command: 'cleveragents-no-such-command' }));
    expect(result.error).toMatchObject({ code: -32001, data: { reason: 'COMMAND_NOT_FOUND' } });
  });

  it('asks before running; a declined command does not run', async () => {
    const previews: CommandPreview[] = [];
    const r = runner({
      autoApproveCommands: false,
      confirmCommand: (p) => (previews.push(p), false),
      commandTimeoutMs: 5000,
    });
    const result = await r.run(
      call('terminal/create', { command: 'touch', args: ['ran.txt'], cwd: 'sub', env: [{ name: 'CI', value: '1' }] }),
    );
    expect(result.error).toMatchObject({ code: -32003, data: { reason: 'COMMAND_DECLINED' } });
    expect(result.error?.message).toContain('touch ran.txt');
    expect(previews).toEqual([
      {
        command: 'touch',
        args: ['ran.txt'],
        program: expect.stringMatching(/^\/.*\/touch$/),
        cwd: join(ws, 'sub'),
        env: [{ name: 'CI', value: '1' }],
        sandboxed: false,
        network: true,
        sandboxReason: 'the sandbox is turned off (--sandbox off)',
        timeoutMs: 5000,
      },
    ]);
    // An approved touch writes its file within moments (the next test); a declined one that ran anyway
    // would have done so within this window.
    await holdsThroughout(() => !existsSync(join(ws, 'sub', 'ran.txt')), 'no ran.txt', 500);
  });

  it('an approved command runs', async () => {
    const r = runner({ autoApproveCommands: false, confirmCommand: () => true });
    const id = await start(r, { command: 'touch', args: ['ran.txt'] });
    expect((await r.run(call('terminal/wait_for_exit', { terminalId: id }))).result).toEqual({
      exitCode: 0,
      signal: null,
    });
    expect(existsSync(join(ws, 'ran.txt'))).toBe(true);
  });

  it('stops waiting when the call is canceled, leaving the command running', async () => {
    const r = runner();
    const id = await start(r, { command: 'sleep', args: ['30'] });
    const controller = new AbortController();
    // Canceled once the call waits, which it shows by listening for the cancel.
    const listen = controller.signal.addEventListener.bind(controller.signal);
    controller.signal.addEventListener = (...args: Parameters<typeof listen>) => {
      listen(...args);
      if (args[0] === 'abort') setImmediate(() => controller.abort());
    };
    const waited = await r.run(call('terminal/wait_for_exit', { terminalId: id }), { signal: controller.signal });
    expect(reasonOf(waited)).toBe('ABORTED');
    expect((await output(r, id)).exitStatus).toBeUndefined();
  });

  it('dispose kills every running command and refuses later calls', async () => {
    const r = runner();
    const pids: number[] = [];
    for (let i = 0; i < 2; i++) {
      const id = await start(r, { command: 'sh', args: ['-c', 'sleep 30 & echo "pid=$$ child=$!"; wait'] });
      const match = await outputMatching(r, id, /pid=(\d+) child=(\d+)/);
      pids.push(Number(match[1]), Number(match[2]));
    }
    await r.dispose();
    for (const pid of pids) expect(await gone(pid)).toBe(true);
    const later = await r.run(call('terminal/create', { command: 'true' }));
    expect(reasonOf(later)).toBe('DISPOSED');
  });
});

describe('OutputTail', () => {
  it('keeps the last bytes and drops a character cut in two at either end', () => {
    const tail = new OutputTail(5);
    tail.append(Buffer.from('ab'));
    expect([tail.text(), tail.truncated]).toEqual(['ab', false]);
    tail.append(Buffer.from('c€')); // € is 3 bytes: 'abc€' is 6 bytes, the tail 'bc€'
    expect([tail.text(), tail.truncated]).toEqual(['bc€', true]);
    tail.append(Buffer.from('d'));
    expect(tail.text()).toBe('c€d'); // 5 bytes: fits
    tail.append(Buffer.from('e'));
    expect(tail.text()).toBe('€de');
    tail.append(Buffer.from('f')); // the last 5 bytes start inside '€'
    expect(tail.text()).toBe('def');
    const split = new OutputTail(10);
    const euro = Buffer.from('€');
    split.append(Buffer.concat([Buffer.from('x'), euro.subarray(0, 2)]));
    expect(split.text()).toBe('x'); // unfinished at the end
    split.append(euro.subarray(2));
    expect(split.text()).toBe('x€');
  });
});
