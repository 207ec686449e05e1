import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, type CleverAgentsClient } from '../../packages/client/src/node.js';
import {
  PHONE,
  accessibilityViolations,
  expectNoProblems,
  screenshot,
  signedInConsole,
  describeInChromium,
} from '../support/console-browser.js';
import { HOSTILE, chat, gate, startConsoleModel } from '../support/console-agents.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import type { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { startServerWithBootstrapKey, type TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The console's session pages in a real Chromium against a real server (the local backend on a scripted model
 * that reports token usage): the list by status and searched, one session's facts, usage against its budget,
 * plans, tasks and history, and closing it. A session's title carries markup and a control character.
 */

const TITLE = `${HOSTILE} budget review \u0007`;

describeInChromium("the console's session pages in Chromium", (browser) => {
  describe.each(databaseTargets())('on $kind', (target) => {
    let model: OpenAiCompatibleEndpoint;
    let db: TestDatabase;
    let server: TestServer;
    let memberKey: string;
    let owner: CleverAgentsClient;
    let member: CleverAgentsClient;
    let budgeted: string;
    let planned: string;

    beforeAll(async () => {
      const started = await startConsoleModel();
      model = started.model;
      db = await target.create();
      let ownerKey: string;
      ({ server, bootstrapKey: ownerKey } = await startServerWithBootstrapKey(db, {
        CLEVERAGENTS_AUTH_SCHEMES: 'apiKey',
        ...started.env,
      }));
      owner = await connect({ server: server.baseUrl, apiKey: ownerKey });
      memberKey = (await owner.apiKeys.create({ name: 'member', role: 'member' })).key;
      member = await connect({ server: server.baseUrl, apiKey: memberKey });
      budgeted = (
        await member.sessions.create({
          title: TITLE,
          budget: { tokens: 1000, toolCalls: 5, wallTimeSeconds: 600 },
        })
      ).sessionId;
      await chat(member, budgeted, 'hello');
      await chat(member, budgeted, 'and again');
      await chat(member, (await member.sessions.create({ title: 'Quarterly numbers' })).sessionId, 'hi');
      // A plan approved at its gate: the session has a plan, and a task that carried it out.
      const plan = await gate(member, 'plan', { title: 'Planned work' });
      planned = plan.sessionId;
      await member.approvals.answer({ approvalId: plan.approvalId, decision: 'approve' });
    }, 60000);

    afterAll(async () => {
      await ifAssigned(member)?.close();
      await ifAssigned(owner)?.close();
      await ifAssigned(server)?.close();
      await ifAssigned(db)?.cleanup();
      await ifAssigned(model)?.close();
    });

    it('lists the sessions, titles as text; filters by status; searches what is loaded', async () => {
      const tab = await signedInConsole(browser(), server.baseUrl, memberKey, { path: 'sessions', viewport: PHONE });
      try {
        const { page } = tab;
        const list = page.locator('ul.sessions');
        const hostile = list.getByRole('link', { name: `${HOSTILE} budget review \\u{7}` });
        await hostile.waitFor();
        expect(await list.locator('img').count()).toBe(0);
        await list.getByRole('link', { name: 'Quarterly numbers' }).waitFor();
        await list.getByRole('link', { name: 'Planned work' }).waitFor();
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
        expect(await accessibilityViolations(page)).toEqual([]);
        await screenshot(page, 'sessions-phone');

        await page.getByRole('searchbox', { name: 'Search' }).fill('quarterly');
        await page.getByText('1 of the 3 sessions loaded match by title, actor, owner or id').waitFor();
        expect(await list.getByRole('link').allTextContents()).toEqual(['Quarterly numbers']);
        await page.getByRole('searchbox', { name: 'Search' }).fill(budgeted.slice(-8).toLowerCase());
        expect(await list.getByRole('link').count()).toBe(1);
        await hostile.waitFor();

        await page.getByRole('searchbox', { name: 'Search' }).fill('');
        await page.getByRole('combobox', { name: 'Status' }).selectOption('closed');
        await page.getByText('No closed session in default.').waitFor();
        // A short page starts right under the navigation too, not further down the screen.
        const links = await page.getByRole('navigation', { name: 'Console' }).getByRole('link').last().boundingBox();
        const heading = await page.getByRole('heading', { level: 1, name: 'Sessions' }).boundingBox();
        expect(heading!.y - (links!.y + links!.height)).toBeLessThan(64);
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    });

    it('opens a session: its facts, usage against its budget, tasks and history; closing asks first', async () => {
      const tab = await signedInConsole(browser(), server.baseUrl, memberKey, { path: 'sessions' });
      try {
        const { page } = tab;
        await page.getByRole('link', { name: `${HOSTILE} budget review \\u{7}` }).click();
        await page.getByRole('heading', { level: 1, name: `${HOSTILE} budget review \\u{7}` }).waitFor();
        const session = await member.sessions.get({ sessionId: budgeted });
        expect(session.usage.tokens).toBeGreaterThan(0);
        const tokens = page.getByRole('meter', { name: 'Tokens' });
        await tokens.waitFor();
        expect([await tokens.getAttribute('value'), await tokens.getAttribute('max')]).toEqual([
          String(session.usage.tokens),
          '1000',
        ]);
        await page.getByText(`${session.usage.tokens.toLocaleString('en-US')} of 1,000`).waitFor();
        await page.getByRole('meter', { name: 'Tool calls' }).waitFor();
        await page.getByRole('meter', { name: 'Wall time' }).waitFor();

        const history = page.locator('ol.history');
        await history.getByText('hello', { exact: true }).waitFor();
        await history.getByText('and again', { exact: true }).waitFor();
        expect(await history.getByText('Hello there.', { exact: true }).count()).toBe(2);
        const rows = page.getByRole('table').getByRole('row');
        await rows.nth(2).waitFor();
        expect(await rows.count()).toBe(3);
        expect(await page.getByRole('table').getByRole('cell', { name: 'completed' }).count()).toBe(2);
        await page.getByText('No plan in this session.').waitFor();
        const chatLink = page.getByRole('link', { name: 'Open in chat' });
        expect(await chatLink.getAttribute('href')).toBe(`/console/chat/${budgeted}`);
        expect(await accessibilityViolations(page)).toEqual([]);
        await screenshot(page, 'session');

        await page.getByRole('button', { name: 'Close session…' }).click();
        await page.getByRole('button', { name: 'Keep it open' }).click();
        expect((await member.sessions.get({ sessionId: budgeted })).status).toBe('open');
        await page.getByRole('button', { name: 'Close session…' }).click();
        await page.getByRole('button', { name: 'Close the session' }).click();
        await page
          .locator('.session-facts')
          .getByText(/^closed/)
          .waitFor();
        await page.getByRole('button', { name: 'Close session…' }).waitFor({ state: 'detached' });
        expect(await member.sessions.get({ sessionId: budgeted })).toMatchObject({ status: 'closed' });
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    });

    it('pages through a long list: a page at a time, the search saying how much it covers', async () => {
      for (let n = 1; n <= 24; n += 1) await member.sessions.create({ title: `Batch ${n}` });
      const tab = await signedInConsole(browser(), server.baseUrl, memberKey, { path: 'sessions' });
      try {
        const { page } = tab;
        const links = page.locator('ul.sessions').getByRole('link');
        await page.getByRole('link', { name: 'Batch 24' }).waitFor();
        expect(await links.count()).toBe(25);
        await page.getByRole('searchbox', { name: 'Search' }).fill('budget');
        await page
          .getByText('0 of the 25 sessions loaded match by title, actor, owner or id (25 of 27 loaded')
          .waitFor();
        await page.getByRole('button', { name: 'Load more sessions' }).click();
        await page.getByText('1 of the 27 sessions loaded match by title, actor, owner or id.').waitFor();
        await page.getByRole('searchbox', { name: 'Search' }).fill('');
        expect(await links.count()).toBe(27);
        await page.getByRole('button', { name: 'Load more sessions' }).waitFor({ state: 'detached' });
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    });

    it("a session's plans, as the plan gate recorded them", async () => {
      const tab = await signedInConsole(browser(), server.baseUrl, memberKey, { path: `sessions/${planned}` });
      try {
        const plans = await member.plans.list({ sessionId: planned });
        expect(plans.items).toHaveLength(1);
        const item = tab.page.locator('ul.plain li').filter({ hasText: '2 steps' });
        await item.waitFor();
        expect(await item.textContent()).toContain(plans.items[0].status);
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    });
  });
});
