import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ANSWER_SHOWN,
  ATTACK_MARKERS,
  ERROR_TASK,
  startHostileAgent,
  type HostileAgent,
} from '../support/hostile-agent.js';
import { ifAssigned } from '../support/assigned.js';
import { CLI_BIN, KEYS, TerminalSession, assertCliBuilt } from '../support/terminal.js';
import { ARM_MS } from '../../packages/cli/src/ui/dialog.js';

/*
 * The CLI on a real pseudo-terminal against an agent whose every text attacks the terminal (OSC 52,
 * OSC 8, OSC 0, CR + CSI 2K, U+202E; test/support/hostile-agent.ts). The bytes the terminal receives
 * carry none of it, while the CLI's own colours still show; an approval gate is not approved by Enter.
 */

/** The bytes a terminal received carry no part of the attack, and the CLI's own colours. */
function expectNoAttack(raw: string): void {
  for (const [name, marker] of Object.entries(ATTACK_MARKERS)) {
    expect({ name, received: raw.includes(marker) }).toEqual({ name, received: false });
  }
  // No OSC at all (the client itself sends none), no BEL from the agent's string terminators.
  expect(raw).not.toContain('\u001b]');
  expect(raw).toMatch(/\u001b\[(?:1|2|3[1-6])m/);
}

async function exitOf(session: TerminalSession): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Did not exit; the screen shows:\n${session.text()}`)), 30000);
  });
  try {
    return (await Promise.race([session.exited, late])).exitCode;
  } finally {
    clearTimeout(timer);
  }
}

describe('cleveragents against an agent that attacks the terminal', () => {
  let agent: HostileAgent;
  let home: string;

  beforeAll(async () => {
    assertCliBuilt();
    agent = await startHostileAgent();
    home = mkdtempSync(join(tmpdir(), 'cleveragents-hostile-'));
  });

  afterAll(async () => {
    await ifAssigned(agent)?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const run = (args: string[]): TerminalSession =>
    TerminalSession.start(process.execPath, [CLI_BIN, '--agent', agent.url, ...args], {
      cwd: home,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        XDG_CONFIG_HOME: join(home, 'config'),
        XDG_DATA_HOME: join(home, 'data'),
        TERM: 'xterm-256color',
        LANG: 'C.UTF-8',
        // What makes the Markdown renderer write OSC 8 links on terminals it trusts to show them.
        FORCE_HYPERLINK: '1',
      },
    });

  it('chat: card name, working note, plan, tool call, streamed answer and failure reason arrive without their escapes', async () => {
    const chat = run(['chat', '--plain', '--workspace', home]);
    try {
      await chat.waitFor('›', 45000);
      expect(chat.text()).toContain('Hostile agent APPROVED txt');
      chat.write(`answer${KEYS.enter}`);
      const screen = await chat.waitFor(new RegExp(`${ANSWER_SHOWN.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\s*\\n›`));
      expect(screen).toContain('working: a working note APPROVED txt');
      expect(screen).toContain('[ ] a plan entry APPROVED txt');
      expect(screen).toMatch(/→ lookup APPROVED txt q=/);
      expect(screen).toContain('✗ lookup APPROVED txt: no luck APPROVED txt');
      // The spinner showed the tool's name while it ran (its bytes are checked below).
      expect(chat.output).toContain('Running lookup');
      chat.write(`fail${KEYS.enter}`);
      await chat.waitFor('failed: the reason APPROVED txt');
      chat.write(`/quit${KEYS.enter}`);
      expect(await exitOf(chat)).toBe(0);
      expectNoAttack(chat.output);
    } finally {
      chat.kill();
    }
  }, 60000);

  it('chat: Enter alone at a gate approves nothing; the gate shows its argument escaped; a typed r rejects', async () => {
    const chat = run(['chat', '--plain', '--workspace', home]);
    try {
      await chat.waitFor('›', 45000);
      chat.write(`gate${KEYS.enter}`);
      const gate = await chat.waitFor(/Allow deploy_site\?[\s\S]*Your decision/);
      expect(gate).toContain('target="\\e]52;c;cm0gLXJmIH4=\\x07\\e]8;;https://evil.example\\x07prod');
      expect(gate).toContain('\\r\\e[2KAPPROVED \\u{202e}txt"');
      expect(gate).not.toContain('cleveragents/approval-response');
      chat.write(KEYS.enter);
      await chat.waitFor('Please input a value');
      // Had Enter answered the gate, that answer would have reached the agent first, and the r after it
      // would not answer the gate at all: the only decision it gets is the r.
      chat.write(`r${KEYS.enter}`);
      await chat.waitFor(/decision: reject\s*\n›/);
      expect(agent.decisions).toEqual(['reject']);

      // A command's gate, which the client previews too: its preview carries no escape either.
      chat.write(`run${KEYS.enter}`);
      await chat.waitFor(/Allow terminal_create\?[\s\S]*Your decision/);
      chat.write(`r${KEYS.enter}`);
      await chat.waitFor(/decision: reject[\s\S]*decision: reject\s*\n›/);
      chat.write(`/quit${KEYS.enter}`);
      expect(await exitOf(chat)).toBe(0);
      expectNoAttack(chat.output);
    } finally {
      chat.kill();
    }
  }, 60000);

  it('chat, the interactive UI: the answer, plan, tools and gate arrive without their escapes; Enter alone approves nothing; a denial is sent with its reason', async () => {
    const chat = run(['chat', '--workspace', home]);
    try {
      await chat.waitFor('Hostile agent APPROVED txt', 45000);
      chat.write(`answer${KEYS.enter}`);
      await chat.waitFor(ANSWER_SHOWN);
      const screen = await chat.waitFor('[ ] a plan entry APPROVED txt');
      expect(screen).toMatch(/✗ lookup APPROVED txt q=.* no luck APPROVED txt/);
      const decided = agent.decisions.length;
      const reasoned = agent.reasons.length;
      chat.write(`gate${KEYS.enter}`);
      const gate = await chat.waitFor(/Allow deploy_site\?[\s\S]*\[d\] Deny/);
      expect(gate).toContain('target="\\e]52;c;cm0gLXJmIH4=\\x07\\e]8;;https://evil.example\\x07prod');
      expect(gate).not.toContain('cleveragents/approval-response');
      // One key at a time, once the dialog takes keys: Enter alone approves nothing.
      for (const key of [KEYS.enter, 'd', KEYS.enter, 'not on Fridays', KEYS.enter]) {
        await new Promise((resolve) => setTimeout(resolve, ARM_MS));
        chat.write(key);
      }
      await chat.waitFor(/deploy_site: denied \(not on Fridays\)[\s\S]*decision: reject/);
      // The reason typed is what the agent got with the one rejection.
      expect(agent.decisions.slice(decided)).toEqual(['reject']);
      expect(agent.reasons.slice(reasoned)).toEqual(['not on Fridays']);
      chat.write(`/quit${KEYS.enter}`);
      expect(await exitOf(chat)).toBe(0);
      expectNoAttack(chat.output);
    } finally {
      chat.kill();
    }
  }, 60000);

  it('send: the streamed answer, progress and failure reason, without their escapes', async () => {
    const answer = run(['send', 'answer']);
    try {
      expect(await exitOf(answer)).toBe(0);
      await answer.waitFor(ANSWER_SHOWN);
      expect(answer.text()).toContain('[ ] a plan entry APPROVED txt');
      expectNoAttack(answer.output);
    } finally {
      answer.kill();
    }
    const failed = run(['send', 'fail']);
    try {
      expect(await exitOf(failed)).not.toBe(0);
      await failed.waitFor('failed: the reason APPROVED txt');
      expectNoAttack(failed.output);
    } finally {
      failed.kill();
    }
  }, 60000);

  it("card and an error from the agent: the card's text and the error's message without their escapes", async () => {
    const card = run(['card']);
    try {
      expect(await exitOf(card)).toBe(0);
      await card.waitFor('It attacks terminals APPROVED txt');
      expect(card.text()).toContain('Attack APPROVED txt');
      expectNoAttack(card.output);
    } finally {
      card.kill();
    }
    const error = run(['tasks', 'get', ERROR_TASK]);
    try {
      expect(await exitOf(error)).not.toBe(0);
      await error.waitFor('error: Task not found APPROVED txt');
      expectNoAttack(error.output);
    } finally {
      error.kill();
    }
  }, 60000);
});
