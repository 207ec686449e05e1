import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ClientCall } from '../../packages/contract/src/index.js';
import {
  ClientToolRunner,
  probeBubblewrap,
  type ClientToolRunnerOptions,
  type CommandPreview,
  type SandboxStatus,
} from '../../packages/cli/src/tools/index.js';
import { bwrapMissing, describeWithSandbox, requireSandbox, TEST_BWRAP, TEST_NODE_DIR } from '../support/sandbox.js';
import { processesWith } from '../support/hostile-home.js';
import { until } from '../support/wait.js';

/**
 * The bubblewrap sandbox, for real when bwrap works here (skipped with a named reason when it does
 * not, unless CLEVERAGENTS_TEST_REQUIRE_SANDBOX=1), and its fallback with a bwrap that is missing.
 */

const NODE = process.execPath;
const describeWithBwrap = describeWithSandbox('the real-sandbox tests of tools-sandbox.spec.ts');

let base: string;
let ws: string;
let counter = 0;
const runners: ClientToolRunner[] = [];

function call(method: string, params: unknown): ClientCall {
  return { id: `c${++counter}`, method, params } as ClientCall;
}

function runner(options: ClientToolRunnerOptions = {}): ClientToolRunner {
  const r = new ClientToolRunner({
    workspace: ws,
    autoApproveCommands: true,
    bwrapPath: TEST_BWRAP,
    sandboxReadOnly: [TEST_NODE_DIR],
    ...options,
  });
  runners.push(r);
  return r;
}

/** Runs a command to its end: its exit status and output. */
async function runToEnd(r: ClientToolRunner, params: Record<string, unknown>) {
  const created = await r.run(call('terminal/create', params));
  expect(created.error).toBeUndefined();
  const terminalId = (created.result as { terminalId: string }).terminalId;
  const exit = (await r.run(call('terminal/wait_for_exit', { terminalId }))).result as {
    exitCode: number | null;
    signal: string | null;
  };
  const { output } = (await r.run(call('terminal/output', { terminalId }))).result as { output: string };
  return { ...exit, output };
}

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'cleveragents-sbx-')));
  ws = join(base, 'ws');
  mkdirSync(ws);
});

afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.dispose()));
  rmSync(base, { recursive: true, force: true });
});

describe('client tools: sandbox availability', () => {
  it(`bubblewrap works here${requireSandbox ? ' (CLEVERAGENTS_TEST_REQUIRE_SANDBOX=1)' : ' (informative; not required)'}`, async () => {
    if (requireSandbox) expect(bwrapMissing).toBeUndefined();
    // The runner's own probe agrees with this file's.
    const why = await probeBubblewrap(TEST_BWRAP);
    if (bwrapMissing === undefined) expect(why).toBeUndefined();
    else expect(why).toEqual(expect.any(String));
  });
});

describeWithBwrap('client tools: commands in the bubblewrap sandbox', () => {
  it('reports the sandbox, and shows it in the command preview', async () => {
    const previews: CommandPreview[] = [];
    const r = runner({
      sandbox: 'require',
      autoApproveCommands: false,
      confirmCommand: (p) => (previews.push(p), true),
    });
    expect(await r.sandboxStatus()).toMatchObject({ mode: 'require', sandboxed: true, network: false });
    const result = await runToEnd(r, { command: 'true' });
    expect(result.exitCode).toBe(0);
    expect(previews[0]).toMatchObject({ sandboxed: true, network: false });
    expect(previews[0].sandboxReason).toBeUndefined();
  });

  it('writes inside the workspace; cannot write outside it', async () => {
    const r = runner({ sandbox: 'require' });
    mkdirSync(join(ws, 'sub'));
    const inside = await runToEnd(r, { command: 'sh', args: ['-c', 'echo hi > inside.txt && echo ok'], cwd: 'sub' });
    expect(inside).toMatchObject({ exitCode: 0, output: 'ok\n' });
    expect(readFileSync(join(ws, 'sub', 'inside.txt'), 'utf8')).toBe('hi\n');

    // The system's folders are read-only; /var/tmp is the sandbox's own, as /tmp is.
    const systemFile = `/usr/cleveragents-sandbox-${process.pid}-${Date.now()}`;
    const outside = await runToEnd(r, { command: 'sh', args: ['-c', `echo x > ${systemFile}`] });
    expect(outside.exitCode).not.toBe(0);
    expect(outside.output).toMatch(/Read-only file system/i);
    expect(existsSync(systemFile)).toBe(false);
    const hostFile = `/var/tmp/cleveragents-sandbox-${process.pid}-${Date.now()}`;
    const varTmp = await runToEnd(r, { command: 'sh', args: ['-c', `echo x > ${hostFile} && echo var-tmp-ok`] });
    expect(varTmp.output).toContain('var-tmp-ok');
    expect(existsSync(hostFile)).toBe(false);

    // The host's /tmp is not the sandbox's: a sibling of the workspace is not there, nor written.
    const sibling = join(base, 'sibling.txt');
    // A name of this run's own: the host's /tmp may hold anything.
    const inTmp = `/tmp/cleveragents-sandbox-tmp-${process.pid}-${Date.now()}`;
    const tmp = await runToEnd(r, {
      command: 'sh',
      args: ['-c', `echo x > ${sibling}; echo x > ${inTmp} && echo tmp-ok`],
    });
    expect(tmp.output).toContain('tmp-ok');
    expect(existsSync(sibling)).toBe(false);
    expect(existsSync(inTmp)).toBe(false);
  });

  describe('network', () => {
    let server: Server;
    let port: number;
    const connect = () => ({
      command: NODE,
      args: [
        '-e',
        `require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('connected'); process.exit(0); })` +
          `.on('error', (e) => { console.log('failed ' + e.code); process.exit(7); })`,
      ],
    });

    beforeEach(async () => {
      server = createServer((socket) => socket.end());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });

    afterEach(() => {
      server.close();
    });

    it('has no network by default', async () => {
      const result = await runToEnd(runner({ sandbox: 'require' }), connect());
      expect(result.exitCode).toBe(7);
      expect(result.output).toMatch(/failed E/);
    });

    it('has the network when allowed', async () => {
      const r = runner({ sandbox: 'require', network: true });
      expect((await r.sandboxStatus()).network).toBe(true);
      const result = await runToEnd(r, connect());
      expect(result).toMatchObject({ exitCode: 0, output: 'connected\n' });
    });
  });

  it('killing a sandboxed command kills what runs inside', async () => {
    const r = runner({ sandbox: 'require' });
    // A duration no other process has ($0 of the shell, and the sleep's argument), to find both among the
    // machine's processes; had they lived on, the file would be written once the sleep ends.
    const tag = `30.${randomBytes(4).readUInt32BE()}`;
    const created = await r.run(
      call('terminal/create', { command: 'sh', args: ['-c', 'echo started; sleep "$0"; echo late > late.txt', tag] }),
    );
    const terminalId = (created.result as { terminalId: string }).terminalId;
    await until(
      async () =>
        ((await r.run(call('terminal/output', { terminalId }))).result as { output: string }).output.includes(
          'started',
        ),
      'the sandboxed command to start',
      10_000,
    );
    const sleeping = () =>
      processesWith(tag).filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep\0'));
    await until(() => sleeping().length === 1, 'the sleep inside the sandbox to run', 10_000);
    await r.run(call('terminal/kill', { terminalId }));
    expect((await r.run(call('terminal/wait_for_exit', { terminalId }))).result).toMatchObject({ signal: 'SIGKILL' });
    await until(() => processesWith(tag).length === 0, 'the shell and the sleep inside the sandbox to end', 10_000);
    expect(existsSync(join(ws, 'late.txt'))).toBe(false);
  });

  it('a sandboxed command has no terminal to type into: its own session, without a controlling terminal', async () => {
    // What bubblewrap's --new-session would otherwise guard: the terminal starts the sandbox in a session of its own.
    const r = runner({ sandbox: 'require' });
    const tag = `40.${randomBytes(4).readUInt32BE()}`;
    const created = await r.run(
      call('terminal/create', {
        command: 'sh',
        args: ['-c', 'if (: > /dev/tty) 2>/dev/null; then echo has-tty; else echo no-tty; fi; exec sleep "$0"', tag],
      }),
    );
    const terminalId = (created.result as { terminalId: string }).terminalId;
    const sleeping = () =>
      processesWith(tag).filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sleep\0'));
    await until(() => sleeping().length === 1, 'the sleep inside the sandbox to run', 10_000);
    // /proc/PID/stat after the command's name: state, ppid, process group, session, controlling terminal.
    const sessionAndTty = (pid: number | 'self') => {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return { session: Number(fields[3]), tty: Number(fields[4]) };
    };
    const inside = sessionAndTty(sleeping()[0]);
    expect(inside.tty).toBe(0);
    expect(inside.session).not.toBe(sessionAndTty('self').session);
    // Written before the sleep started; its pipe may be read a moment later.
    const output = async () =>
      ((await r.run(call('terminal/output', { terminalId }))).result as { output: string }).output;
    await until(async () => (await output()) !== '', 'the command to say whether it has a terminal', 10_000);
    expect(await output()).toBe('no-tty\n');
  });

  it('a sandbox killed while it is still being set up leaves no process behind', async () => {
    // Killed within a few milliseconds of starting, bubblewrap is still building the sandbox: a helper that has
    // left the command's process group by then (--new-session) once lived on with the command, in 1 of about
    // 12 rounds here, though the terminal said it was killed.
    const r = runner({ sandbox: 'require' });
    const tag = `60.${randomBytes(4).readUInt32BE()}`;
    for (let round = 0; round < 60; round++) {
      const created = await r.run(call('terminal/create', { command: 'sleep', args: [tag] }));
      expect(created.error).toBeUndefined();
      const terminalId = (created.result as { terminalId: string }).terminalId;
      await new Promise((resolve) => setTimeout(resolve, round % 30));
      expect((await r.run(call('terminal/release', { terminalId }))).error).toBeUndefined();
    }
    const left = await until(() => processesWith(tag).length === 0, 'every sandbox to be gone', 15_000).then(
      () => [],
      () => processesWith(tag).map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]),
    );
    expect(left).toEqual([]);
  });
});

describe('client tools: without bubblewrap', () => {
  const missing = '/nonexistent/cleveragents/bwrap';

  it('auto runs unsandboxed, says so once, and shows it in the preview', async () => {
    const told: SandboxStatus[] = [];
    const previews: CommandPreview[] = [];
    const r = runner({
      sandbox: 'auto',
      bwrapPath: missing,
      autoApproveCommands: false,
      confirmCommand: (p) => (previews.push(p), true),
      onUnsandboxed: (status) => told.push(status),
    });
    const status = await r.sandboxStatus();
    expect(status).toMatchObject({ mode: 'auto', sandboxed: false, bwrapPath: missing });
    expect(status.reason).toContain('was not found');
    for (let i = 0; i < 2; i++) {
      const result = await runToEnd(r, { command: 'sh', args: ['-c', 'echo hi > /dev/null && echo ran'] });
      expect(result).toMatchObject({ exitCode: 0, output: 'ran\n' });
    }
    expect(told).toHaveLength(1);
    expect(told[0].sandboxed).toBe(false);
    expect(previews.map((p) => [p.sandboxed, p.network])).toEqual([
      [false, true],
      [false, true],
    ]);
    expect(previews[0].sandboxReason).toContain('was not found');
  });

  it('require refuses with SANDBOX_REQUIRED, saying how to install bubblewrap, without asking', async () => {
    let asked = 0;
    const r = runner({
      sandbox: 'require',
      bwrapPath: missing,
      autoApproveCommands: false,
      confirmCommand: () => ++asked > 0,
    });
    const result = await r.run(call('terminal/create', { command: 'touch', args: ['ran.txt'] }));
    expect(result.error).toMatchObject({ code: -32003, data: { reason: 'SANDBOX_REQUIRED' } });
    expect(result.error?.message).toContain('apt-get install bubblewrap');
    expect(result.error?.message).toContain('dnf install bubblewrap');
    expect(asked).toBe(0);
    expect(existsSync(join(ws, 'ran.txt'))).toBe(false);
  });

  it('a bwrap that exists but fails counts as missing', async () => {
    const status = await runner({ bwrapPath: '/bin/false' }).sandboxStatus();
    expect(status).toMatchObject({ sandboxed: false });
    expect(status.reason).toContain('does not work here');
  });

  it('off never sandboxes, even with bubblewrap around', async () => {
    const r = runner({ sandbox: 'off' });
    expect(await r.sandboxStatus()).toMatchObject({
      sandboxed: false,
      reason: 'the sandbox is turned off (--sandbox off)',
    });
    const hostFile = join(base, 'written-from-command.txt');
    const result = await runToEnd(r, { command: 'sh', args: ['-c', `echo x > ${hostFile}`] });
    expect(result.exitCode).toBe(0);
    expect(existsSync(hostFile)).toBe(true);
  });
});
