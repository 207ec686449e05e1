import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '../../packages/client/src/node.js';
import { runTurn } from '../../packages/client/src/conversation/turn.js';
import { cliRig, type CliRig } from '../support/cli-rig.js';
import { runCli, terminalEnv } from '../support/cli.js';
import { clientScenarioReply, upperPath } from '../support/client-scenario.js';
import { scenarioMessagesOf, type EndpointAnswer } from '../support/openai-endpoint.js';
import { CLI_BIN, KEYS, TerminalSession } from '../support/terminal.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * Picking a session up in `cleveragents chat --session ID` on a real pseudo-terminal, against the real
 * server (local backend, the scripted client scenario): the last ten turns shown (made safe, the hostile
 * one too) with a line counting the earlier ones, the plan gate the last task waits at asked in place and
 * the task carried on to its end; `/title`, `/sessions` and `/sessions N` to go to another session; and
 * `sessions rename` with pipes.
 */

/** A message starting "Echo" is echoed back; one saying "hostile" answers with escape sequences. */
function reply(body: Record<string, unknown>): EndpointAnswer {
  const last = scenarioMessagesOf(body).findLast((m) => m.role === 'user')?.content ?? '';
  if (last.includes('hostile')) {
    return { tokens: ['\u001b]52;c;cHduZWQ=\u0007', '\u001b[2J\u001b[H', 'calm ', '\u001b[31mred\u001b[0m', ' end'] };
  }
  if (last.startsWith('Echo')) return { tokens: [`heard(${last})`] };
  return clientScenarioReply()(body);
}

describe('cleveragents chat picks a session up (embedded)', () => {
  let rig: CliRig;
  let workspace: string;
  let sessionId: string;
  let otherId: string;
  let toolsId: string;
  let notes: string;
  let toolNotes: string;

  beforeAll(async () => {
    rig = await cliRig(reply);
    workspace = mkdtempSync(join(rig.home.dir, 'workspace-'));
    notes = join(workspace, 'notes.txt');
    writeFileSync(notes, 'hello notes\nsecond line\n');
    const client = await connect({ server: rig.server.baseUrl });
    try {
      const stream = (request: Parameters<typeof client.stream>[0]) => client.stream(request);
      sessionId = String((await client.sessions.create({ profile: 'guarded' })).sessionId);
      for (let n = 0; n < 11; n++) {
        const text = n === 5 ? 'Echo hostile please' : `Echo n${String(n).padStart(2, '0')}`;
        expect((await runTurn(stream, { text, contextId: sessionId })).state).toBe('completed');
      }
      // The twelfth turn rests at the plan's gate: nobody decides it here.
      const capabilities = { fs: { read: true, write: true }, terminal: true };
      const waiting = await runTurn(
        stream,
        { text: `Uppercase ${notes}`, contextId: sessionId, capabilities },
        { decide: () => Promise.resolve(undefined) },
      );
      expect(waiting).toMatchObject({ state: 'input-required', unanswered: 'approval' });
      // A task left waiting on this client (its read), under a profile that gates nothing.
      toolNotes = join(workspace, 'tool-notes.txt');
      writeFileSync(toolNotes, 'tool notes\n');
      toolsId = String((await client.sessions.create({ profile: 'autonomous' })).sessionId);
      const onClient = await runTurn(stream, { text: `Uppercase ${toolNotes}`, contextId: toolsId, capabilities });
      expect(onClient).toMatchObject({ state: 'input-required', unanswered: 'client-request' });
      otherId = String((await client.sessions.create({})).sessionId);
      await runTurn(stream, { text: 'Echo other session', contextId: otherId });
    } finally {
      await client.close();
    }
  }, 90000);

  afterAll(async () => {
    await ifAssigned(rig)?.close();
  });

  it('shows the last ten turns safely, asks the waiting gate in place, and goes on to the end', async () => {
    const chat = TerminalSession.start(
      process.execPath,
      [CLI_BIN, '--server', rig.server.baseUrl, 'chat', '--session', sessionId, '--workspace', workspace],
      { cwd: workspace, env: terminalEnv(rig.home) },
    );
    try {
      const gate = await chat.waitFor('Approve this plan?', 45000);
      expect(gate).toContain('(2 earlier turns not shown');
      expect(gate).toContain('you: Echo n02');
      expect(gate).toContain('agent: heard(Echo n10)');
      expect(gate).not.toContain('Echo n01');
      expect(gate).toContain(`you: Uppercase ${notes}`);
      expect(gate).toMatch(/agent: \]52;c;cHduZWQ=\[2J\[Hcalm \[31mred\[0m end|agent: .*calm .*end/);
      // Nothing of the hostile answer reached the terminal as a sequence: no clipboard write, no clear.
      expect(chat.output).not.toContain('\u001b]52');
      expect(chat.output).not.toContain('\u001b[2J');
      await chat.waitFor('Your decision');
      chat.write(`a${KEYS.enter}`);
      await chat.waitFor(/Allow fs_write_text_file[\s\S]*Your decision/);
      chat.write(`a${KEYS.enter}`);
      await chat.waitFor(/Run this command\?/);
      chat.write(`y${KEYS.enter}`);
      await chat.waitFor(/Done: wrote .*notes\.txt\.upper; wc says 24/, 30000);
      expect(readFileSync(upperPath(notes), 'utf8')).toBe('HELLO NOTES\nSECOND LINE\n');
      chat.write(`/plan${KEYS.enter}`);
      await chat.waitFor(/\/plan\s*\n\s*Plan .*4\/4 done/);

      chat.write(`/title Notes, resumed${KEYS.enter}`);
      await chat.waitFor('Session titled "Notes, resumed".');
      chat.write(`/sessions${KEYS.enter}`);
      const listed = await chat.waitFor(/Go to one with \/sessions N/);
      expect(listed).toMatch(new RegExp(`\\d+\\. Notes, resumed ${sessionId} · .* \\(this one\\)`));
      const number = new RegExp(`(\\d+)\\. Echo other session ${otherId}`).exec(listed)?.[1];
      expect(number).toBeDefined();
      chat.write(`/sessions ${number}${KEYS.enter}`);
      await chat.waitFor(/you: Echo other session\s*\n\s*agent: heard\(Echo other session\)/);
      chat.write(`/quit${KEYS.enter}`);
      expect((await chat.exited).exitCode).toBe(0);
    } finally {
      chat.kill();
    }
  }, 120000);

  it('a task waiting on this client: its calls run through the local tools in place, to the answer', async () => {
    const chat = TerminalSession.start(
      process.execPath,
      [CLI_BIN, '--server', rig.server.baseUrl, 'chat', '--session', toolsId, '--workspace', workspace],
      { cwd: workspace, env: terminalEnv(rig.home) },
    );
    try {
      await chat.waitFor(`you: Uppercase ${toolNotes}`, 45000);
      // The read the task waited on runs here, then the turn goes on; what the client asks (a write, the
      // command) is answered yes, each question once, until the answer.
      let from = 0;
      for (;;) {
        const screen = await chat.waitFor(/Apply this write\?|Run this command\?|Done: wrote/, 30000, from);
        const rest = screen.slice(from);
        if (/Done: wrote/.test(rest)) break;
        from = from + rest.search(/Apply this write\?|Run this command\?/) + 1;
        chat.write(`y${KEYS.enter}`);
      }
      await chat.waitFor(/Done: wrote .*tool-notes\.txt\.upper; wc says 11/, 30000);
      expect(chat.text()).toContain('✓ fs_read_text_file');
      expect(readFileSync(upperPath(toolNotes), 'utf8')).toBe('TOOL NOTES\n');
      chat.write(`/quit${KEYS.enter}`);
      expect((await chat.exited).exitCode).toBe(0);
    } finally {
      chat.kill();
    }
  }, 120000);

  it('sessions rename sets the title (plain and --json); an empty one is refused naming title', async () => {
    const base = ['--server', rig.server.baseUrl, 'sessions'];
    const renamed = await runCli([...base, 'rename', otherId, 'Second one'], { home: rig.home });
    expect({ code: renamed.code, out: renamed.stdout }).toEqual({
      code: 0,
      out: `Session ${otherId} is now titled "Second one".\n`,
    });
    const json = await runCli(['--json', ...base, 'rename', otherId, 'Second, again'], { home: rig.home });
    expect(JSON.parse(json.stdout)).toMatchObject({ sessionId: otherId, title: 'Second, again' });
    const listed = await runCli([...base, 'list'], { home: rig.home });
    expect(listed.stdout).toContain('Second, again');
    const empty = await runCli([...base, 'rename', otherId, ''], { home: rig.home });
    expect(empty.code).not.toBe(0);
    expect(empty.stderr).toMatch(/title/);
  }, 60000);
});
