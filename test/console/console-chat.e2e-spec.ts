import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import type { Locator, Page } from 'playwright-core';
import { Role, Task } from '@a2a-js/sdk';
import { ifAssigned } from '../support/assigned.js';
import {
  PHONE,
  accessibilityViolations,
  expectNoProblems,
  screenshot,
  signedInConsole,
  type ConsoleTab,
  describeInChromium,
} from '../support/console-browser.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { startRemoteAgent, type RemoteAgent } from '../support/a2a-remote-agent.js';
import { OpenAiCompatibleEndpoint, scenarioMessagesOf, type EndpointAnswer } from '../support/openai-endpoint.js';
import { until } from '../support/wait.js';
import { extensionCalls, startServerWithBootstrapKey, type TestServer } from '../support/server.js';

/*
 * The console's Chat page in a real Chromium against a real server whose local orchestrator runs a scripted
 * model (an OpenAI-compatible endpoint on loopback) under the built-in `guarded` profile, with an external
 * A2A agent (`helper`) as its one server-side tool: the plan approved in the page and its checklist moving,
 * the helper's call approved and denied at its gate, a task canceled, a file attached, hostile model text.
 */

const AGENT_KEY = 'chat-agent-key-5e1d';
const HOSTILE = '<img src=x onerror=alert(1)><script>alert(2)</script>\u0007\u001b[31mred\u202e';
const REASON = 'Not today: the helper is <b>busy</b>';

/** Each test's model step held until the test lets it go: the checklist seen mid-way. */
let release: () => void = () => undefined;
let held: Promise<void> = Promise.resolve();
function hold(): void {
  held = new Promise((resolve) => (release = resolve));
}

const entries = (...statuses: string[]) =>
  ['Gather the numbers', 'Ask the helper', 'Write the report'].map((content, i) => ({
    content,
    priority: i === 0 ? 'high' : 'medium',
    status: statuses[i],
  }));

/** A TCP relay in front of the server (its PUBLIC_URL), whose open connections a test can cut: a dropped stream. */
async function startRelay() {
  const sockets = new Set<Socket>();
  let target = 0;
  const relay = createNetServer((inbound) => {
    const outbound = connect(target, '127.0.0.1');
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
    to: (url: string) => (target = Number(new URL(url).port)),
    drop: () => sockets.forEach((socket) => socket.destroy()),
    close: () => {
      sockets.forEach((socket) => socket.destroy());
      return new Promise<void>((resolve) => relay.close(() => resolve()));
    },
  };
}

/** Waits until what `locator` shows contains `text`. */
async function shows(locator: Locator, text: string): Promise<void> {
  await until(async () => ((await locator.textContent()) ?? '').includes(text), `the page to show "${text}"`);
}

const call = (id: string, name: string, args: Record<string, unknown>): EndpointAnswer => ({
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
  argumentChunks: 2,
});

/** The scripted model: what it answers is decided by the person's last message and the tool results since. */
function reply(body: Record<string, unknown>): EndpointAnswer {
  const messages = scenarioMessagesOf(body);
  const lastUser = messages.findLastIndex((m) => m.role === 'user');
  const said = messages[lastUser]?.content ?? '';
  const since = messages.slice(lastUser + 1);
  const results = since.filter((m) => m.role === 'tool');
  const usage = { promptTokens: 40, completionTokens: 8 };
  if (said.startsWith('Plan')) {
    if (results.length === 0) {
      return call('plan-1', 'update_plan', { entries: entries('pending', 'pending', 'pending') });
    }
    if (results.length === 1) {
      return {
        ...call('plan-2', 'update_plan', { entries: entries('completed', 'in_progress', 'pending') }),
        heldUntil: held,
      };
    }
    if (results.length === 2) return call('helper-1', 'helper', { message: 'sum 2 and 3' });
    if (results.length === 3) {
      return call('plan-3', 'update_plan', { entries: entries('completed', 'completed', 'completed') });
    }
    const helper = (JSON.parse(results[2].content) as { answer: string }).answer;
    return { tokens: ['Done: ', 'the helper ', `said ${helper}.`, '\nSecond line.'], delayMs: 20, usage };
  }
  if (said.startsWith('Ask')) {
    if (results.length === 0) {
      return { ...call('helper-2', 'helper', { message: 'sum 4 and 5' }), tokens: ['Asking the helper. '] };
    }
    return { tokens: ['The helper answered: ', results[0].content], usage };
  }
  if (said.startsWith('Edit')) {
    if (results.length === 0) {
      return call('plan-e', 'update_plan', { entries: entries('pending', 'pending', 'pending') });
    }
    return { tokens: [`Planned: ${results[0].content}`], usage };
  }
  if (said.startsWith('Read')) {
    if (results.length === 0) return call('read-1', 'fs_read_text_file', { path: 'notes.txt' });
    return { tokens: [`I could not read it: ${results[0].content}`], usage };
  }
  if (said.startsWith('Steady')) {
    return { tokens: Array.from({ length: 60 }, (_, i) => `steady${i} `), delayMs: 50 };
  }
  if (said.startsWith('Slow')) return { tokens: Array.from({ length: 400 }, (_, i) => `slow${i} `), delayMs: 50 };
  if (said.startsWith('Hostile')) return { tokens: [HOSTILE, '\n', 'x'.repeat(1200)], usage };
  return { tokens: ['Hello ', 'from ', 'the model.'], usage };
}

describeInChromium('the console: Chat', (browser) => {
  describe.each(databaseTargets())('on $kind', (target) => {
    let model: OpenAiCompatibleEndpoint;
    let agent: RemoteAgent;
    let db: TestDatabase;
    let server: TestServer;
    let apiKey: string;
    let relay: Awaited<ReturnType<typeof startRelay>>;
    const calls = extensionCalls(() => server);

    const ok = async (method: string, params: Record<string, unknown>): Promise<any> => {
      const answer = await calls.call(method, { namespace: 'default', ...params }, { 'x-api-key': apiKey });
      expect(answer.json.error).toBeUndefined();
      return answer.json.result;
    };

    beforeAll(async () => {
      model = await OpenAiCompatibleEndpoint.start(reply);
      agent = await startRemoteAgent(AGENT_KEY);
      db = await target.create();
      relay = await startRelay();
      ({ server, bootstrapKey: apiKey } = await startServerWithBootstrapKey(db, {
        CLEVERAGENTS_AUTH_SCHEMES: 'apiKey',
        CLEVERAGENTS_ACTOR_BACKEND: 'local',
        CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
        CLEVERAGENTS_MODEL: 'console-chat',
        CLEVERAGENTS_MODEL_ALLOWED_HOSTS: `127.0.0.1:${agent.port},*`,
        // The console is opened through the relay: the card names it, so the page's calls stay on its origin.
        PUBLIC_URL: relay.url,
      }));
      relay.to(server.baseUrl);
      await ok('registry/create', {
        kind: 'actor',
        name: 'helper',
        spec: {
          description: 'An external agent that adds numbers',
          a2a: { url: agent.url, auth: { credential: AGENT_KEY } },
        },
      });
      await ok('registry/create', {
        kind: 'actor',
        name: 'planner',
        spec: {
          description: 'Plans, and asks the helper',
          localGraph: 'orchestrator',
          profile: 'guarded',
          tools: ['helper'],
        },
      });
    }, 60000);

    afterAll(async () => {
      await ifAssigned(relay)?.close();
      await ifAssigned(server)?.close();
      await ifAssigned(db)?.cleanup();
      await ifAssigned(agent)?.close();
      await ifAssigned(model)?.close();
    });

    /** A console tab on a new session of `actor`, started from the Chat page's form. */
    const newChat = async (actor: string, viewport?: { width: number; height: number }): Promise<ConsoleTab> => {
      const tab = await signedInConsole(browser(), relay.url, apiKey, { path: 'chat', viewport });
      const { page } = tab;
      await page.getByText('This browser offers the agent no files and no terminal').waitFor();
      await page.getByLabel('Actor').selectOption(actor);
      await page.getByLabel('Title (optional)').fill(`Chat with ${actor}`);
      await page.getByRole('button', { name: 'Start the session' }).click();
      await page.getByRole('heading', { level: 1, name: `Chat with ${actor}` }).waitFor();
      expect(page.url()).toMatch(/\/console\/chat\/[^/]+$/);
      return tab;
    };

    const send = async (page: Page, text: string): Promise<void> => {
      await page.getByLabel('Message').fill(text);
      await page.getByRole('button', { name: 'Send' }).click();
    };

    const log = (page: Page) => page.getByRole('log', { name: 'Conversation' });
    const plan = (page: Page) => page.getByRole('region', { name: 'Plan', exact: true }).last();

    it('a plan approved in the page, its checklist moving live, the helper approved at its gate, the answer streamed', async () => {
      hold();
      const tab = await newChat('planner');
      const { page } = tab;
      try {
        await send(page, 'Plan the quarterly report');
        const gate = page.getByRole('region', { name: 'Approve the plan?' });
        await gate.getByText('Gather the numbers').waitFor();
        expect(await gate.getByRole('listitem').count()).toBe(3);
        await gate.getByRole('button', { name: 'Approve', exact: true }).click();
        await plan(page).getByText('0 of 3 done').waitFor();
        release();
        await plan(page).getByText('1 of 3 done').waitFor();
        await shows(plan(page).getByRole('listitem').nth(1), 'in progress');

        // The helper is a server-side tool the guarded profile asks about: exactly its arguments are shown.
        const toolGate = page.getByRole('region', { name: 'Approve this tool call?' });
        await toolGate.getByText('"message": "sum 2 and 3"').waitFor();
        await shows(page.getByRole('status'), 'Waiting for your answer');
        await screenshot(page, 'chat-gate');
        await toolGate.getByRole('button', { name: 'Approve', exact: true }).click();

        await log(page).getByText('Done: the helper said').waitFor();
        await plan(page).getByText('3 of 3 done').waitFor();
        await shows(log(page), 'Second line.');
        await page.getByRole('button', { name: 'Cancel the task' }).waitFor({ state: 'detached' });
        await shows(log(page), 'Plan: approved');
        await shows(log(page), 'Tool helper: approved');

        // A tool call opens to its arguments and result.
        const helperCall = log(page).locator('details', { hasText: 'helper' });
        await helperCall.locator('summary').click();
        await shows(helperCall, 'agent: sum 2 and 3');
        await page.getByText(/tokens · \d+ tool calls/).waitFor();
        expect(await accessibilityViolations(page)).toEqual([]);
        await screenshot(page, 'chat');
        expectNoProblems(tab);

        // Resumed from its address: the history as it was, the plan done.
        await page.reload();
        await plan(page).getByText('3 of 3 done').waitFor();
        await shows(log(page), 'Plan the quarterly report');
        await shows(log(page), 'Done: the helper said');
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    }, 60000);

    it('the helper denied with a reason: the model is told the reason, and says so', async () => {
      const tab = await newChat('planner');
      const { page } = tab;
      try {
        await send(page, 'Ask the helper');
        const toolGate = page.getByRole('region', { name: 'Approve this tool call?' });
        await toolGate.getByRole('button', { name: 'Deny…' }).click();
        await toolGate.getByLabel('Why (the agent is told)').fill(REASON);
        await toolGate.getByRole('button', { name: 'Deny', exact: true }).click();
        await log(page).getByText('The helper answered:').waitFor();
        await shows(log(page), REASON);
        await shows(log(page), `Tool helper: denied: ${REASON}`);
        const told = model.completions.at(-1)!.body;
        expect(JSON.stringify(told.messages)).toContain(REASON);
        expect(agent.received.map((m) => JSON.stringify(m))).not.toContainEqual(expect.stringContaining('sum 4 and 5'));
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    }, 30000);

    it('a gate answered elsewhere (approval/answer) updates the page, which follows the task to its answer', async () => {
      const tab = await newChat('planner');
      const { page } = tab;
      try {
        await send(page, 'Ask the helper again');
        const toolGate = page.getByRole('region', { name: 'Approve this tool call?' });
        await toolGate.waitFor();
        const pending = await ok('approval/list', {});
        const approval = pending.items.find((item: any) => item.subject.kind === 'tool' && item.state === 'pending');
        await ok('approval/answer', { approvalId: approval.approvalId, decision: 'approve' });
        await toolGate.waitFor({ state: 'detached' });
        await shows(log(page), 'Tool helper: approved elsewhere');
        await log(page).getByText('The helper answered:').waitFor();
        await shows(log(page), 'agent: sum 4 and 5');
        // What was shown before the gate is not shown again when the page follows the task.
        expect(((await log(page).textContent()) ?? '').split('Asking the helper.').length).toBe(2);
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    }, 30000);

    it('the plan edited at its gate: steps changed and removed, the edited plan is the one carried out', async () => {
      const tab = await newChat('planner');
      const { page } = tab;
      try {
        await send(page, 'Edit this plan');
        const gate = page.getByRole('region', { name: 'Approve the plan?' });
        await gate.getByRole('button', { name: 'Edit the plan…' }).click();
        await gate.getByLabel('Step 2').fill('Ask the helper twice');
        await gate.getByRole('button', { name: 'Remove step 3' }).click();
        await gate.getByRole('button', { name: 'Approve the edited plan' }).click();
        await log(page).getByText('Planned:').waitFor();
        await shows(plan(page), 'Ask the helper twice');
        expect(await plan(page).getByRole('listitem').count()).toBe(2);
        await shows(log(page), 'Plan: approved as edited');
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    }, 30000);

    it('a client-side tool the model asks for anyway is refused by the server, shown failed with why, and the turn ends', async () => {
      const tab = await newChat('planner');
      const { page } = tab;
      try {
        await send(page, 'Read notes.txt');
        await log(page).getByText('I could not read it:').waitFor();
        const read = log(page).locator('details', { hasText: 'fs_read_text_file' });
        await shows(read.locator('summary'), 'failed');
        await read.locator('summary').click();
        await shows(read, 'not offered');
        // The model was offered the server's tools only: no file or terminal tool.
        const offered = JSON.stringify(model.completions.at(-1)!.body.tools);
        expect(offered).toContain('helper');
        expect(offered).not.toMatch(/fs_read_text_file|fs_write_text_file|terminal_create/);
        expect(await page.getByRole('button', { name: 'Send' }).isEnabled()).toBe(true);
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    }, 30000);

    it('a running task canceled from the page: the state shows it, the model stops being read', async () => {
      const tab = await newChat('planner');
      const { page } = tab;
      try {
        await send(page, 'Slow answer please');
        await log(page).getByText('slow3').waitFor();
        await page.getByRole('button', { name: 'Cancel the task' }).click();
        await log(page).getByText('The task was canceled.').waitFor();
        await page.getByRole('button', { name: 'Cancel the task' }).waitFor({ state: 'detached' });
        expect(await page.getByRole('button', { name: 'Send' }).isEnabled()).toBe(true);
        expect(await log(page).textContent()).not.toContain('slow399');
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    }, 30000);

    it('a dropped stream: the page says it reconnects, re-joins the task and shows the whole answer once', async () => {
      const tab = await newChat('planner');
      const { page } = tab;
      try {
        await send(page, 'Steady answer please');
        await log(page).getByText('steady3').waitFor();
        relay.drop();
        await shows(page.getByRole('status'), 'Reconnecting to the task');
        await log(page).getByText('steady59').waitFor();
        const text = (await log(page).textContent()) ?? '';
        expect(text.split('steady10 ').length).toBe(2);
        await page.getByRole('button', { name: 'Cancel the task' }).waitFor({ state: 'detached' });
        expect((await page.getByRole('status').textContent()) ?? '').toBe('');
      } finally {
        await tab.close();
      }
    }, 30000);

    it('a file attached as a part, with its name and type; one too big is refused with a clear message', async () => {
      const tab = await newChat('helper');
      const { page } = tab;
      try {
        const files = page.getByLabel('Attach files');
        await files.setInputFiles({
          name: 'huge.bin',
          mimeType: 'application/octet-stream',
          buffer: Buffer.alloc(1100 * 1024),
        });
        await shows(page.getByRole('alert'), 'Not attached: attachments may weigh 1024 KB together');
        await files.setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello notes\n') });
        await page
          .getByRole('list', { name: 'Attached files' })
          .getByRole('button', { name: 'Remove notes.txt' })
          .waitFor();
        await send(page, 'read the notes');
        await log(page).getByText('agent: read the notes').waitFor();
        await shows(log(page), 'Attached notes.txt (text/plain, 12 B)');
        const received = agent.received.at(-1)!;
        const file = received.parts.find((part) => part.content?.$case === 'raw');
        expect(file).toMatchObject({ filename: 'notes.txt', mediaType: 'text/plain' });
        expect(Buffer.from(file!.content!.value as Uint8Array).toString()).toBe('hello notes\n');

        // The stored message keeps the file: a reload shows it attached.
        await page.reload();
        await shows(log(page), 'Attached notes.txt (text/plain, 12 B)');
        const sessionId = decodeURIComponent(page.url().split('/').at(-1)!);
        const history = await ok('session/history', { sessionId });
        const stored = Task.fromJSON(history.items.at(-1));
        const user = stored.history.find((m) => m.role === Role.ROLE_USER)!;
        expect(user.parts.map((p) => p.filename)).toContain('notes.txt');
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    }, 30000);

    it("an external agent's question shown, and answered by the next message", async () => {
      const tab = await newChat('helper');
      const { page } = tab;
      try {
        await send(page, 'ask me');
        await log(page).getByText('Which colour should it be?').waitFor();
        await send(page, 'blue');
        await log(page).getByText('You chose blue.').waitFor();
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    }, 30000);

    it('hostile model text is shown as text, at phone width, with no script error and no axe violation', async () => {
      const tab = await newChat('planner', PHONE);
      const { page } = tab;
      try {
        await send(page, 'Hostile text please');
        await log(page).getByText('<img src=x onerror=alert(1)><script>alert(2)</script>').waitFor();
        expect(await log(page).locator('img, script').count()).toBe(0);
        // Control characters are shown as marks, never passed to the screen as they are.
        const text = (await log(page).textContent()) ?? '';
        expect(text).not.toMatch(/[\u0007\u001b\u202e]/);
        expect(text).toContain('\uFFFD[31mred');
        // Nothing is wider than the phone's screen.
        const wide = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
        expect(wide).toBeLessThanOrEqual(PHONE.width);
        expect(await accessibilityViolations(page)).toEqual([]);
        await screenshot(page, 'chat-phone');
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    }, 30000);
  });
});
