import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  realpathSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type {
  ApprovalRequest,
  ClientCall,
  ClientCallResult,
  ClientRequest,
} from '../../packages/contract/src/index.js';
import type { Io } from '../../packages/cli/src/context.js';
import { styleFor } from '../../packages/cli/src/style.js';
import { localTools, type Asker, type LocalTools } from '../../packages/cli/src/tools.js';
import { DEFAULT_MAX_FILE_BYTES } from '../../packages/cli/src/tools/index.js';

/*
 * The CLI's side of confinement (src/client/cli/tools.ts): the write gate's preview goes through the
 * write's own confinement and limits; secrets and writes that run code later are asked about by name.
 */

let base: string;
let ws: string;
let outside: string;
let counter = 0;

function call(method: string, params: unknown): ClientCall {
  return { id: `c${++counter}`, method, params } as ClientCall;
}

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'cleveragents-cli-confine-')));
  ws = join(base, 'ws');
  outside = join(base, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'secret\n');
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

describe('the CLI: the write gate preview goes through the confinement and limits of the write', () => {
  let tools: LocalTools;
  let screen: string[];

  function gate(path: string, content: string): Promise<string | undefined> {
    const request = {
      type: 'cleveragents/approval-request',
      requestId: 'a1',
      subject: { kind: 'tool', toolCallId: 't1', tool: 'fs_write_text_file', args: { path, content } },
      options: ['approve', 'reject'],
    } as ApprovalRequest;
    // A preview that hangs (a FIFO) fails here, not at Jest's timeout; 20 s is generous on a loaded machine.
    return Promise.race([
      tools.gatePreview(request),
      new Promise<string>((resolve) => setTimeout(() => resolve('HUNG'), 20_000).unref()),
    ]);
  }

  beforeEach(async () => {
    screen = [];
    const err = new PassThrough() as unknown as NodeJS.WriteStream;
    err.on('data', (chunk: Buffer) => screen.push(chunk.toString()));
    const io: Io = { out: err, err, env: {}, outStyle: styleFor(err, {}), errStyle: styleFor(err, {}) };
    tools = (await localTools({ workspace: ws, sandbox: 'off' }, io, { interactive: true }))!;
  });

  afterEach(async () => {
    await tools.dispose();
  });

  it('shows the diff of a file inside', async () => {
    writeFileSync(join(ws, 'a.txt'), 'old\n');
    const preview = await gate('a.txt', 'new\n');
    expect(preview).toMatch(/^-old$/m);
    expect(preview).toMatch(/^\+new$/m);
  });

  it('shows why, not the file, for a path outside or a symlink out', async () => {
    symlinkSync(join(outside, 'secret.txt'), join(ws, 'link.txt'));
    for (const [path, reason] of [
      [join(outside, 'secret.txt'), 'OUTSIDE_WORKSPACE'],
      ['link.txt', 'SYMLINK_ESCAPES_WORKSPACE'],
    ]) {
      const preview = await gate(path, 'x\n');
      expect(preview).toContain(reason);
      expect(preview).not.toContain('secret\n');
      expect(preview).not.toMatch(/^-secret/m);
    }
  });

  it('does not hang on a FIFO', async () => {
    const fifo = join(ws, 'fifo');
    execFileSync('mkfifo', [fifo]);
    try {
      expect(await gate('fifo', 'x\n')).toContain('NOT_A_REGULAR_FILE');
    } finally {
      // A reader stuck opening the FIFO (the defect) is let go, so the worker can exit.
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // no reader waiting: nothing to let go
      }
    }
  });

  it('does not read /dev/zero, named or through a symlink', async () => {
    symlinkSync('/dev/zero', join(ws, 'zero'));
    expect(await gate('/dev/zero', 'x\n')).toContain('OUTSIDE_WORKSPACE');
    expect(await gate('zero', 'x\n')).toContain('SYMLINK_ESCAPES_WORKSPACE');
  });

  it('refuses a file or content over the size cap', async () => {
    writeFileSync(join(ws, 'big.txt'), '');
    truncateSync(join(ws, 'big.txt'), DEFAULT_MAX_FILE_BYTES + 1);
    expect(await gate('big.txt', 'x\n')).toContain('TOO_LARGE');
    expect(await gate('new.txt', 'x'.repeat(DEFAULT_MAX_FILE_BYTES + 1))).toContain('TOO_LARGE');
  });

  it('says when the write configures code that runs later', async () => {
    expect(await gate('.git/hooks/pre-commit', 'echo hi\n')).toContain('configures code that runs later');
  });
});

describe('the CLI: questions about secrets and code run later', () => {
  let screen: string[];
  let asked: number;

  async function cli(interactive: boolean, allowWrites = false): Promise<LocalTools> {
    const err = new PassThrough() as unknown as NodeJS.WriteStream;
    err.on('data', (chunk: Buffer) => screen.push(chunk.toString()));
    const io: Io = { out: err, err, env: {}, outStyle: styleFor(err, {}), errStyle: styleFor(err, {}) };
    return (await localTools({ workspace: ws, sandbox: 'off', allowWrites }, io, { interactive }))!;
  }

  async function runOne(tools: LocalTools, call: ClientCall, answer: boolean): Promise<ClientCallResult> {
    const asker: Asker = <T>(): Promise<T> => {
      asked++;
      return Promise.resolve(answer as T);
    };
    const request = { type: 'cleveragents/client-request', requestId: 'r', requests: [call] } as ClientRequest;
    const [result] = await tools.run(request, asker);
    return result;
  }

  beforeEach(() => {
    screen = [];
    asked = 0;
    mkdirSync(join(ws, 'keys'));
    writeFileSync(join(ws, 'keys', 'id_rsa'), 'PRIVATE KEY\n');
  });

  it('a read of a secret names the file and its kind, and reads on a yes', async () => {
    const tools = await cli(true);
    const result = await runOne(tools, call('fs/read_text_file', { path: 'keys/id_rsa' }), true);
    await tools.dispose();
    expect(result.result).toEqual({ content: 'PRIVATE KEY\n' });
    expect(asked).toBe(1);
    expect(screen.join('')).toContain('keys/id_rsa');
    expect(screen.join('')).toContain('an SSH private key');
  });

  it('non-interactive runs refuse secrets and code run later, even with --allow-writes', async () => {
    const tools = await cli(false, true);
    const read = await runOne(tools, call('fs/read_text_file', { path: 'keys/id_rsa' }), true);
    const hook = await runOne(tools, call('fs/write_text_file', { path: '.git/hooks/pre-commit', content: 'x' }), true);
    const ordinary = await runOne(tools, call('fs/write_text_file', { path: 'a.txt', content: 'x' }), true);
    await tools.dispose();
    expect(read.error?.data).toMatchObject({ reason: 'READ_DECLINED', secret: 'an SSH private key' });
    expect(hook.error?.data).toMatchObject({ reason: 'WRITE_DECLINED', runsCode: true });
    expect(ordinary.error).toBeUndefined();
    expect(asked).toBe(0);
  });

  it('a write that runs code later is asked about, saying so, even when approved at its gate', async () => {
    const tools = await cli(true);
    tools.preApprove('fs_write_text_file', { path: '.envrc', content: 'curl x | sh\n' });
    const result = await runOne(tools, call('fs/write_text_file', { path: '.envrc', content: 'curl x | sh\n' }), false);
    await tools.dispose();
    expect(result.error?.data).toMatchObject({ reason: 'WRITE_DECLINED', runsCode: true });
    expect(asked).toBe(1);
    expect(screen.join('')).toContain('configures code that runs later');
    expect(existsSync(join(ws, '.envrc'))).toBe(false);
  });
});
