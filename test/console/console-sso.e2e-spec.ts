import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import {
  accessibilityViolations,
  assertConsoleBuilt,
  expectNoProblems,
  launchChromium,
  openConsole,
  screenshot,
  type ConsoleTab,
} from '../support/console-browser.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { ACCOUNT_GROUP, startLoginProvider, type LoginProvider } from '../support/oidc-login-provider.js';
import { describeNeeding } from '../support/requirements.js';
import { chromium } from '../support/screen-image.js';
import { startServer, type TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';
import { until } from '../support/wait.js';

/*
 * Single sign-on in the web console, in a real Chromium against the real server and a real OpenID provider
 * (oidc-provider, its development login and consent pages): the round trip back to the page the person
 * started from, the tokens kept for the tab only, refreshed before they expire and after a 401, revoked on
 * sign-out, and the provider's refusals and stale answers said plainly on the sign-in page.
 */

const TOKENS_ITEM = 'cleveragents.console.tokens';
const PENDING_ITEM = 'cleveragents.console.signIn';

interface KeptTokens {
  accessToken: string;
  refreshToken: string;
  expiresAt: number;
}

/** The claims of a JWT (the test reads the access token's expiry; the server checks its signature). */
function claimsOf(jwt: string): { exp: number; sub: string } {
  return JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8')) as { exp: number; sub: string };
}

/**
 * What the tab sent the server (its bearer tokens, the answers' statuses) and the provider (its calls and
 * answers), the addresses it showed, and what went wrong on the console's own origin (script errors, a
 * refused call): the provider's pages are its own, and reach for a web font this machine cannot.
 */
interface Traffic {
  calls: { token: string; status: number }[];
  provider: { path: string; body: string; status?: number; answer?: string }[];
  addresses: string[];
  problems: string[];
}

function watch(tab: ConsoleTab, server: TestServer, idp: LoginProvider): Traffic {
  const traffic: Traffic = { calls: [], provider: [], addresses: [], problems: [] };
  const { page } = tab;
  page.on('response', async (response) => {
    const request = response.request();
    const url = new URL(request.url());
    if (url.origin === server.baseUrl && request.method() === 'POST') {
      const token = (request.headers().authorization as string | undefined)?.replace(/^Bearer /, '') ?? '';
      traffic.calls.push({ token, status: response.status() });
    }
    if (url.origin === idp.issuer && request.method() === 'POST') {
      const call = { path: url.pathname, body: request.postData() ?? '', status: response.status() };
      traffic.provider.push(call);
      Object.assign(call, { answer: await response.text().catch(() => '') });
    }
  });
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) traffic.addresses.push(frame.url());
  });
  page.on('pageerror', (error) => traffic.problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    const at = message.location().url;
    if (message.type() === 'error' && (!at || new URL(at).origin === server.baseUrl)) {
      traffic.problems.push(`console error: ${message.text()} (${at})`);
    }
  });
  return traffic;
}

/** A tab's storage as its page sees it (the tests' types know no DOM). */
interface WebStorage {
  readonly length: number;
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}
type Storages = Record<'sessionStorage' | 'localStorage', WebStorage>;

const itemOf = (page: Page, item: string): Promise<string | null> =>
  page.evaluate((key) => (globalThis as unknown as Storages).sessionStorage.getItem(key), item);
const setItem = (page: Page, item: string, value: unknown): Promise<void> =>
  page.evaluate(([key, text]) => (globalThis as unknown as Storages).sessionStorage.setItem(key, text), [
    item,
    JSON.stringify(value),
  ] as const);
const itemCount = (page: Page, storage: keyof Storages): Promise<number> =>
  page.evaluate((name) => (globalThis as unknown as Storages)[name].length, storage);

const kept = async (page: Page): Promise<KeptTokens | null> =>
  JSON.parse((await itemOf(page, TOKENS_ITEM)) ?? 'null') as KeptTokens | null;

/** From the console's sign-in page: through the provider's login and consent pages, back to the console. */
async function signInThroughProvider(page: Page, idp: LoginProvider, person: string): Promise<void> {
  await page.getByRole('button', { name: 'Sign in with single sign-on' }).click();
  await page.waitForURL((url) => url.origin === idp.issuer);
  await page.locator('input[name="login"]').fill(person);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** The sign-in page's alert, once it shows. */
async function signInAlert(page: Page): Promise<string> {
  const alert = page.getByRole('alert');
  await alert.waitFor();
  return (await alert.textContent()) ?? '';
}

describeNeeding(chromium(), 'web console: single sign-on', () => {
  describe.each(databaseTargets())('on $kind', (target) => {
    let idp: LoginProvider;
    let db: TestDatabase;
    let server: TestServer;
    let browser: Browser;
    const tabs: ConsoleTab[] = [];

    const open = async (path = ''): Promise<ConsoleTab> => {
      const tab = await openConsole(browser, server.baseUrl, { path });
      tabs.push(tab);
      return tab;
    };

    beforeAll(async () => {
      assertConsoleBuilt();
      idp = await startLoginProvider({ deviceFlow: false });
      db = await target.create();
      server = await startServer(db, {
        CLEVERAGENTS_AUTH_SCHEMES: 'oidc,apiKey',
        OIDC_ISSUER_URL: idp.issuer,
        OIDC_AUDIENCE: idp.audience,
        OIDC_ROLE_MAP: JSON.stringify({ [ACCOUNT_GROUP]: 'default:member' }),
        OIDC_CONSOLE_CLIENT_ID: idp.consoleClientId,
        // An expired access token is refused at once: a call after its expiry needs the refreshed one.
        OIDC_CLOCK_SKEW_SECONDS: '0',
      });
      browser = await launchChromium();
    }, 120000);

    afterAll(async () => {
      for (const tab of tabs) await tab.close().catch(() => undefined);
      await ifAssigned(browser)?.close();
      await ifAssigned(server)?.close();
      await ifAssigned(db)?.cleanup();
      await ifAssigned(idp)?.close();
    });

    it('the sign-in page offers single sign-on and an API key, and passes axe', async () => {
      const tab = await open();
      await tab.page.getByRole('button', { name: 'Sign in with single sign-on' }).waitFor();
      await tab.page.getByLabel('API key', { exact: true }).waitFor();
      expect(await accessibilityViolations(tab.page)).toEqual([]);
      await screenshot(tab.page, 'sign-in');
      expectNoProblems(tab);
    });

    it('signs in at the provider and lands on the deep link, the person and the group role in the header; the tokens stay in this tab', async () => {
      const tab = await open('approvals');
      const traffic = watch(tab, server, idp);
      await signInThroughProvider(tab.page, idp, 'ada');

      expect(new URL(tab.page.url()).pathname).toBe('/console/approvals');
      expect(new URL(tab.page.url()).search).toBe('');
      await tab.page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
      const who = tab.page.locator('header .who');
      expect(await who.textContent()).toContain('ada');
      expect(await who.locator('.badge').textContent()).toBe('member');

      // The code came back in the address once; no token ever appeared in an address.
      const tokens = (await kept(tab.page))!;
      expect(tokens).toEqual(
        expect.objectContaining({ accessToken: expect.any(String), refreshToken: expect.any(String) }),
      );
      expect(claimsOf(tokens.accessToken).sub).toBe('ada');
      expect(traffic.addresses.filter((address) => address.includes('code='))).toHaveLength(1);
      for (const address of traffic.addresses) {
        expect(address).not.toContain(tokens.accessToken);
        expect(address).not.toContain(tokens.refreshToken);
      }
      // The round trip's secrets are gone, nothing is in local storage, and every call carried the access token.
      expect(await itemOf(tab.page, PENDING_ITEM)).toBeNull();
      expect(await itemCount(tab.page, 'localStorage')).toBe(0);
      expect(traffic.calls.length).toBeGreaterThan(0);
      expect(traffic.calls.every((call) => call.token === tokens.accessToken && call.status === 200)).toBe(true);

      // A reload of the tab stays signed in, with the same tokens and no new sign-in.
      await tab.page.reload();
      await tab.page.getByRole('button', { name: 'Sign out' }).waitFor();
      expect(new URL(tab.page.url()).pathname).toBe('/console/approvals');
      expect(await kept(tab.page)).toEqual(tokens);
      expect(traffic.provider.filter((call) => call.path === '/token')).toHaveLength(1);
      expect(await itemCount(tab.page, 'localStorage')).toBe(0);

      // Another window (a new browser context) is signed out.
      const other = await open('approvals');
      await other.page.getByRole('button', { name: 'Sign in with single sign-on' }).waitFor();
      expect(await kept(other.page)).toBeNull();
      expectNoProblems(other);
    });

    it('refreshes the access token before it expires, one refresh for calls made together', async () => {
      idp.accessTokenTtlSeconds = 5;
      try {
        const tab = await open('sessions');
        const traffic = watch(tab, server, idp);
        await signInThroughProvider(tab.page, idp, 'grace');
        await tab.page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
        const first = (await kept(tab.page))!;
        expect(claimsOf(first.accessToken).exp - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(5);

        // The token's lifetime has to pass: the server allows no clock skew here, so it refuses it from then on.
        await until(() => Date.now() > claimsOf(first.accessToken).exp * 1000 + 500, 'the access token to expire');
        const before = traffic.calls.length;
        // The overview asks for the approvals and the sessions at once.
        await tab.page.getByRole('link', { name: 'CleverAgents' }).click();
        await tab.page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
        await until(() => traffic.calls.length >= before + 2, "the overview's two calls");

        const after = traffic.calls.slice(before);
        const second = (await kept(tab.page))!;
        expect(second.accessToken).not.toBe(first.accessToken);
        expect(claimsOf(second.accessToken).exp).toBeGreaterThan(claimsOf(first.accessToken).exp);
        expect(after.length).toBeGreaterThan(0);
        expect(after).toEqual(after.map(() => ({ token: second.accessToken, status: 200 })));
        const refreshes = traffic.provider.filter((call) => call.body.includes('grant_type=refresh_token'));
        expect(refreshes).toHaveLength(1);
        expect(traffic.problems).toEqual([]);
      } finally {
        idp.accessTokenTtlSeconds = 300;
      }
    });

    it('renews a token the server refuses once, and returns to the sign-in page when the provider refuses the refresh', async () => {
      const tab = await open();
      const traffic = watch(tab, server, idp);
      await signInThroughProvider(tab.page, idp, 'hedy');
      const signedIn = (await kept(tab.page))!;

      // A token the console takes for good (its clock behind the server's) that the server refuses.
      const stale = { ...signedIn, accessToken: `${signedIn.accessToken.slice(0, -4)}AAAA` };
      await setItem(tab.page, TOKENS_ITEM, stale);
      const before = traffic.calls.length;
      await tab.page.reload();
      await tab.page.getByRole('button', { name: 'Sign out' }).waitFor();
      const renewed = (await kept(tab.page))!;
      expect(renewed.accessToken).not.toBe(stale.accessToken);
      // The overview's calls from before the reload may still land here, with the token it had then.
      const since = traffic.calls.slice(before).filter((call) => call.token !== signedIn.accessToken);
      expect(since).toEqual([
        { token: stale.accessToken, status: 401 },
        ...since.slice(1).map(() => ({ token: renewed.accessToken, status: 200 })),
      ]);

      // Refused again, with a refresh token the provider does not know: the sign-in ends.
      const dead = { ...renewed, accessToken: stale.accessToken, refreshToken: 'not-a-refresh-token' };
      await setItem(tab.page, TOKENS_ITEM, dead);
      await tab.page.reload();
      expect(await signInAlert(tab.page)).toContain('Your sign-in has ended at the provider (invalid_grant');
      await tab.page.getByRole('button', { name: 'Sign in with single sign-on' }).waitFor();
      expect(await kept(tab.page)).toBeNull();
    });

    it('sign-out revokes the tokens at the provider and forgets them', async () => {
      const tab = await open();
      const traffic = watch(tab, server, idp);
      await signInThroughProvider(tab.page, idp, 'lin');
      const tokens = (await kept(tab.page))!;

      await tab.page.getByRole('button', { name: 'Sign out' }).click();
      await tab.page.getByRole('button', { name: 'Sign in with single sign-on' }).waitFor();
      expect(await kept(tab.page)).toBeNull();
      expect(await itemCount(tab.page, 'sessionStorage')).toBe(0);
      expect(await itemCount(tab.page, 'localStorage')).toBe(0);
      const revocations = traffic.provider.filter((call) => call.path === '/token/revocation');
      await until(() => revocations.every((call) => call.answer !== undefined), "the revocations' answers");
      // This provider's access tokens are JWTs, which it cannot revoke: they end with their lifetime.
      expect(revocations.map((call) => [new URLSearchParams(call.body).get('token_type_hint'), call.status])).toEqual([
        ['refresh_token', 200],
        ['access_token', 400],
      ]);
      expect(revocations[1].answer).toContain('unsupported_token_type');
      const refused = await idp.refresh(tokens.refreshToken, idp.consoleClientId);
      expect([refused.status, refused.body.error]).toEqual([400, 'invalid_grant']);
      expect(traffic.problems).toEqual([]);
    });

    it('a sign-in cancelled at the provider ends on the sign-in page, saying so', async () => {
      const tab = await open('approvals');
      await tab.page.getByRole('button', { name: 'Sign in with single sign-on' }).click();
      await tab.page.waitForURL((url) => url.origin === idp.issuer);
      await tab.page.getByRole('link', { name: '[ Cancel ]' }).click();

      expect(await signInAlert(tab.page)).toContain(
        'The sign-in was cancelled or refused at the provider (access_denied',
      );
      expect(new URL(tab.page.url()).pathname).toBe('/console/');
      expect(new URL(tab.page.url()).search).toBe('');
      expect(await itemOf(tab.page, PENDING_ITEM)).toBeNull();
      expect(await accessibilityViolations(tab.page)).toEqual([]);
      await screenshot(tab.page, 'sign-in-refused');
    });

    it("the provider's answer is taken once, and only by the sign-in that asked for it", async () => {
      const tab = await open();
      const traffic = watch(tab, server, idp);
      await signInThroughProvider(tab.page, idp, 'ken');
      const answer = traffic.addresses.find((address) => address.includes('/console/signed-in?'))!;
      expect(answer).toContain('code=');

      // The same answer again (a reload of it, or a replay): no sign-in is waiting for it.
      await tab.page.goto(answer);
      expect(await signInAlert(tab.page)).toContain('belongs to no sign-in started in this tab');

      // A sign-in under way gets another sign-in's answer: its state does not match.
      const other = await open();
      await other.page.getByRole('button', { name: 'Sign in with single sign-on' }).click();
      await other.page.waitForURL((url) => url.origin === idp.issuer);
      await other.page.goto(answer);
      expect(await signInAlert(other.page)).toContain('does not match the sign-in this tab started');
      expect(await kept(other.page)).toBeNull();
    });
  });
});
