import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
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
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { keyedCalls, startServerWithBootstrapKey, type TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The web console's frame in a real Chromium against a real server: signing in with an API key kept for the
 * tab only, a deep link kept across the sign-in, navigation by role, signing out, a phone-sized screen, and
 * a hostile name shown as text. Every page is checked for script errors and CSP refusals.
 */
describeInChromium('web console: the frame', (browser) => {
  describe.each(databaseTargets())('on $kind', (target) => {
    let database: TestDatabase;
    let server: TestServer;
    let ownerKey: string;
    const keyed = keyedCalls(() => server);

    beforeAll(async () => {
      database = await target.create();
      ({ server, bootstrapKey: ownerKey } = await startServerWithBootstrapKey(database));
    }, 120000);

    afterAll(async () => {
      await ifAssigned(server)?.close();
      await ifAssigned(database)?.cleanup();
    });

    it('signs in with an API key kept in the tab only, and signs out', async () => {
      const tab = await openConsole(browser(), server.baseUrl);
      try {
        const { page } = tab;
        await page.getByRole('heading', { name: /^Sign in to / }).waitFor();
        // This server offers no single sign-on to the console.
        expect(await page.getByRole('button', { name: 'Sign in with single sign-on' }).count()).toBe(0);
        expect(await accessibilityViolations(page)).toEqual([]);
        await screenshot(page, 'sign-in-key');

        await signInWithKey(page, ownerKey);
        await page.getByRole('heading', { name: 'Overview' }).waitFor();
        await expect(page.locator('main').innerText()).resolves.toContain('default (owner)');
        expect(await page.evaluate(() => localStorage.length)).toBe(0);
        expect(await accessibilityViolations(page)).toEqual([]);
        await screenshot(page, 'overview');

        // A reload keeps the tab signed in; another browser context (another tab's storage) is signed out.
        await page.reload();
        await page.getByRole('heading', { name: 'Overview' }).waitFor();
        const other = await openConsole(browser(), server.baseUrl);
        await other.page.getByRole('heading', { name: /^Sign in to / }).waitFor();
        await other.close();

        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByRole('heading', { name: /^Sign in to / }).waitFor();
        expect(await page.evaluate(() => sessionStorage.getItem('cleveragents.console.apiKey'))).toBeNull();
        await page.reload();
        await page.getByRole('heading', { name: /^Sign in to / }).waitFor();
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    }, 90000);

    it('refuses a wrong key with the server’s reason and keeps nothing', async () => {
      const tab = await openConsole(browser(), server.baseUrl);
      try {
        const { page } = tab;
        await page
          .getByLabel('API key', { exact: true })
          .fill('ca_00000000000000000000000000_not-a-real-key-at-all-xxxxxxxxxxxxxxxxxx');
        await page.getByRole('button', { name: 'Sign in with the key' }).click();
        const alert = page.getByRole('alert');
        await alert.waitFor();
        expect(await alert.innerText()).toMatch(/Signing in failed[\s\S]*AUTHENTICATION_REQUIRED|UNAUTHENTICATED|-32/);
        expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
        // The failed sign-in is an error the page shows, not a script error; the 401 itself is logged by Chromium.
        expect(tab.problems.filter((problem) => !/status of 401/.test(problem))).toEqual([]);
      } finally {
        await tab.close();
      }
    }, 60000);

    it('opens a deep link after the sign-in, and says when a page does not exist', async () => {
      const tab = await openConsole(browser(), server.baseUrl, { path: 'sessions' });
      try {
        const { page } = tab;
        await signInWithKey(page, ownerKey);
        await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
        expect(new URL(page.url()).pathname).toBe('/console/sessions');
        await page.goto(`${server.baseUrl}/console/no/such/page`);
        await page.getByRole('heading', { name: 'Not found' }).waitFor();
        // The browser's back button goes through the console's own history.
        await page.getByRole('link', { name: 'Back to the overview' }).click();
        await page.getByRole('heading', { name: 'Overview' }).waitFor();
        await page.goBack();
        await page.getByRole('heading', { name: 'Not found' }).waitFor();
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    }, 60000);

    it('shows a member no administration, and a hostile session title as text', async () => {
      const created = await keyed.ok(ownerKey, 'auth/apikey/create', { name: 'frame-member', role: 'member' });
      const memberKey = created.key as string;
      const hostile = '<img src=x onerror="window.__pwned=1">\u001b[31m\u202e' + 'x'.repeat(150);
      await keyed.ok(memberKey, 'session/create', { title: hostile });
      const tab = await signedInConsole(browser(), server.baseUrl, memberKey);
      try {
        const { page } = tab;
        await page.getByRole('heading', { name: 'Overview' }).waitFor();
        const latest = page.getByRole('link', { name: /^<img src=x onerror=/ });
        await latest.waitFor();
        expect(await latest.innerText()).toContain('<img src=x onerror="window.__pwned=1">');
        expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
        expect(await page.locator('main img').count()).toBe(0);
        const nav = page.getByRole('navigation', { name: 'Console' });
        expect(await nav.getByRole('link', { name: 'API keys' }).count()).toBe(0);
        expect(await nav.getByRole('link', { name: 'Chat' }).count()).toBe(1);
        await page.goto(`${server.baseUrl}/console/admin/keys`);
        await page.getByRole('alert').filter({ hasText: 'needs the admin role in default' }).waitFor();
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    }, 60000);

    it('fits a phone-sized screen', async () => {
      const tab = await signedInConsole(browser(), server.baseUrl, ownerKey, { viewport: PHONE });
      try {
        const { page } = tab;
        await page.getByRole('heading', { name: 'Overview' }).waitFor();
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBeLessThanOrEqual(0);
        await expect(page.getByRole('link', { name: 'Approvals' }).isVisible()).resolves.toBe(true);
        expect(await accessibilityViolations(page)).toEqual([]);
        await screenshot(page, 'overview-phone');
        expectNoProblems(tab);
      } finally {
        await tab.close();
      }
    }, 60000);
  });
});
