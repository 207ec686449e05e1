import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { ClientCallResult, ClientRequest } from '../../src/contract/index.js';
import type { Io } from '../../src/client/cli/context.js';
import { styleFor } from '../../src/client/cli/style.js';
import { localTools, type Asker, type LocalTools } from '../../src/client/cli/tools.js';

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
