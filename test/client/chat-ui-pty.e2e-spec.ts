import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ifAssigned } from '../support/assigned.js';
import { ScreenCamera } from '../support/screen-image.js';
import { terminalEnv } from '../support/cli.js';
import { cliRig, type CliRig } from '../support/cli-rig.js';
import { clientScenarioReply, upperPath } from '../support/client-scenario.js';
import { scenarioMessagesOf, type EndpointAnswer } from '../support/openai-endpoint.js';
import { extensionCalls, rawCall } from '../support/server.js';
import { CLI_BIN, KEYS, TerminalSession, choose } from '../support/terminal.js';

/*
 * `cleveragents chat`'s interactive UI (ink) as a person uses it, on a real pseudo-terminal read back by a
 * headless xterm, against the real server whose local backend runs a scripted model
 * (test/support/client-scenario.ts) under the built-in `guarded` profile: the plan and the write asked
 * in the dialog, the command asked by the client in the same dialog, its output shown under its line,
 * the answer written once; a write allowed for the session is not asked again.
 */

const USAGE = { promptTokens: 30, completionTokens: 5 };

function reply(body: Record<string, unknown>): EndpointAnswer {
  const last = scenarioMessagesOf(body).findLast((m) => m.role === 'user')?.content ?? '';
  if (last.startsWith('Long')) {
    // An answer taller than the screen, streamed word by word, paragraphs and all.
    const words = Array.from({ length: 240 }, (_, i) => `w${i}${i % 60 === 59 ? '\n\n' : ' '}`);
    return { tokens: words, delayMs: 5 };
  }
  if (last.startsWith('Slow')) return { tokens: Array.from({ length: 300 }, (_, i) => `slow${i} `), delayMs: 100 };
  return clientScenarioReply(USAGE)(body);
}

async function exitOf(chat: TerminalSession): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`The chat did not exit; the screen shows:\n${chat.text()}`)), 30000);
  });
  try {
    return (await Promise.race([chat.exited, late])).exitCode;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * CLEVERAGENTS_SCREENSHOTS=DIR: the main case also takes pictures of the screen at its steps, PNGs of the
 * headless terminal taken by Chromium (test/support/screen-image.ts), for docs/client.md
 * (`npm run docs:screenshots` writes them to docs/images/).
 */
const SHOTS = process.env.CLEVERAGENTS_SCREENSHOTS;
const camera = SHOTS ? new ScreenCamera() : undefined;

async function snap(chat: TerminalSession, name: string, caption: string): Promise<void> {
  if (!camera || !SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  writeFileSync(join(SHOTS, `chat-${name}.png`), await camera.png(await chat.screenHtml(caption)));
}

const count = (text: string, part: string): number => text.split(part).length - 1;

describe('cleveragents chat, the interactive UI', () => {
  let rig: CliRig;
  let workspace: string;

  beforeAll(async () => {
    rig = await cliRig(reply);
    workspace = realpathSync(mkdtempSync(join(rig.home.dir, 'workspace-')));
  }, 90000);

  afterAll(async () => {
    await camera?.close();
    await ifAssigned(rig)?.close();
  });

  const startChat = (rows = 50, flags: string[] = []): TerminalSession =>
    TerminalSession.start(
      process.execPath,
      [CLI_BIN, '--server', rig.server.baseUrl, 'chat', '--profile', 'guarded', '--workspace', workspace, ...flags],
      // The pictures show the editor a person would have; the cases never open it.
      { cwd: workspace, env: { ...terminalEnv(rig.home), EDITOR: SHOTS ? 'vi' : 'false' }, rows },
    );

  it('under guarded: the plan and the write answered in the dialog, the command asked there too, its output shown, the answer once', async () => {
    const notes = join(workspace, 'notes.txt');
    writeFileSync(notes, 'hello notes\nsecond line\n');
    const chat = startChat();
    try {
      // The status line: the server, the session, its actor and profile, the workspace, the sandbox.
      await chat.waitFor(
        /127\.0\.0\.1:\d+ · session \w{8} · actor default · profile guarded · tokens 0 · sandbox o(n|ff) · ~\/workspace-/,
        45000,
      );
      chat.write(`Uppercase ${notes}${KEYS.enter}`);

      // The plan gate: the checklist and the choices; Enter alone approves nothing.
      await chat.waitFor(/Approve this plan\?[\s\S]*\[a\] Approve/);
      expect(chat.text()).toContain(`[ ] Read ${notes}`);
      await snap(chat, 'plan', 'The plan at its gate: allow it once, deny it with a reason, or edit it');
      await choose(chat, KEYS.enter);
      await chat.waitFor('Pick a choice first');
      await choose(chat, 'a', KEYS.enter);

      // The read runs unasked; the write waits at its gate, a diff of the new file.
      await chat.waitFor(/Allow fs_write_text_file\?[\s\S]*Allow fs_write_text_file for this session/);
      await chat.waitFor('+HELLO NOTES');
      expect(chat.text()).toContain('✓ fs_read_text_file');
      await snap(chat, 'write', "A write's gate: the diff of exactly what will be written");
      await choose(chat, 's', KEYS.enter);

      // The command, asked by the client in the same dialog: exactly what runs, where.
      await chat.waitFor(/Run this command\?[\s\S]*Run wc -c .*notes\.txt\.upper[\s\S]*\[a\] Allow once/);
      expect(readFileSync(upperPath(notes), 'utf8')).toBe('HELLO NOTES\nSECOND LINE\n');
      await snap(chat, 'command', 'A command, asked by the client: the command line, its folder and its sandbox');
      await choose(chat, 'a', KEYS.enter);

      // The answer, once; the command's line with its output below it; the plan, done, once.
      const done = await chat.waitFor(/Done: wrote .*notes\.txt\.upper; wc says 24/);
      await chat.waitFor(/tokens [1-9]\d* · allowed: fs_write_text_file/);
      await snap(chat, 'done', "The turn's end: the command's output under its line, the plan done, the status line");
      const text = chat.text();
      expect(done).toMatch(/✓ terminal_create wc -c \S*notes\.txt\.upper exit 0\n\s+│ 24 \S*notes\.txt\.upper/);
      expect(count(text, 'Done: wrote')).toBe(1);
      expect(count(text, '[x] Report')).toBe(1);
      expect(text).not.toContain('terminal_output');
      expect(text).not.toContain('cleveragents/');

      // A second file: the plan is asked again, the write (allowed for the session) is not.
      const more = join(workspace, 'more.txt');
      writeFileSync(more, 'more\n');
      const secondTurn = chat.output.length;
      chat.write(`Uppercase ${more}${KEYS.enter}`);
      await chat.waitFor(/Uppercase \S*more\.txt[\s\S]*Approve this plan\?/);
      await choose(chat, 'a', KEYS.enter);
      await chat.waitFor(/Run wc -c .*more\.txt\.upper/);
      await choose(chat, 'a', KEYS.enter);
      await chat.waitFor(/Done: wrote .*more\.txt\.upper; wc says/);
      // The dialogs leave their answers in the transcript; the second write was not asked about.
      // Not asked by the server's gate (the session's allowance went with the message), only by the client.
      expect(chat.output.slice(secondTurn)).not.toContain('Allow fs_write_text_file?');
      expect(chat.output.slice(secondTurn)).not.toContain('fs_write_text_file: allowed for this session');
      expect(chat.text()).toMatch(
        /✓ fs_write_text_file: allowed for this session\n[\s\S]*✓ write more\.txt\.upper: allowed for this session/,
      );
      expect(existsSync(upperPath(more))).toBe(true);

      chat.write(`/plan${KEYS.enter}`);
      await chat.waitFor(/\/plan\s*\nPlan .*4\/4 done/);
      chat.write(KEYS.ctrlD);
      expect(await exitOf(chat)).toBe(0);
    } finally {
      chat.kill();
    }
  }, 120000);

  it('a write (its diff taller than the screen, shown once) denied at its gate with a reason: nothing written, the denial said; Ctrl-C cancels a running answer, said once', async () => {
    const notes = join(workspace, 'denied.txt');
    // Its diff is taller than the screen: written to the transcript once, the dialog below it.
    writeFileSync(notes, Array.from({ length: 60 }, (_, i) => `line ${i}\n`).join(''));
    const chat = startChat();
    try {
      await chat.waitFor('profile guarded', 45000);
      chat.write(`Uppercase ${notes}${KEYS.enter}`);
      await chat.waitFor(/Approve this plan\?[\s\S]*\[a\] Approve/);
      await choose(chat, 'a', KEYS.enter);
      await chat.waitFor(/Allow fs_write_text_file\?[\s\S]*shown in full above[\s\S]*\[d\] Deny/);
      await choose(chat, 'd', KEYS.enter);
      await chat.waitFor('Reason (optional):');
      chat.write('not on Fridays');
      await chat.waitFor('Reason (optional): not on Fridays');
      chat.write(KEYS.enter);
      await chat.waitFor(/✗ fs_write_text_file: denied \(not on Fridays\)[\s\S]*Done: the write failed/);
      expect(existsSync(upperPath(notes))).toBe(false);
      for (const line of ['+LINE 0', '+LINE 30', '+LINE 59']) expect(count(chat.text(), `${line}\n`)).toBe(1);

      chat.write(`Slowly now${KEYS.enter}`);
      await chat.waitFor('slow3');
      chat.write(KEYS.ctrlC);
      await chat.waitFor(/canceled:[\s\S]*tokens/);
      const text = chat.text();
      expect(count(text, 'Canceling the task')).toBe(1);
      expect(count(text, 'canceled:')).toBe(1);
      expect(text).not.toContain('slow299');
      // A Ctrl-C at the prompt right after the cancel is the second press: it leaves.
      chat.write(KEYS.ctrlC);
      expect(await exitOf(chat)).toBe(130);
    } finally {
      chat.kill();
    }
  }, 120000);

  it('a warning of the tools during a turn is a line of the transcript, said once; the screen is drawn whole', async () => {
    const notes = join(workspace, 'unsandboxed.txt');
    writeFileSync(notes, 'no sandbox\n');
    const chat = startChat(50, ['--sandbox', 'off', '--allow-writes', '--allow-commands']);
    try {
      await chat.waitFor('profile guarded', 45000);
      chat.write(`Uppercase ${notes}${KEYS.enter}`);
      await chat.waitFor(/Approve this plan\?[\s\S]*\[a\] Approve/);
      await choose(chat, 'a', KEYS.enter);
      await chat.waitFor(/Done: wrote .*unsandboxed\.txt\.upper; wc says/);
      await chat.waitFor(/tokens [1-9]/);
      const text = chat.text();
      // Written to the terminal beside the UI, it once left a copy of the frame it cut into in the scrollback.
      expect(count(text, 'commands run without a sandbox')).toBe(1);
      expect(text).toMatch(/warning: commands run without a sandbox[^\n]*\n[\s\S]*Done: wrote/);
      expect(count(text, '· actor default · profile guarded ·')).toBe(1);
      expect(count(text, 'a message, or /help')).toBe(1);
    } finally {
      chat.kill();
    }
  }, 120000);

  it("the status line counts the approvals waiting in the person's other sessions", async () => {
    // Another session's task waits at its plan gate.
    const notes = join(workspace, 'elsewhere.txt');
    writeFileSync(notes, 'elsewhere\n');
    const { ok } = extensionCalls(() => rig.server);
    const { sessionId } = await ok('session/create', { profile: 'guarded' });
    const message = {
      messageId: `m-${sessionId}`,
      role: 'ROLE_USER',
      contextId: sessionId,
      parts: [{ text: `Uppercase ${notes}` }],
    };
    const sent = await rawCall(
      rig.server.endpoint,
      { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message } },
      { 'A2A-Version': '1.0' },
    );
    const request = sent.json.result.task.status.message.parts.find(
      (p: { data?: { type?: string } }) => p.data?.type === 'cleveragents/approval-request',
    );
    expect(request?.data.approvalId).toEqual(expect.any(String));

    const chat = startChat();
    try {
      await chat.waitFor(/profile guarded · 1 approval waiting elsewhere · tokens/, 45000);
      // Answered from elsewhere: the count goes after the chat's next turn.
      await ok('approval/answer', { approvalId: request.data.approvalId, decision: 'reject', reason: 'not now' });
      chat.write(`Long answer please${KEYS.enter}`);
      await chat.waitFor(/w239[\s\S]*profile guarded · tokens [1-9]/);
      expect(chat.text()).not.toMatch(/waiting elsewhere[^\n]*tokens [1-9]/);
    } finally {
      chat.kill();
    }
  }, 120000);

  it('a message typed before the UI is up is kept for it and sent', async () => {
    const chat = startChat();
    try {
      // Typed as the chat starts (before it has connected): sent once the prompt is there, not left in the box.
      chat.write(`Long answer please${KEYS.enter}`);
      await chat.waitFor(/w239[\s\S]*tokens [1-9]/, 45000);
      await chat.waitFor(/› a message, or \/help/);
    } finally {
      chat.kill();
    }
  }, 120000);

  it('a Ctrl-D typed before the UI is up leaves', async () => {
    const chat = startChat();
    try {
      chat.write(KEYS.ctrlD);
      expect(await exitOf(chat)).toBe(0);
    } finally {
      chat.kill();
    }
  }, 120000);

  it('an answer taller than the screen is written once; Ctrl-C twice at the prompt leaves with 130', async () => {
    const chat = startChat(20);
    try {
      await chat.waitFor('profile guarded', 45000);
      chat.write(`Long answer please${KEYS.enter}`);
      await chat.waitFor(/w239[\s\S]*tokens [1-9]/);
      const text = chat.text();
      for (let i = 0; i < 240; i++) {
        expect({ word: i, times: text.match(new RegExp(`\\bw${i}\\b`, 'g'))?.length }).toEqual({ word: i, times: 1 });
      }
      chat.write(KEYS.ctrlC);
      await chat.waitFor('Ctrl-C again or /quit to leave');
      chat.write(KEYS.ctrlC);
      expect(await exitOf(chat)).toBe(130);
    } finally {
      chat.kill();
    }
  }, 120000);
});
