import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '../../packages/client/src/node.js';
import type { CreateEntryParams } from '../../packages/contract/src/index.js';
import { startBareAgent, type BareAgent } from '../support/bare-agent.js';
import { ANSI, runCli, shown, type CliHome } from '../support/cli.js';
import { clientScenarioReply, upperPath } from '../support/client-scenario.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint, scenarioMessagesOf, type EndpointAnswer } from '../support/openai-endpoint.js';
import { extensionCalls, startServer, type TestServer } from '../support/server.js';
import { DIST_MAIN } from '../support/stdio-client.js';
import { CLI_BIN, KEYS, TerminalSession, assertCliBuilt } from '../support/terminal.js';
import { until } from '../support/wait.js';
import { SPINNER_DELAY_MS } from '../../packages/cli/src/terminal.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * `cleveragents chat --plain` (the line-mode chat; test/client/chat-ui-pty.e2e-spec.ts has the interactive UI) as a person uses it: on a real pseudo-terminal (node-pty), its screen rendered by
 * a headless xterm, keystrokes in and screen text asserted. Against the real server — over HTTP, and
 * spawned by the CLI itself over stdio (--local) — whose local backend runs a scripted model
 * (test/support/client-scenario.ts): a plan, a read of the user's file, a write of it upper-cased, `wc
 * -c` in a terminal, the plan completed, the answer. The profile (the built-in `guarded`, or one that
 * gates the plan, the write and the command) decides what the server asks; reads, and the follow-ups of
 * the command allowed (its exit, output, release), run without asking. And against a bare @a2a-js/sdk agent (test/support/bare-agent.ts), whose card does not declare
 * the CleverAgents extension.
 */

const USAGE = { promptTokens: 30, completionTokens: 5 };
const SLOW_WORDS = 400;
const PROFILE: CreateEntryParams = {
  kind: 'profile',
  name: 'supervised-reads',
  spec: {
    description: 'Approve the plan, writes and commands',
    gate: 'supervised',
    allowedTools: ['fs_read_text_file'],
  },
};

/** What a "patiently" message's plan waits for: the test lets it go (`heldPlan.release()`). */
let heldPlan = held();

function held(): { released: Promise<void>; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return { released, release };
}

/**
 * The scenario, except that a message asking for something "slowly" streams a long answer, a word each 100 ms;
 * one asking for "markdown" gets a short Markdown answer; one starting "Echo" is echoed back (slowly, a
 * word each 150 ms, when it says so); one saying "patiently" says a word, then sends its plan once the test
 * lets it go (heldPlan); one
 * saying "haltingly" takes 4 s (a word each 200 ms) over its read once its plan is approved; and one starting
 * "Wait" is silent for 1 s before its first word.
 */
function reply(body: Record<string, unknown>): EndpointAnswer {
  const messages = scenarioMessagesOf(body);
  const last = messages.findLast((m) => m.role === 'user')?.content ?? '';
  if (last.startsWith('Wait')) return { tokens: ['waited ', 'enough.'], delayMs: 1000 };
  if (last.startsWith('Echo')) {
    return {
      tokens: [`heard(${last}) `, ...Array<string>(10).fill('more ')],
      delayMs: last.includes('slowly') ? 150 : 0,
    };
  }
  const sinceLast = messages.slice(messages.findLastIndex((m) => m.role === 'user') + 1);
  if (last.includes('haltingly') && sinceLast.filter((m) => m.role === 'assistant').length === 1) {
    return { ...clientScenarioReply(USAGE)(body), tokens: Array<string>(20).fill('reading '), delayMs: 200 };
  }
  if (last.includes('patiently') && !sinceLast.some((m) => m.role === 'assistant')) {
    return { ...clientScenarioReply(USAGE)(body), tokens: ['Planning. '], heldUntil: heldPlan.released };
  }
  if (last.includes('markdown')) {
    return { tokens: ['## Sum', 'mary\n\n', '- first **bold** point\n', '- second `code`\n'] };
  }
  if (last.includes('slowly')) {
    return { tokens: Array.from({ length: SLOW_WORDS }, (_, i) => `word${i} `), delayMs: 100 };
  }
  return clientScenarioReply(USAGE)(body);
}

/** How the chat ended, failing with its screen when it does not end within 30 s. */
async function exitOf(chat: TerminalSession): Promise<{ exitCode: number }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`The chat did not exit; the screen shows:\n${chat.text()}`)), 30000);
  });
  try {
    return await Promise.race([chat.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

interface Transport {
  name: 'http' | 'stdio';
  /** The CLI's connection flags. */
  args(): string[];
  /** Environment the CLI needs besides the basics (the local server inherits it). */
  env(): Record<string, string>;
}

const describeChat = (target: ReturnType<typeof databaseTargets>[number]) => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let home: string;
  let bare: BareAgent;
  const { ok } = extensionCalls(() => server);
  const modelEnv = (): Record<string, string> => ({
    CLEVERAGENTS_ACTOR_BACKEND: 'local',
    CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
    CLEVERAGENTS_MODEL: 'scenario-model',
  });

  beforeAll(async () => {
    assertCliBuilt();
    model = await OpenAiCompatibleEndpoint.start(reply);
    db = await target.create();
    server = await startServer(db, modelEnv());
    await ok('registry/create', { ...PROFILE });
    home = mkdtempSync(join(tmpdir(), 'cleveragents-chat-'));
    bare = await startBareAgent();
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
    await ifAssigned(bare)?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  /** The CLI's environment on the terminal: its own home, nothing of the test's but PATH. */
  const terminalEnv = (): Record<string, string> => ({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
    TERM: 'xterm-256color',
    LANG: 'C.UTF-8',
  });
  /** The same home, for runs with pipes. */
  const pipedHome = (): CliHome => ({
    dir: home,
    env: { HOME: home, XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'data') },
    cleanup: () => Promise.resolve(),
  });
  const dataDir = (): string => join(home, 'local-data');
  const transports: Transport[] = [
    { name: 'http', args: () => ['--server', server.baseUrl], env: () => ({}) },
    { name: 'stdio', args: () => ['--local', '--data-dir', dataDir()], env: modelEnv },
  ];

  describe.each(transports)('over $name', (transport) => {
    let workspace: string;

    beforeAll(async () => {
      workspace = mkdtempSync(join(home, `workspace-${transport.name}-`));
      if (transport.name === 'stdio') {
        // The local server's own database gets the profile through the library, as an admin would.
        const client = await connect({ local: { dataDir: dataDir(), env: modelEnv(), serverEntry: DIST_MAIN } });
        try {
          await client.registry.create(PROFILE);
        } finally {
          await client.close();
        }
      }
    }, 90000);

    function startChat(
      extra: string[] = [],
      env: Record<string, string> = {},
      profile = 'supervised-reads',
    ): TerminalSession {
      return TerminalSession.start(
        process.execPath,
        [CLI_BIN, ...transport.args(), 'chat', '--plain', '--profile', profile, '--workspace', workspace, ...extra],
        {
          cwd: workspace,
          env: { ...terminalEnv(), ...transport.env(), ...env },
        },
      );
    }

    it("a session under the built-in guarded profile: the plan and the write (a diff) at their gates, the command at the client's question; the answer and usage", async () => {
      const notes = join(workspace, 'notes.txt');
      writeFileSync(notes, 'hello notes\nsecond line\n');
      const chat = startChat([], {}, 'guarded');
      try {
        await chat.waitFor('›', 45000);
        expect(chat.text()).toContain(`workspace ${workspace}`);
        chat.write(`Uppercase ${notes}${KEYS.enter}`);

        // The plan gate: the checklist, then the choices.
        const planScreen = await chat.waitFor('Approve this plan?');
        expect(planScreen).toContain(`[ ] Read ${notes}`);
        await chat.waitFor('Your decision');
        chat.write(`a${KEYS.enter}`);

        // The read runs without asking; the write waits at its gate, shown as a diff of the new file.
        const writeScreen = await chat.waitFor('Allow fs_write_text_file?');
        expect(writeScreen).toContain(`✓ fs_read_text_file`);
        // The preview is printed after the question, and may reach the terminal in more than one chunk.
        await chat.waitFor('+HELLO NOTES');
        await chat.waitFor('+SECOND LINE');
        expect(chat.text()).toContain('--- /dev/null');
        await chat.waitFor(/Your decision[\s\S]*Allow fs_write_text_file[\s\S]*Your decision/);
        chat.write(`a${KEYS.enter}`);

        // Approved at the gate, the write is not asked about again. The profile lets the command run, and
        // the client asks before it runs, showing exactly what runs and where; its follow-ups are not asked.
        await chat.waitFor(/Run wc -c .*notes\.txt\.upper[\s\S]*Run this command\?/);
        expect(chat.text()).not.toContain('Apply this write?');
        expect(chat.text()).not.toContain('Allow terminal_create');
        expect(readFileSync(upperPath(notes), 'utf8')).toBe('HELLO NOTES\nSECOND LINE\n');
        chat.write(`y${KEYS.enter}`);

        // The answer (wc's count of the 24 bytes written), the plan all done, the usage of the turn.
        const done = await chat.waitFor(/Done: wrote .*notes\.txt\.upper; wc says 24/);
        expect(done).toContain('✓ terminal_create');
        await chat.waitFor(/wc says 24[\s\S]*tokens \d+ · tool calls [1-9]/);
        expect(done).toContain('[x] Report');

        // Slash commands: the plan as it stands, the session.
        chat.write(`/plan${KEYS.enter}`);
        await chat.waitFor(/\/plan\s*\n\s*Plan .*4\/4 done/);
        chat.write(`/session${KEYS.enter}`);
        await chat.waitFor(/session [0-9A-Z]{26} · open · actor default · profile guarded/);
        chat.write(`/quit${KEYS.enter}`);
        expect((await exitOf(chat)).exitCode).toBe(0);
        // docs/client.md shows this screen: CLEVERAGENTS_TEST_TRANSCRIPT=<file> keeps a copy.
        if (process.env.CLEVERAGENTS_TEST_TRANSCRIPT && transport.name === 'http') {
          writeFileSync(
            process.env.CLEVERAGENTS_TEST_TRANSCRIPT,
            chat.text().replaceAll(workspace, '/home/me/project'),
          );
        }
      } finally {
        chat.kill();
      }
    }, 120000);

    it('a plan edited in $EDITOR, then a write rejected at its gate: nothing is written, the agent says so', async () => {
      const notes = join(workspace, 'other.txt');
      writeFileSync(notes, 'keep me\n');
      // The "editor" renames the last plan entry in place, as a person would.
      const chat = startChat([], { EDITOR: 'sed -i s/Report/Summarize/' });
      try {
        await chat.waitFor('›', 45000);
        chat.write(`Uppercase ${notes}${KEYS.enter}`);
        await chat.waitFor('Your decision');
        chat.write(`e${KEYS.enter}`);
        // The edited plan is what runs: its checklist now shows the renamed entry.
        await chat.waitFor('Summarize');
        await chat.waitFor('Allow fs_write_text_file?');
        await chat.waitFor(/Allow fs_write_text_file[\s\S]*Your decision/);
        chat.write(`r${KEYS.enter}`);
        await chat.waitFor(/Done: the write failed \(Error: The call was rejected by the user\)/);
        expect(existsSync(upperPath(notes))).toBe(false);
        expect(readFileSync(notes, 'utf8')).toBe('keep me\n');
        // Ctrl-D at the prompt, once it is back (between prompts the terminal is in line mode, where a
        // typed-ahead Ctrl-D is an end of input the next prompt never sees).
        await chat.waitFor(/tokens \d+[^\n]*\n›\s*$/);
        chat.write(KEYS.ctrlD);
        expect((await exitOf(chat)).exitCode).toBe(0);
      } finally {
        chat.kill();
      }
    }, 120000);

    it('a session resumed with --session: /usage before any message; a command gate edited in $EDITOR runs the edited command', async () => {
      const first = startChat();
      let sessionId: string;
      try {
        await first.waitFor('›', 45000);
        first.write(`Echo remember me${KEYS.enter}`);
        await first.waitFor(/heard\(Echo remember me\)[\s\S]*tokens \d+/);
        first.write(`/session${KEYS.enter}`);
        // The hint names the transport this chat used (--server URL, or --local and its data directory).
        sessionId = /resume with: cleveragents (?:\S+ )*chat --session ([0-9A-Z]{26})/.exec(
          await first.waitFor(/resume with: cleveragents (?:\S+ )*chat --session [0-9A-Z]{26}/),
        )![1]!;
        first.write(`/quit${KEYS.enter}`);
        expect((await exitOf(first)).exitCode).toBe(0);
      } finally {
        first.kill();
      }

      const notes = join(workspace, 'lines.txt');
      writeFileSync(notes, 'one\ntwo\n');
      // The "editor" turns `wc -c` into `wc -l` in the command's arguments (YAML, one per line).
      const chat = startChat(['--session', sessionId], { EDITOR: "sed -i 's/^  - -c$/  - -l/'" });
      try {
        await chat.waitFor(`session ${sessionId} · actor default · profile supervised-reads`, 45000);
        chat.write(`/usage${KEYS.enter}`);
        await chat.waitFor(/\/usage\s*\ntokens [1-9]\d* · tool calls 0/);
        chat.write(`Uppercase ${notes}${KEYS.enter}`);
        await chat.waitFor(/Approve this plan\?[\s\S]*Your decision/);
        chat.write(`a${KEYS.enter}`);
        await chat.waitFor(/Allow fs_write_text_file[\s\S]*Your decision/);
        chat.write(`a${KEYS.enter}`);
        await chat.waitFor(/Allow terminal_create[\s\S]*Your decision/);
        chat.write(`e${KEYS.enter}`);
        // The edited command runs, unasked again: wc counts the 2 lines written.
        await chat.waitFor(/→ terminal_create command=wc args=\["-l",/);
        await chat.waitFor(/Done: wrote .*lines\.txt\.upper; wc says 2 /);
        expect(chat.text()).not.toContain('Run this command?');
        // The resumed session holds both conversations (the HTTP server's database is the test's to read).
        if (transport.name === 'http') {
          expect((await ok('session/get', { sessionId })).usage).toEqual(expect.objectContaining({ toolCalls: 6 }));
        }
        chat.write(`/quit${KEYS.enter}`);
        expect((await exitOf(chat)).exitCode).toBe(0);
      } finally {
        chat.kill();
      }
    }, 120000);

    it('a Markdown answer is rendered once whole: no heading marks or emphasis stars left on the screen', async () => {
      const chat = startChat();
      try {
        await chat.waitFor('›', 45000);
        chat.write(`Answer in markdown${KEYS.enter}`);
        const screen = await chat.waitFor(/second code[\s\S]*tokens \d+/);
        const answer = screen.slice(screen.indexOf('Answer in markdown'));
        expect(answer).toContain('Summary');
        expect(answer).toMatch(/first bold point/);
        expect(answer).not.toContain('## Summary');
        expect(answer).not.toContain('**bold**');
        chat.write(`/quit${KEYS.enter}`);
        expect((await exitOf(chat)).exitCode).toBe(0);
      } finally {
        chat.kill();
      }
    }, 120000);

    it('keys typed while a turn runs wait for the prompt, Ctrl-D there included; none answers a question', async () => {
      const chat = startChat();
      try {
        await chat.waitFor('›', 45000);
        // Text and Ctrl-D typed as the answer streams: not echoed into it; at the prompt, the text is on
        // the line, where Ctrl-D does not leave (as when typed there).
        chat.write(`Echo slowly one${KEYS.enter}`);
        await chat.waitFor('heard(Echo slowly one)');
        chat.write(`Echo a${KEYS.ctrlD}`);
        const prompt = await chat.waitFor(/tokens \d+[^\n]*\n› Echo a\s*$/);
        expect(prompt.slice(prompt.indexOf('heard(Echo slowly one)'), prompt.lastIndexOf('tokens'))).not.toContain(
          'Echo a',
        );
        chat.write(` b${KEYS.enter}`);
        await chat.waitFor(/heard\(Echo a b\)[\s\S]*tokens \d+[^\n]*\n›\s*$/);

        // Keys typed before a question shows do not answer it, and are not sent later either.
        const notes = join(workspace, 'patient.txt');
        writeFileSync(notes, 'patient\n');
        heldPlan = held();
        chat.write(`Uppercase ${notes} patiently${KEYS.enter}`);
        // The model is still writing its plan (its first word is out, the plan waits for the test).
        await chat.waitFor(/patiently\s*\nPlanning\./);
        chat.write(`a${KEYS.enter}`);
        heldPlan.release();
        await chat.waitFor(/Approve this plan\?[\s\S]*Your decision/);
        chat.write(`r${KEYS.enter}`);
        await chat.waitFor(/✔ Your decision Reject[\s\S]*\n›\s*$/);
        // Had the keys typed ahead answered the plan, its decision would show before the r's: the r's is the only one.
        const asked = chat.text().slice(chat.text().lastIndexOf('patiently'));
        expect(asked.match(/✔ Your decision \S+/g)).toEqual(['✔ Your decision Reject']);
        expect(existsSync(upperPath(notes))).toBe(false);

        // A line and Ctrl-D typed ahead: the line is sent once the turn ends, then Ctrl-D leaves.
        chat.write(`Echo slowly two${KEYS.enter}`);
        await chat.waitFor('heard(Echo slowly two)');
        chat.write(`Echo three${KEYS.enter}${KEYS.ctrlD}`);
        await chat.waitFor('heard(Echo three)');
        expect((await exitOf(chat)).exitCode).toBe(0);
      } finally {
        chat.kill();
      }
    }, 120000);

    it('Ctrl-C cancels the running task (CancelTask) and the chat goes on; a second Ctrl-C leaves with 130', async () => {
      const chat = startChat();
      try {
        await chat.waitFor('›', 45000);
        chat.write(`Tell me slowly${KEYS.enter}`);
        await chat.waitFor('word3 ');
        chat.write(KEYS.ctrlC);
        await chat.waitFor('Canceling the task');
        const after = await chat.waitFor(/canceled/);
        // Canceled long before the answer's end, and the prompt is back.
        expect(after).not.toContain(`word${SLOW_WORDS - 1}`);
        await chat.waitFor(/canceled[\s\S]*›/);
        if (transport.name === 'http') {
          const tasks = (await ok('session/list', {})).items as { sessionId: string }[];
          expect(tasks.length).toBeGreaterThan(0);
        }

        // Another slow answer: Ctrl-C twice leaves at once.
        chat.write(`Again slowly${KEYS.enter}`);
        await chat.waitFor(/canceled[\s\S]*word3 /);
        chat.write(KEYS.ctrlC);
        await chat.waitFor(/Canceling the task[\s\S]*Canceling the task/);
        chat.write(KEYS.ctrlC);
        expect((await exitOf(chat)).exitCode).toBe(130);
      } finally {
        chat.kill();
      }
    }, 120000);

    // Over HTTP only: the test pauses the plan on the server (whose database it can reach), and the
    // spinner does not depend on the transport.
    const overHttp = transport.name === 'http' ? it : it.skip;

    overHttp(
      '/cancel cancels a task left waiting (its plan paused mid-turn); with none waiting it says so',
      async () => {
        const notes = join(workspace, 'halting.txt');
        writeFileSync(notes, 'halting\n');
        const chat = startChat();
        try {
          await chat.waitFor('›', 45000);
          chat.write(`/cancel${KEYS.enter}`);
          await chat.waitFor('No task waits: a running task is canceled with Ctrl-C.');
          chat.write(`Uppercase ${notes} haltingly${KEYS.enter}`);
          const gate = await chat.waitFor(/Approve this plan\?[\s\S]*Your decision/);
          const planId = /Plan \(draft\) 0\/4 done ([0-9A-Z]{26})/.exec(gate)![1];
          chat.write(`a${KEYS.enter}`);
          // The turn runs, the model taking its time over the read; the plan is paused meanwhile, as
          // another client of the same owner would: the task waits, and the chat says why.
          await chat.waitFor('reading reading');
          expect(await ok('plan/pause', { planId })).toEqual(expect.objectContaining({ status: 'paused' }));
          await chat.waitFor(
            new RegExp(`Plan ${planId} is paused; resume it with _cleveragents/plan/resume\\.[\\s\\S]*\\n›\\s*$`),
          );
          const taskId = String((await ok('plan/get', { planId })).taskId);
          chat.write(`/cancel${KEYS.enter}`);
          await chat.waitFor(`Task ${taskId} canceled.`);
          expect(await ok('plan/get', { planId })).toEqual(expect.objectContaining({ status: 'canceled' }));
          expect(existsSync(upperPath(notes))).toBe(false);
          // Nothing waits any more.
          chat.write(`/cancel${KEYS.enter}`);
          await chat.waitFor(new RegExp(`Task ${taskId} canceled\\.\\s*\\n›[^\\n]*\\nNo task waits`));
          chat.write(`/quit${KEYS.enter}`);
          expect((await exitOf(chat)).exitCode).toBe(0);
        } finally {
          chat.kill();
        }
      },
      120000,
    );

    overHttp(
      'a wait over 300 ms shows a spinner on the terminal, cleared when the answer comes; piped output has none',
      async () => {
        const chat = startChat();
        try {
          await chat.waitFor('›', 45000);
          const from = chat.output.length;
          const sent = Date.now();
          // The model is silent for 1 s before its first word.
          chat.write(`Wait for it${KEYS.enter}`);
          await until(() => /Thinking|Working/.test(chat.output.slice(from)), 'the spinner', 10000);
          expect(Date.now() - sent).toBeGreaterThanOrEqual(SPINNER_DELAY_MS);
          await chat.waitFor(/Wait for it\s*\nwaited enough\.[\s\S]*tokens \d+/);
          // Drawn on the terminal while it waited, gone from the screen once the answer came.
          const screen = chat.text();
          expect(screen.slice(screen.lastIndexOf('Wait for it'))).not.toMatch(/Thinking|Working/);
          chat.write(`/quit${KEYS.enter}`);
          expect((await exitOf(chat)).exitCode).toBe(0);
        } finally {
          chat.kill();
        }

        // The same wait, the chat reading a pipe and writing to pipes: the answer, no spinner, no escapes.
        const piped = await runCli([...transport.args(), 'chat', '--workspace', workspace], {
          home: pipedHome(),
          cwd: workspace,
          stdin: 'Wait for it\n',
          env: { TERM: 'xterm-256color' },
        });
        expect({ code: piped.code, run: shown(piped) }).toEqual({ code: 0, run: shown(piped) });
        expect(piped.stdout).toContain('waited enough.');
        expect(piped.stdout + piped.stderr).not.toMatch(/Thinking|Working|Connecting/);
        expect(piped.stdout + piped.stderr).not.toMatch(ANSI);
      },
      120000,
    );
  });

  it('a bare A2A agent: a message answered; /plan, /session and /usage say this agent does not offer them', async () => {
    const workspace = mkdtempSync(join(home, 'workspace-bare-'));
    const chat = TerminalSession.start(
      process.execPath,
      [CLI_BIN, '--agent', bare.url, 'chat', '--plain', '--workspace', workspace],
      {
        cwd: workspace,
        env: terminalEnv(),
      },
    );
    try {
      await chat.waitFor('›', 45000);
      expect(chat.text()).toContain('This agent offers plain A2A: no sessions, plans or usage commands.');
      chat.write(`hello bare agent${KEYS.enter}`);
      await chat.waitFor(/hello bare agent\s*\nbare: hello bare agent\s*\n›\s*$/);
      const asked = bare.methods.length;
      chat.write(`/plan${KEYS.enter}`);
      await chat.waitFor(/\/plan\s*\n\/plan: this agent does not offer CleverAgents plans\./);
      chat.write(`/session${KEYS.enter}`);
      await chat.waitFor(/\/session\s*\n\/session: this agent does not offer CleverAgents sessions\./);
      chat.write(`/usage${KEYS.enter}`);
      await chat.waitFor(/\/usage\s*\n\/usage: this agent does not offer CleverAgents sessions\./);
      // Said by the client: nothing was sent for them.
      expect(bare.methods.slice(asked)).toEqual([]);
      chat.write(`/quit${KEYS.enter}`);
      expect((await exitOf(chat)).exitCode).toBe(0);
    } finally {
      chat.kill();
    }
  }, 60000);
};

// The chat's behaviour does not depend on the database: the embedded one is enough here.
describe.each(databaseTargets().filter((t) => t.kind === 'embedded'))(
  'cleveragents chat on a terminal, on $kind',
  describeChat,
);
