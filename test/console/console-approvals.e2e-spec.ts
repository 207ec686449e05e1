import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskState } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Locator } from 'playwright-core';
import { connect, type CleverAgentsClient } from '../../packages/client/src/node.js';
import {
  PHONE,
  accessibilityViolations,
  expectNoProblems,
  openConsole,
  screenshot,
  signInWithKey,
  signedInConsole,
  describeInChromium,
} from '../support/console-browser.js';
import { COMMAND, HOSTILE, gate, startConsoleModel } from '../support/console-agents.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import type { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { startServerWithBootstrapKey, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The console's approval pages in a real Chromium against a real server: the local backend on a scripted model
 * stops at real plan and command gates under the `manual` profile, and a real webhook receiver on loopback
 * gets the signed link a chat tool would show. Each principal is an API key: the requester (a member),
 * another member, an approver (admin).
 */

/** Where webhooks post: the bodies received, in order. */
async function startReceiver(): Promise<{ url: string; bodies: Record<string, any>[]; close(): Promise<void> }> {
  const bodies: Record<string, any>[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, any>);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    bodies,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describeInChromium("the console's approval pages in Chromium", (browser) => {
  describe.each(databaseTargets())('on $kind', (target) => {
    let model: OpenAiCompatibleEndpoint;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let db: TestDatabase;
    let server: TestServer;
    let ownerKey: string;
    let memberKey: string;
    let otherKey: string;
    let adminKey: string;
    let owner: CleverAgentsClient;
    let member: CleverAgentsClient;
    let memberSubject: string;

    /** The approval card in the list whose heading is `name`. */
    const card = (page: import('playwright-core').Page, name: string | RegExp): Locator =>
      page.getByRole('article', { name });

    beforeAll(async () => {
      const started = await startConsoleModel();
      model = started.model;
      receiver = await startReceiver();
      db = await target.create();
      ({ server, bootstrapKey: ownerKey } = await startServerWithBootstrapKey(db, {
        CLEVERAGENTS_AUTH_SCHEMES: 'apiKey',
        CLEVERAGENTS_PUSH_ALLOWED_HOSTS: '127.0.0.1',
        CLEVERAGENTS_CONSOLE_URL: 'https://console.example.test/console',
        ...started.env,
      }));
      owner = await connect({ server: server.baseUrl, apiKey: ownerKey });
      memberKey = (await owner.apiKeys.create({ name: 'requester', role: 'member' })).key;
      otherKey = (await owner.apiKeys.create({ name: 'other', role: 'member' })).key;
      adminKey = (await owner.apiKeys.create({ name: 'approver', role: 'admin' })).key;
      member = await connect({ server: server.baseUrl, apiKey: memberKey });
      memberSubject = (await member.whoami()).subject;
      await owner.approvals.webhookCreate({ url: receiver.url });
      await owner.registry.create({
        kind: 'profile',
        name: 'hour',
        spec: { gate: 'manual', approvalTimeout: { seconds: 3600, onTimeout: 'keep-waiting' } },
      });
      await owner.registry.create({
        kind: 'profile',
        name: 'second',
        spec: { gate: 'manual', approvalTimeout: { seconds: 1, onTimeout: 'keep-waiting' } },
      });
    }, 60000);

    afterAll(async () => {
      await ifAssigned(member)?.close();
      await ifAssigned(owner)?.close();
      await ifAssigned(server)?.close();
      await ifAssigned(db)?.cleanup();
      await ifAssigned(receiver)?.close();
      await ifAssigned(model)?.close();
    });

    it('lists what waits, each subject in full and as text; approving from the list lets the task go on', async () => {
      const command = await gate(member, 'command');
      const plan = await gate(member, 'plan');
      const tab = await signedInConsole(browser(), server.baseUrl, memberKey, { path: 'approvals' });
      try {
        const { page } = tab;
        const planCard = card(page, 'Plan of 2 steps');
        await planCard.getByText(`Read the notes ${HOSTILE}`).waitFor();
        // Markup stays text, an escape sequence and a direction override are shown as escapes.
        expect(await planCard.locator('img').count()).toBe(0);
        await planCard.getByText('Summarise them \\u{1b}[2J\\u{202e}quietly').waitFor();
        await planCard.getByText(`asked by ${memberSubject}`, { exact: false }).waitFor();

        const commandCard = card(page, "Run rm -rf 'build dir'");
        await commandCard.locator('pre.command').filter({ hasText: "rm -rf 'build dir'" }).waitFor();
        await commandCard.getByText(`in ${COMMAND.cwd}`).waitFor();
        await commandCard.getByText('No time limit: it waits until answered').waitFor();
        expect(await accessibilityViolations(page)).toEqual([]);
        await screenshot(page, 'approvals');

        await planCard.getByRole('button', { name: 'Approve' }).click();
        await page
          .getByRole('status')
          .filter({ hasText: /Plan of 2 steps: approved\./ })
          .waitFor();
        await planCard.waitFor({ state: 'detached' });
        await commandCard.waitFor();
        expect(await member.approvals.get({ approvalId: plan.approvalId })).toMatchObject({
          state: 'approved',
          channel: 'method',
          answeredBy: memberSubject,
        });
        await until(
          async () => (await member.tasks.get({ id: plan.taskId })).status?.state === TaskState.TASK_STATE_COMPLETED,
          'the approved plan carried out',
        );
        expectNoProblems(tab);
      } finally {
        await tab.close();
        await member.approvals.answer({ approvalId: command.approvalId, decision: 'reject' });
      }
    });

    it('a webhook link opened cold on a phone: sign in, land on the approval, reject it with a reason', async () => {
      const plan = await gate(member, 'plan');
      await until(
        () => receiver.bodies.some((body) => body.approval?.approvalId === plan.approvalId),
        'the webhook delivered',
      );
      const link = new URL(receiver.bodies.find((body) => body.approval?.approvalId === plan.approvalId)!.link.url);
      expect(link.pathname).toBe(`/console/approvals/${plan.approvalId}`);
      expect(link.searchParams.get('namespace')).toBe('default');
      const path = `approvals/${plan.approvalId}${link.search}`;

      const tab = await openConsole(browser(), server.baseUrl, { path, viewport: PHONE });
      try {
        const { page } = tab;
        await signInWithKey(page, memberKey);
        await page.getByRole('heading', { level: 1, name: 'Plan of 2 steps' }).waitFor();
        expect(page.url()).toBe(`${server.baseUrl}/console/${path}`);
        await page.getByText(`Read the notes ${HOSTILE}`).waitFor();
        // Nothing wider than the phone: no sideways scrolling to read or answer it.
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
        expect(await accessibilityViolations(page)).toEqual([]);
        await screenshot(page, 'approval-phone');

        await page.getByRole('button', { name: 'Reject…' }).click();
        await page.getByLabel('Reason for rejecting (the agent is told)').fill('not this week');
        await page.getByRole('button', { name: 'Reject', exact: true }).click();
        await page.getByRole('status').filter({ hasText: 'Answered: rejected. The agent is told.' }).waitFor();
        await page.locator('.approval-facts').filter({ hasText: 'not this week' }).waitFor();
        // The answer reaches the task as the requester's message: it ends rejected, the reason in its status.
        await until(
          async () => (await member.tasks.get({ id: plan.taskId })).status?.state === TaskState.TASK_STATE_REJECTED,
          'the task rejected',
        );
        const task = await member.tasks.get({ id: plan.taskId });
        const said = task.status?.message?.parts.map((part) =>
          part.content?.$case === 'text' ? part.content.value : '',
        );
        expect(said?.join(' ')).toContain('The plan was rejected: not this week');
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    });

    it('an approval answered elsewhere meanwhile: ALREADY_ANSWERED as the server said it, the state refreshed', async () => {
      const plan = await gate(member, 'plan');
      const tab = await signedInConsole(browser(), server.baseUrl, memberKey, { path: `approvals/${plan.approvalId}` });
      try {
        const { page } = tab;
        await page.getByRole('button', { name: 'Reject…' }).click();
        await page.getByLabel('Reason for rejecting (the agent is told)').fill('too late');
        // Another client of the person approves it first.
        await member.approvals.answer({ approvalId: plan.approvalId, decision: 'approve' });
        await page.getByRole('button', { name: 'Reject', exact: true }).click();
        const alert = page.getByRole('alert');
        await alert.filter({ hasText: 'Your answer was not taken' }).waitFor();
        await alert.filter({ hasText: 'ALREADY_ANSWERED' }).waitFor();
        await page.locator('.approval-facts .state').filter({ hasText: 'approved' }).waitFor();
        await page.getByRole('button', { name: 'Approve' }).waitFor({ state: 'detached' });
        expect(await member.approvals.get({ approvalId: plan.approvalId })).toMatchObject({ state: 'approved' });
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    });

    it('an approval with a time limit shows the time left and what happens then', async () => {
      const plan = await gate(member, 'plan', { profile: 'hour' });
      const tab = await signedInConsole(browser(), server.baseUrl, memberKey, { path: 'approvals' });
      try {
        const left = /(59m \d+s|1h 0m) left, then it keeps waiting/;
        await card(tab.page, 'Plan of 2 steps').getByText(left).waitFor();
        await card(tab.page, 'Plan of 2 steps').getByRole('link', { name: 'Plan of 2 steps' }).click();
        await tab.page.locator('.approval-facts').filter({ hasText: left }).waitFor();
        expectNoProblems(tab);
      } finally {
        await tab.close();
        await member.approvals.answer({ approvalId: plan.approvalId, decision: 'reject' });
      }
    });

    it('an approval past its time limit that keeps waiting is shown overdue, still pending', async () => {
      const plan = await gate(member, 'plan', { profile: 'second' });
      const { expiresAt } = await member.approvals.get({ approvalId: plan.approvalId });
      // Its second runs out in real time, on the server's clock as on the page's.
      await until(() => Date.now() > Date.parse(expiresAt!) + 1000, 'the time limit passed');
      const tab = await signedInConsole(browser(), server.baseUrl, memberKey, { path: `approvals/${plan.approvalId}` });
      try {
        await tab.page
          .locator('.approval-facts .overdue')
          .filter({ hasText: / — Overdue by \d+s, still waiting$/ })
          .waitFor();
        await tab.page.locator('.approval-facts .state').filter({ hasText: 'pending' }).waitFor();
        expectNoProblems(tab);
      } finally {
        await tab.close();
        await member.approvals.answer({ approvalId: plan.approvalId, decision: 'reject' });
      }
    });

    it("a member sees only their own; an approver sees everyone's and answers another's with an edited plan", async () => {
      const plan = await gate(member, 'plan');
      const other = await signedInConsole(browser(), server.baseUrl, otherKey, { path: 'approvals' });
      try {
        await other.page.getByText('Nothing waits for an answer.').waitFor();
        await other.page.getByRole('combobox', { name: 'Whose' }).waitFor({ state: 'detached' });
        // The link says where to look; the other member's own credential reads nothing there.
        await other.page.goto(`${server.baseUrl}/console/approvals/${plan.approvalId}?namespace=default`);
        await other.page.getByRole('alert').filter({ hasText: 'APPROVAL_NOT_FOUND' }).waitFor();
        await other.page.getByText('It does not exist, or it is not yours to see').waitFor();
        expect(await accessibilityViolations(other.page)).toEqual([]);
      } finally {
        await other.close();
      }

      const tab = await signedInConsole(browser(), server.baseUrl, adminKey, { path: 'approvals' });
      try {
        const { page } = tab;
        const planCard = card(page, 'Plan of 2 steps');
        await planCard.getByText(`asked by ${memberSubject}`, { exact: false }).waitFor();
        await planCard.getByRole('button', { name: 'Edit…' }).click();
        await planCard.getByLabel('Step 1').fill('Read the notes, slowly');
        await planCard.getByRole('button', { name: 'Remove step 2' }).click();
        expect(await accessibilityViolations(page)).toEqual([]);
        await planCard.getByRole('button', { name: 'Approve these steps' }).click();
        await page
          .getByRole('status')
          .filter({ hasText: /Plan of 2 steps: edited\./ })
          .waitFor();
        const answered = await member.approvals.get({ approvalId: plan.approvalId });
        expect(answered).toMatchObject({
          state: 'edited',
          edited: [{ content: 'Read the notes, slowly', priority: 'high', status: 'pending' }],
        });
        expect(answered.answeredBy).not.toBe(memberSubject);
        await until(
          async () => (await member.tasks.get({ id: plan.taskId })).status?.state === TaskState.TASK_STATE_COMPLETED,
          'the edited plan carried out',
        );
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    });
  });
});
