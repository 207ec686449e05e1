import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from '../../packages/client/src/node.js';
import { runTurn, type TurnOutcome } from '../../packages/client/src/conversation/turn.js';
import type { ApprovalRequest, ClientRequest } from '../../packages/contract/src/index.js';
import { ClientToolRunner } from '../../packages/cli/src/tools/index.js';
import {
  SCENARIO_TEXT,
  clientScenarioReply,
  scenarioServerEnv,
  scenarioWorkspace,
  upperPath,
} from '../support/client-scenario.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint, scenarioMessagesOf, type EndpointAnswer } from '../support/openai-endpoint.js';
import { startServer, type TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The server's gate and a command's follow-ups, through the real server (local backend, PostgreSQL) and
 * the client's real tool runner (commands on a real pty, in a temporary workspace): a terminal the person
 * allowed is waited for, read and released without another approval; a follow-up naming any other
 * terminal is still asked. The model is scripted (test/support/client-scenario.ts): plan, read, write,
 * `wc -c` in a terminal, its exit, output and release, the plan completed, the answer. A message starting
 * "Forge" plays an agent that names terminals it never made: a command, then a follow-up of a made-up id,
 * then (if still asked for) one of the terminal it made; one starting "Peek <id>" reads terminal `<id>`.
 */

const USAGE = { promptTokens: 10, completionTokens: 2 };
const FORGED = 'term_000000000000forged';

function reply(body: Record<string, unknown>): EndpointAnswer {
  const messages = scenarioMessagesOf(body);
  const lastUser = messages.findLastIndex((m) => m.role === 'user');
  const text = messages[lastUser]?.content ?? '';
  if (!text.startsWith('Forge') && !text.startsWith('Peek')) return clientScenarioReply(USAGE)(body);
  const id = `call-${messages.filter((m) => m.role === 'assistant').length + 1}`;
  const since = messages.slice(lastUser + 1);
  const calls = since.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []));
  const results = new Map(since.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m]));
  const call = (name: string, args: Record<string, unknown>): EndpointAnswer => ({
    toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
    usage: USAGE,
  });
  const say = (words: string): EndpointAnswer => ({ tokens: [words], usage: USAGE });
  if (text.startsWith('Peek')) {
    return calls.length === 0 ? call('terminal_output', { terminalId: text.split(' ')[1] }) : say('Peeked.');
  }
  const created = calls.find((c) => c.name === 'terminal_create');
  if (!created) return call('terminal_create', { command: 'echo', args: ['forge-test'] });
  const made = results.get(created.id);
  if (made?.status !== 'success') {
    // The command was not allowed: a follow-up of a terminal it guesses at.
    return calls.length === 1 ? call('terminal_wait_for_exit', { terminalId: FORGED }) : say('Gave up.');
  }
  const terminalId = String((JSON.parse(made.content) as { terminalId?: unknown }).terminalId);
  const last = calls.at(-1)!;
  if (last.name === 'terminal_create') return call('terminal_output', { terminalId: FORGED });
  if (last.args.terminalId === FORGED) return call('terminal_wait_for_exit', { terminalId });
  return say(`Made ${terminalId}.`);
}

/** One message's turn, played as `cleveragents chat` plays it, minus the person: what each gate asked. */
interface Played {
  outcome: TurnOutcome;
  /** Each gate: `plan`, or the tool and the terminal it names. */
  gates: string[];
  /** Each client call, as `method terminalId?`. */
  calls: string[];
}

describe('a command and its follow-ups at the server gate (PostgreSQL)', () => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let root: string;

  beforeAll(async () => {
    model = await OpenAiCompatibleEndpoint.start(reply);
    db = await createTestDatabase();
    server = await startServer(db, scenarioServerEnv(model));
    root = realpathSync(await mkdtemp(`${tmpdir()}/ca-follow-ups-`));
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  /**
   * Sends `text` in a new session under `profile` (the actor's own when absent, or `session` to go on in
   * one), approving every gate unless `decide` says otherwise; the calls run on a real runner.
   */
  async function play(
    text: string,
    options: {
      profile?: string;
      session?: string;
      workspace: string;
      decide?: (request: ApprovalRequest) => 'approve' | 'reject';
    },
  ): Promise<Played & { session: string }> {
    const client = await connect({ server: server.baseUrl });
    const runner = new ClientToolRunner({
      workspace: options.workspace,
      autoApproveWrites: true,
      autoApproveCommands: true,
      sandbox: 'off',
    });
    const gates: string[] = [];
    const calls: string[] = [];
    try {
      const session =
        options.session ??
        String((await client.sessions.create(options.profile ? { profile: options.profile } : {})).sessionId);
      const outcome = await runTurn(
        (request) => client.stream(request),
        { text, contextId: session, capabilities: runner.capabilities() },
        {
          decide: (request) => {
            const s = request.subject;
            gates.push(s.kind === 'tool' ? [s.tool, s.args.terminalId].filter(Boolean).join(' ') : s.kind);
            return Promise.resolve({ decision: options.decide?.(request) ?? 'approve' });
          },
          runClientCalls: (request: ClientRequest) => {
            for (const c of request.requests) {
              calls.push([c.method, c.params.terminalId].filter(Boolean).join(' '));
            }
            return runner.runAll(request.requests);
          },
        },
      );
      return { outcome, gates, calls, session };
    } finally {
      await runner.dispose();
      await client.close();
    }
  }

  it.each(['supervised', 'manual'])(
    'under %s: the command is asked once; its wait, output and release run unasked',
    async (profile) => {
      const { dir, file } = await scenarioWorkspace(root, profile);
      const played = await play(`Uppercase ${file}`, { profile, workspace: dir });
      const terminal = /^terminal\/wait_for_exit (\S+)$/.exec(played.calls[3] ?? '')?.[1];
      expect({ gates: played.gates, calls: played.calls, state: played.outcome.state }).toEqual({
        gates: ['plan', 'fs_read_text_file', 'fs_write_text_file', 'terminal_create'],
        calls: [
          'fs/read_text_file',
          'fs/write_text_file',
          'terminal/create',
          `terminal/wait_for_exit ${terminal}`,
          `terminal/output ${terminal}`,
          `terminal/release ${terminal}`,
        ],
        state: 'completed',
      });
      expect(terminal).toMatch(/^term_/);
      expect(await readFile(upperPath(file), 'utf8')).toBe(SCENARIO_TEXT.toUpperCase());
      expect(played.outcome.answer).toBe(
        `Done: wrote ${upperPath(file)}; wc says ${SCENARIO_TEXT.length} ${upperPath(file)}.`,
      );
    },
    60000,
  );

  it.each([
    ['the built-in guarded profile', 'guarded'],
    ["a new namespace's default actor (guarded)", undefined],
  ])(
    'under %s: the plan and the write are asked; the read, the command and its follow-ups run',
    async (_, profile) => {
      const { dir, file } = await scenarioWorkspace(root, `guarded-${profile ?? 'default'}`);
      const played = await play(`Uppercase ${file}`, { profile, workspace: dir });
      expect({ gates: played.gates, calls: played.calls.length, state: played.outcome.state }).toEqual({
        gates: ['plan', 'fs_write_text_file'],
        calls: 6,
        state: 'completed',
      });
      expect(await readFile(upperPath(file), 'utf8')).toBe(SCENARIO_TEXT.toUpperCase());
    },
    60000,
  );

  it('a follow-up naming a terminal the agent never made is asked, and rejected never runs; its own terminal is not', async () => {
    const { dir } = await scenarioWorkspace(root, 'forged');
    const played = await play('Forge a terminal', {
      profile: 'supervised',
      workspace: dir,
      decide: (request) =>
        request.subject.kind === 'tool' && request.subject.args.terminalId === FORGED ? 'reject' : 'approve',
    });
    const made = /^Made (term_\w+)\.$/.exec(played.outcome.answer)?.[1];
    expect({ gates: played.gates, calls: played.calls, state: played.outcome.state }).toEqual({
      gates: ['terminal_create', `terminal_output ${FORGED}`],
      calls: ['terminal/create', `terminal/wait_for_exit ${made}`],
      state: 'completed',
    });
    expect(made).toBeDefined();
  }, 60000);

  it('after a command rejected at its gate, a follow-up of a guessed terminal is asked', async () => {
    const { dir } = await scenarioWorkspace(root, 'rejected');
    const played = await play('Forge a terminal', {
      profile: 'supervised',
      workspace: dir,
      decide: () => 'reject',
    });
    expect({ gates: played.gates, calls: played.calls, answer: played.outcome.answer }).toEqual({
      gates: ['terminal_create', `terminal_wait_for_exit ${FORGED}`],
      calls: [],
      answer: 'Gave up.',
    });
  }, 60000);

  it("a terminal allowed in one session is asked about in another; in its own, a later message's follow-up is not", async () => {
    const { dir } = await scenarioWorkspace(root, 'sessions');
    const first = await play('Forge a terminal', {
      profile: 'supervised',
      workspace: dir,
      decide: (request) =>
        request.subject.kind === 'tool' && request.subject.args.terminalId === FORGED ? 'reject' : 'approve',
    });
    const made = /^Made (term_\w+)\.$/.exec(first.outcome.answer)?.[1];
    expect(made).toBeDefined();
    const other = await play(`Peek ${made}`, { profile: 'supervised', workspace: dir, decide: () => 'reject' });
    expect({ gates: other.gates, calls: other.calls }).toEqual({ gates: [`terminal_output ${made}`], calls: [] });
    // The same session, a new message (a new task): still the terminal the person allowed.
    const again = await play(`Peek ${made}`, { session: first.session, workspace: dir, decide: () => 'reject' });
    expect({ gates: again.gates, calls: again.calls }).toEqual({ gates: [], calls: [`terminal/output ${made}`] });
  }, 90000);
});
