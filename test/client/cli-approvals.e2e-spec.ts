import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EXIT } from '../../packages/cli/src/exit-codes.js';
import { ANSI, expectExit, runCli, type CliHome } from '../support/cli.js';
import { cliRig, type CliRig } from '../support/cli-rig.js';
import { extensionCalls, rawCall, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * `cleveragents approvals` (docs/client.md#approvals): the built CLI, as a child process with pipes, against a
 * real server (embedded database, the local backend on a scripted model). The model writes a plan under the
 * `manual` profile, so each task waits at its plan gate; the CLI lists, shows and answers the approvals from
 * outside the task's stream. One plan entry carries an escape sequence: what reaches the screen has none.
 */

type Json = Record<string, any>;

const ENTRIES = [
  { content: 'Read the notes', priority: 'high', status: 'pending' },
  { content: 'Summarise them \u001b[2J\u001b]0;pwned\u0007quietly', priority: 'low', status: 'pending' },
];

describe('cleveragents approvals against a CleverAgents server', () => {
  let rig: CliRig;
  let server: TestServer;
  let home: CliHome;
  const { ok } = extensionCalls(() => server);

  const cli = (args: string[]) => runCli(['--server', server.baseUrl, ...args], { home });

  /** A task waiting at its plan gate, in a session of its own: its ids and its approval's. */
  async function gate(profile = 'manual'): Promise<{ taskId: string; approvalId: string }> {
    const { sessionId } = await ok('session/create', { profile });
    const message = { messageId: `m-${sessionId}`, role: 'ROLE_USER', contextId: sessionId, parts: [{ text: 'go' }] };
    const answer = await rawCall(
      server.endpoint,
      { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message } },
      { 'A2A-Version': '1.0' },
    );
    const task = answer.json.result.task;
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const request = task.status.message.parts.find((p: Json) => p.data?.type === 'cleveragents/approval-request');
    return { taskId: task.id, approvalId: request.data.approvalId };
  }

  const stateOf = async (taskId: string): Promise<string> =>
    (
      await rawCall(
        server.endpoint,
        { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: taskId } },
        { 'A2A-Version': '1.0' },
      )
    ).json.result.status.state;

  beforeAll(async () => {
    rig = await cliRig((body) =>
      (body.messages as Json[]).some((m) => m.role === 'tool')
        ? { tokens: ['Done', '.'] }
        : { toolCalls: [{ id: 'plan-1', name: 'update_plan', arguments: JSON.stringify({ entries: ENTRIES }) }] },
    );
    server = rig.server;
    home = rig.home;
  }, 60000);

  afterAll(async () => {
    await ifAssigned(rig)?.close();
  });

  it('lists what waits, shows the plan without its escape sequences, approves it; a second answer fails', async () => {
    const { taskId, approvalId } = await gate();

    const list = await cli(['approvals']);
    expectExit(list, EXIT.OK);
    expect(list.stdout).toMatch(new RegExp(`^${approvalId} +pending +plan of 2 steps +anonymous `, 'm'));
    const listed = JSON.parse((await cli(['--json', 'approvals', 'list'])).stdout);
    expect(listed.items.map((a: Json) => a.approvalId)).toContain(approvalId);

    const show = await cli(['approvals', 'show', approvalId]);
    expectExit(show, EXIT.OK);
    expect(show.stdout).not.toMatch(ANSI);
    expect(show.stdout).not.toContain('\u0007');
    expect(show.stdout).toMatch(/^state: +pending$/m);
    expect(show.stdout).toContain('Read the notes');
    expect(show.stdout).toMatch(/Summarise them .*quietly/);
    const record = await ok('approval/get', { approvalId });
    expect(show.stdout).toMatch(new RegExp(`^sha-256: +${record.subjectHash}$`, 'm'));
    expect(JSON.parse((await cli(['--json', 'approvals', 'show', approvalId])).stdout)).toEqual(record);

    const approve = await cli(['approvals', 'approve', approvalId]);
    expectExit(approve, EXIT.OK);
    expect(approve.stdout).toBe(`${approvalId} approved; task ${taskId} goes on\n`);
    await until(async () => (await stateOf(taskId)) === 'TASK_STATE_COMPLETED', 'the approved task to complete');
    expect(await ok('approval/get', { approvalId })).toMatchObject({ state: 'approved', channel: 'method' });

    const again = await cli(['--json', 'approvals', 'approve', approvalId]);
    expectExit(again, EXIT.FAILED);
    expect(JSON.parse(again.stdout)).toEqual({
      error: expect.objectContaining({ code: -32004, reason: 'ALREADY_ANSWERED' }),
    });
    const none = await cli(['approvals']);
    expect(none.stdout).not.toContain(approvalId);
  });

  it('shows the time a gate has left, and once past it (keep-waiting) how long it is overdue', async () => {
    await ok('registry/create', {
      kind: 'profile',
      name: 'hour',
      spec: { gate: 'manual', approvalTimeout: { seconds: 3600, onTimeout: 'keep-waiting' } },
    });
    await ok('registry/create', {
      kind: 'profile',
      name: 'second',
      spec: { gate: 'manual', approvalTimeout: { seconds: 1, onTimeout: 'keep-waiting' } },
    });
    const hour = await gate('hour');
    const record = await ok('approval/get', { approvalId: hour.approvalId });
    const list = await cli(['approvals']);
    expectExit(list, EXIT.OK);
    expect(list.stdout).toMatch(/ TIMEOUT$/m);
    expect(list.stdout).toMatch(new RegExp(`^${hour.approvalId} +pending .* (59m \\d+s|1h 0m) left$`, 'm'));
    const show = await cli(['approvals', 'show', hour.approvalId]);
    expect(show.stdout).toMatch(
      new RegExp(
        `^expires: +${record.expiresAt.replace(/\.\d+Z$/, 'Z')} \\((59m \\d+s|1h 0m) left, then keeps waiting\\)$`,
        'm',
      ),
    );

    const second = await gate('second');
    // Its second runs out in real time (the CLI is a process of its own): then it is shown overdue, still pending.
    await until(
      async () =>
        new RegExp(`^${second.approvalId} +pending .* overdue \\d+s$`, 'm').test((await cli(['approvals'])).stdout),
      'the approval shown overdue',
    );
    const overdue = await cli(['approvals', 'show', second.approvalId]);
    expect(overdue.stdout).toMatch(/^expires: +\S+ \(overdue \d+s, keeps waiting\)$/m);
    expect(overdue.stdout).toMatch(/^state: +pending$/m);

    // Without a timeout: it waits until answered.
    const plain = await gate();
    const shown = await cli(['approvals', 'show', plain.approvalId]);
    expect(shown.stdout).toMatch(/^expires: +never \(waits until answered\)$/m);
    for (const { approvalId } of [hour, second, plain]) {
      await ok('approval/answer', { approvalId, decision: 'reject' });
    }
  });

  it('deny --reason rejects the plan with the reason; the task ends rejected', async () => {
    const { taskId, approvalId } = await gate();
    const deny = await cli(['--json', 'approvals', 'deny', approvalId, '--reason', 'not this week']);
    expectExit(deny, EXIT.OK);
    expect(JSON.parse(deny.stdout)).toMatchObject({ approvalId, state: 'rejected', reason: 'not this week' });
    await until(async () => (await stateOf(taskId)) === 'TASK_STATE_REJECTED', 'the denied task to end rejected');
    const rejected = await cli(['approvals', '--state', 'rejected']);
    expect(rejected.stdout).toMatch(new RegExp(`^${approvalId} +rejected `, 'm'));
  });
});
