import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClientCall } from '../../packages/contract/src/index.js';
import { ClientToolRunner, type ClientToolRunnerOptions } from '../../packages/cli/src/tools/index.js';
import { startTestTracing, type TestTracing } from '../support/tracing.js';

/*
 * The `execute_tool <tool>` spans of client-side calls, with real SDK spans in process: the decision and the
 * call's id always; arguments and results only with content capture, a secret file's content and variables'
 * values never.
 */

const NOTE = 'meeting notes, not for traces';
const SECRET = 'API_KEY=sk-live-0123456789';

describe('execute_tool spans', () => {
  let tracing: TestTracing;
  let ws: string;
  let runner: ClientToolRunner | undefined;

  beforeAll(() => {
    tracing = startTestTracing();
  });
  afterAll(() => tracing.stop());

  beforeEach(() => {
    tracing.reset();
    ws = mkdtempSync(join(tmpdir(), 'tool-spans-'));
    writeFileSync(join(ws, 'notes.txt'), NOTE);
    writeFileSync(join(ws, '.env'), SECRET);
  });
  afterEach(async () => {
    await runner?.dispose();
    rmSync(ws, { recursive: true, force: true });
  });

  const make = (options: ClientToolRunnerOptions): ClientToolRunner =>
    (runner = new ClientToolRunner({
      workspace: ws,
      sandbox: 'off',
      baseEnv: { PATH: process.env.PATH, HOME: ws },
      ...options,
    }));
  const call = (id: string, method: string, params: unknown) => ({ id, method, params }) as ClientCall;
  const span = (tool: string) => {
    const [found] = tracing.named(`execute_tool ${tool}`);
    expect(found).toBeDefined();
    return found;
  };

  it('by default: tool, call id and decision; no path, content, command line or variable', async () => {
    const tools = make({ autoApproveWrites: true, autoApproveCommands: true, allowEnv: ['GREETING'] });
    await tools.run(call('r1', 'fs/read_text_file', { path: 'notes.txt' }));
    await tools.run(call('w1', 'fs/write_text_file', { path: 'out.txt', content: NOTE }));
    await tools.run(
      call('t1', 'terminal/create', {
        command: 'echo',
        args: ['private-arg'],
        env: [{ name: 'GREETING', value: 'hidden-value' }],
      }),
    );
    expect(span('fs_read_text_file').attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'fs_read_text_file',
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.call.id': 'r1',
      'cleveragents.tool.decision': 'allowed',
    });
    expect(span('fs_write_text_file').attributes['cleveragents.tool.decision']).toBe('allowed');
    expect(span('terminal_create').attributes).toMatchObject({
      'cleveragents.tool.decision': 'allowed',
      'cleveragents.tool.sandboxed': false,
    });
    const recorded = JSON.stringify(tracing.spans().map((s) => [s.attributes, s.events, s.status]));
    for (const text of [ws, 'notes.txt', 'out.txt', NOTE, 'echo', 'private-arg', 'hidden-value']) {
      expect({ text, found: recorded.includes(text) }).toEqual({ text, found: false });
    }
  });

  it('asked, denied and refused calls say so, with the reason as the error type', async () => {
    const tools = make({ confirmRead: () => true, confirmWrite: () => false });
    await tools.run(call('r2', 'fs/read_text_file', { path: '.env' }));
    await tools.run(call('w2', 'fs/write_text_file', { path: 'out.txt', content: 'x' }));
    await tools.run(call('r3', 'fs/read_text_file', { path: '../outside.txt' }));
    expect(
      tracing.named('execute_tool fs_read_text_file').map((s) => s.attributes['cleveragents.tool.decision']),
    ).toEqual(['asked', 'denied']);
    expect(span('fs_write_text_file').attributes).toMatchObject({
      'cleveragents.tool.decision': 'denied',
      'error.type': 'WRITE_DECLINED',
    });
  });

  it('with content capture: arguments and results, but never a secret file or a variable value', async () => {
    const tools = make({
      confirmRead: () => true,
      autoApproveCommands: true,
      allowEnv: ['GREETING'],
      traceContent: true,
    });
    await tools.run(call('r4', 'fs/read_text_file', { path: 'notes.txt' }));
    await tools.run(call('r5', 'fs/read_text_file', { path: '.env' }));
    await tools.run(
      call('t2', 'terminal/create', {
        command: 'echo',
        args: ['shown'],
        env: [{ name: 'GREETING', value: 'hidden-value' }],
      }),
    );
    const [plain, secret] = tracing.named('execute_tool fs_read_text_file').map((s) => s.attributes);
    expect(plain['gen_ai.tool.call.arguments']).toContain('notes.txt');
    expect(plain['gen_ai.tool.call.result']).toContain(NOTE);
    expect(secret['gen_ai.tool.call.arguments']).toContain('.env');
    expect(secret['gen_ai.tool.call.result']).toBe('{"content":"[redacted]"}');
    const terminal = span('terminal_create').attributes['gen_ai.tool.call.arguments'];
    expect(terminal).toContain('shown');
    expect(terminal).toContain('GREETING');
    expect(terminal).not.toContain('hidden-value');
    expect(JSON.stringify(tracing.spans().map((s) => s.attributes))).not.toContain('sk-live');
  });
});
