import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { ApprovalRequest, ClientCallResult, ClientRequest } from '../../packages/contract/src/index.js';
import type { Io } from '../../packages/cli/src/context.js';
import { styleFor } from '../../packages/cli/src/style.js';
import { colorDiff, localTools, tooWideWorkspace, type Asker, type LocalTools } from '../../packages/cli/src/tools.js';

/*
 * The chat's client tools (src/client/cli/tools.ts) on a real workspace: a call the user approved at
 * its gate runs unasked when it arrives, in that turn only. The user's answer to a question is given by
 * `ask`, as the chat hands its questions over.
 */

let ws: string;
let tools: LocalTools;
let asked: string[];

/** The user declines every question put to them. */
const decline: Asker = <T>(): Promise<T> => {
  asked.push('question');
  return Promise.resolve(false as T);
};

/** Runs a request of one call, the user declining every question, and returns that call's result. */
async function runOne(request: ClientRequest): Promise<ClientCallResult> {
  const results = await tools.run(request, decline);
  expect(results).toHaveLength(1);
  return results[0];
}

function writeRequest(path: string, content: string): ClientRequest {
  return {
    type: 'cleveragents/client-request',
    requestId: 'r1',
    requests: [{ id: 'c1', method: 'fs/write_text_file', params: { path, content } }],
  } as ClientRequest;
}

beforeEach(async () => {
  ws = realpathSync(mkdtempSync(join(tmpdir(), 'cleveragents-cli-tools-')));
  asked = [];
  const err = new PassThrough() as unknown as NodeJS.WriteStream;
  const io: Io = { out: err, err, env: {}, outStyle: styleFor(err, {}), errStyle: styleFor(err, {}) };
  tools = (await localTools({ workspace: ws, sandbox: 'off' }, io, { interactive: true }))!;
});

afterEach(async () => {
  await tools.dispose();
  rmSync(ws, { recursive: true, force: true });
});

describe('chat tools: approvals given at a gate', () => {
  it('a write approved at its gate runs unasked when it arrives', async () => {
    const file = join(ws, 'a.txt');
    tools.preApprove('fs_write_text_file', { path: file, content: 'A\n' });
    const result = await runOne(writeRequest(file, 'A\n'));
    expect(result.error).toBeUndefined();
    expect(asked).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe('A\n');
  });

  it('a different write is asked about', async () => {
    const file = join(ws, 'b.txt');
    tools.preApprove('fs_write_text_file', { path: file, content: 'B\n' });
    const result = await runOne(writeRequest(file, 'other\n'));
    expect(asked).toEqual(['question']);
    expect(result.error?.data).toEqual(expect.objectContaining({ reason: 'WRITE_DECLINED' }));
    expect(existsSync(file)).toBe(false);
  });

  it('an approval whose call never came ends with its turn: the same write later is asked about', async () => {
    const file = join(ws, 'c.txt');
    tools.preApprove('fs_write_text_file', { path: file, content: 'C\n' });
    tools.preApprove('terminal_create', { command: 'touch', args: [join(ws, 'ran')] });
    tools.endTurn();
    const write = await runOne(writeRequest(file, 'C\n'));
    expect(write.error?.data).toEqual(expect.objectContaining({ reason: 'WRITE_DECLINED' }));
    expect(existsSync(file)).toBe(false);
    const create = await runOne({
      type: 'cleveragents/client-request',
      requestId: 'r2',
      requests: [{ id: 'c2', method: 'terminal/create', params: { command: 'touch', args: [join(ws, 'ran')] } }],
    } as ClientRequest);
    expect(create.error?.data).toEqual(expect.objectContaining({ reason: 'COMMAND_DECLINED' }));
    expect(asked).toEqual(['question', 'question']);
    expect(existsSync(join(ws, 'ran'))).toBe(false);
  });
});

function createRequest(params: Record<string, unknown>): ClientRequest {
  return {
    type: 'cleveragents/client-request',
    requestId: 'r3',
    requests: [{ id: 'c3', method: 'terminal/create', params }],
  } as ClientRequest;
}

describe('chat tools: a command approved at its gate', () => {
  const approved = () => ({ command: 'touch', args: [join(ws, 'ran')], env: [{ name: 'CI', value: '1' }], cwd: 'sub' });

  beforeEach(() => mkdirSync(join(ws, 'sub')));

  it('runs unasked when exactly that command comes: arguments, variables and folder', async () => {
    tools.preApprove('terminal_create', approved());
    const result = await runOne(createRequest(approved()));
    expect(result.error).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it.each([
    ['other variables', { env: [{ name: 'CI', value: '2' }] }],
    [
      'a variable more',
      {
        env: [
          { name: 'CI', value: '1' },
          { name: 'NO_COLOR', value: '1' },
        ],
      },
    ],
    ['no variables', { env: undefined }],
    ['another folder', { cwd: undefined }],
    ['other arguments', { args: ['more'] }],
  ])('is asked about again when it comes with %s', async (_, change) => {
    tools.preApprove('terminal_create', approved());
    const result = await runOne(
      createRequest({
        ...approved(),
        ...change,
        ...('args' in change ? { args: [join(ws, 'ran'), ...change.args] } : {}),
      }),
    );
    expect(asked).toEqual(['question']);
    expect(result.error?.data).toEqual(expect.objectContaining({ reason: 'COMMAND_DECLINED' }));
    expect(existsSync(join(ws, 'ran'))).toBe(false);
  });
});

describe('chat tools: a follow-up of a command the person allowed', () => {
  /** A tool gate as a server puts it up. */
  const gate = (tool: string, method: string | undefined, args: Record<string, unknown>): ApprovalRequest =>
    ({
      type: 'cleveragents/approval-request',
      requestId: 'g1',
      subject: { kind: 'tool', toolCallId: 't1', tool, ...(method ? { method } : {}), args },
      options: ['approve', 'reject'],
    }) as ApprovalRequest;

  /** A terminal made the way the chat makes one: approved at its gate, then created. */
  async function allowedTerminal(): Promise<string> {
    tools.preApprove('terminal_create', { command: 'true' });
    const made = await runOne(createRequest({ command: 'true' }));
    expect(made.error).toBeUndefined();
    return (made.result as { terminalId: string }).terminalId;
  }

  it.each([
    ['terminal_wait_for_exit', 'terminal/wait_for_exit'],
    ['terminal_output', 'terminal/output'],
    ['terminal_kill', 'terminal/kill'],
    ['terminal_release', 'terminal/release'],
  ])('%s of a terminal this run made passes its gate unasked, and after its release too', async (tool, method) => {
    const terminalId = await allowedTerminal();
    expect(tools.isAllowedFollowUp(gate(tool, method, { terminalId }))).toBe(true);
    await runOne({
      type: 'cleveragents/client-request',
      requestId: 'r4',
      requests: [{ id: 'c4', method: 'terminal/release', params: { terminalId } }],
    } as ClientRequest);
    expect(tools.isAllowedFollowUp(gate(tool, method, { terminalId }))).toBe(true);
    expect(asked).toEqual([]);
  });

  it.each([
    ['another terminal', 'terminal_output', 'terminal/output', { terminalId: 'term_0000000000000000' }],
    ['a command dressed as a follow-up', 'terminal_output', 'terminal/create', { command: 'touch' }],
    ['a command named by a follow-up', 'terminal_output', 'terminal/create', undefined],
    ['a follow-up without its method', 'terminal_output', undefined, undefined],
    ['a method of another follow-up', 'terminal_output', 'terminal/kill', undefined],
    ['the command itself', 'terminal_create', 'terminal/create', undefined],
    ['more than a terminal id', 'terminal_output', 'terminal/output', { command: 'touch' }],
    ['a tool name of the prototype', 'constructor', 'terminal/output', undefined],
    ['a write', 'fs_write_text_file', 'fs/write_text_file', undefined],
  ])('%s is not taken for one: it is asked', async (_, tool, method, args) => {
    const terminalId = await allowedTerminal();
    const given = args && 'terminalId' in args ? args : { terminalId, ...(args ?? {}) };
    expect(tools.isAllowedFollowUp(gate(tool, method, given))).toBe(false);
  });

  it('a terminal the person declined is no allowed terminal', async () => {
    const declined = await runOne(createRequest({ command: 'true' }));
    expect(declined.error?.data).toEqual(expect.objectContaining({ reason: 'COMMAND_DECLINED' }));
    expect(tools.isAllowedFollowUp(gate('terminal_output', 'terminal/output', { terminalId: 'term_1' }))).toBe(false);
  });
});

describe('chat tools: the workspace', () => {
  it.each([
    ['/', '/home/u', 'the root of the file system'],
    ['/home/u', '/home/u', 'your home folder'],
    ['/home', '/home/u', 'a folder above your home folder'],
    ['/tmp', '/home/u', 'a top-level system folder'],
    ['/srv', '/home/u', 'a top-level system folder'],
    ['/home/u/project', '/home/u', undefined],
    ['/tmp/build', '/home/u', undefined],
  ])('%s with home %s is %s', (root, home, expected) => {
    expect(tooWideWorkspace(root, home)).toBe(expected);
  });

  it('is offered when named explicitly even if it is the home folder, with a warning', async () => {
    const err = new PassThrough();
    let said = '';
    err.on('data', (chunk: Buffer) => (said += String(chunk)));
    const stream = err as unknown as NodeJS.WriteStream;
    const io: Io = {
      out: stream,
      err: stream,
      env: { HOME: ws },
      outStyle: styleFor(stream, {}),
      errStyle: styleFor(stream, {}),
    };
    const explicit = await localTools({ workspace: ws, sandbox: 'off' }, io, { interactive: true });
    expect(explicit?.workspace).toBe(ws);
    await explicit?.dispose();
    expect(said).toContain('is your home folder');
  });
});

describe('chat tools: a write’s diff on the screen', () => {
  it('shows the content’s control sequences as escapes, keeping tabs and the client’s colours', () => {
    const diff = '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+\u001b]52;c;cm0=\u0007new\r\u001b[2K\tok\u202e';
    const shown = colorDiff(diff, styleFor(new PassThrough() as unknown as NodeJS.WriteStream, { FORCE_COLOR: '1' }));
    expect(shown).toContain('\\e]52;c;cm0=\\x07new\\r\\e[2K\tok\\u{202e}');
    // The only escapes left are the client's own SGR colours.
    expect(shown.replace(/\u001b\[[0-9;]*m/g, '')).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(shown).toMatch(/\u001b\[32m/);
  });
});
