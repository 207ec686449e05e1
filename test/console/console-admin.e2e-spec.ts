import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { CleverAgentsError, connect, type CleverAgentsClient } from '../../packages/client/src/node.js';
import type { NamespaceUsage, UsageCounts } from '../../packages/contract/src/index.js';
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
import { ifAssigned } from '../support/assigned.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { wireMessage } from '../support/orchestration.js';
import { keyedCalls, startServerWithBootstrapKey, type TestServer } from '../support/server.js';
import { until } from '../support/wait.js';

/*
 * The console's Administration pages in a real Chromium against a real server: keys made, shown once, used
 * and revoked from the page; the audit log of it; members set and removed, the last owner kept; child
 * namespaces made, edited against their revision and deleted; usage as the server sums it. A member sees
 * none of it and the page calls nothing. Hostile names stay text; axe finds nothing serious on any page.
 */

const HOSTILE = '<img src=x onerror=alert(1)>';
const HOSTILE_SUBJECT = 'oidc:<img/src=x/onerror=alert(1)>';
/** Methods only the administration pages call. */
const ADMIN_METHODS = [
  '_cleveragents/auth/apikey/',
  '_cleveragents/audit/',
  '_cleveragents/namespace/members/',
  '_cleveragents/namespace/usage',
  '_cleveragents/namespace/list',
];

/** A tab that also counts a dialog (an `alert` from injected markup) as a problem. */
function watchDialogs(tab: ConsoleTab): ConsoleTab {
  tab.page.on('dialog', (dialog) => {
    tab.problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return tab;
}

async function expectAccessible(page: Page): Promise<void> {
  expect(await accessibilityViolations(page)).toEqual([]);
}

/** The row of a table whose header cell is `name`. */
const rowOf = (page: Page, name: string) =>
  page.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) });

describeInChromium('the administration pages of the web console', (browser) => {
  describe.each(databaseTargets())('on $kind', (target) => {
    let model: OpenAiCompatibleEndpoint;
    let db: TestDatabase;
    let server: TestServer;
    let ownerKey: string;
    let owner: CleverAgentsClient;
    let ownerSubject: string;
    const tabs: ConsoleTab[] = [];
    const { rpc } = keyedCalls(() => server);

    const open = async (key: string, path: string, viewport?: { width: number; height: number }) => {
      const tab = watchDialogs(await signedInConsole(browser(), server.baseUrl, key, { path, viewport }));
      tabs.push(tab);
      return tab;
    };

    /** The members of `default` as the server lists them. */
    const members = async () =>
      (await owner.namespaces.membersList({ namespace: 'default' })).items.map(({ subject, role }) => ({
        subject,
        role,
      }));

    /** whoami as the key says, through a connection of its own. */
    const whoamiWith = async (key: string) => {
      const client = await connect({ server: server.baseUrl, apiKey: key });
      try {
        return await client.whoami();
      } finally {
        await client.close();
      }
    };

    beforeAll(async () => {
      model = await OpenAiCompatibleEndpoint.start({
        tokens: ['Fine.'],
        usage: { promptTokens: 10, completionTokens: 2 },
      });
      db = await target.create();
      ({ server, bootstrapKey: ownerKey } = await startServerWithBootstrapKey(db, {
        CLEVERAGENTS_AUTH_SCHEMES: 'apiKey',
        CLEVERAGENTS_ACTOR_BACKEND: 'local',
        CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
        CLEVERAGENTS_MODEL: 'usage',
      }));
      owner = await connect({ server: server.baseUrl, apiKey: ownerKey });
      ownerSubject = (await owner.whoami()).subject;
    }, 60_000);

    afterAll(async () => {
      for (const tab of tabs) await tab.close();
      await ifAssigned(owner)?.close();
      await ifAssigned(server)?.close();
      await ifAssigned(db)?.cleanup();
      await ifAssigned(model)?.close();
    });

    it('makes a key shown once, which works until it is revoked in the page; the audit log shows both', async () => {
      const tab = await open(ownerKey, 'admin/keys');
      const { page } = tab;
      await tab.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
      await page.getByLabel('Name', { exact: true }).fill('ci-deploy');
      await page.getByLabel('Role', { exact: true }).selectOption('member');
      await page.getByRole('button', { name: 'Create the key' }).click();

      const once = page.getByRole('region', { name: 'The key ci-deploy, shown once' });
      const key = (await once.locator('code').textContent()) ?? '';
      expect(key).toMatch(/^ca_[0-9a-z]{26}_[A-Za-z0-9_-]{43}$/);
      await once.getByRole('button', { name: 'Copy the key' }).click();
      await once.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
      await screenshot(page, 'admin-key-once');

      // The key works, as the member it was made for.
      expect(await whoamiWith(key)).toMatchObject({ defaultNamespace: 'default', defaultNamespaceRole: 'member' });

      // The page keeps it nowhere: dismissed, or the page left, it is gone.
      await once.getByRole('button', { name: 'I have stored it' }).click();
      await once.waitFor({ state: 'detached' });
      expect(await page.content()).not.toContain(key);
      const kept = await page.evaluate(() => JSON.stringify({ ...sessionStorage, ...localStorage }));
      expect(kept).not.toContain(key.slice(30));

      const row = rowOf(page, 'ci-deploy');
      await row.filter({ hasText: 'active' }).waitFor();
      await row.getByRole('button', { name: 'Revoke ci-deploy' }).click();
      await page
        .getByRole('group', { name: 'Revoke the key ci-deploy? It stops working at once.' })
        .getByRole('button', { name: 'Revoke the key' })
        .click();
      await page.getByRole('status').filter({ hasText: 'The key ci-deploy is revoked.' }).waitFor();
      await row.waitFor({ state: 'detached' });
      await page.getByLabel('Show revoked keys').check();
      await rowOf(page, 'ci-deploy').filter({ hasText: 'revoked' }).waitFor();
      await screenshot(page, 'admin-keys');
      await expectAccessible(page);

      const refusal = await whoamiWith(key).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(CleverAgentsError);
      expect((refusal as CleverAgentsError).reason).toBe('INVALID_API_KEY');

      // The audit log, filtered by action, names the key by its id: made, then revoked, by the owner.
      const { items } = await owner.apiKeys.list({ includeRevoked: true });
      const id = items.find((item) => item.name === 'ci-deploy')!.id;
      await page.getByRole('link', { name: 'Audit log' }).click();
      for (const action of ['apikey.create', 'apikey.revoke']) {
        await page.getByLabel('Action', { exact: true }).fill(action);
        await page.getByRole('button', { name: 'Apply' }).click();
        await page.waitForURL((url) => url.searchParams.get('action') === action);
        const { totalSize } = await owner.audit.list({ namespace: 'default', action });
        await page.getByText(`Page 1: ${totalSize} shown, ${totalSize} in all`).waitFor();
        // Every row is of that action; the key's is there, by the owner.
        expect(await page.getByRole('row').filter({ hasText: action }).count()).toBe(totalSize);
        await page.getByRole('row').filter({ hasText: id }).filter({ hasText: ownerSubject }).waitFor();
      }
      await page.getByRole('cell', { name: /"name": "ci-deploy"/ }).waitFor();
      await screenshot(page, 'admin-audit');
      await expectAccessible(page);
      expectNoProblems(tab);
    });

    it('sets and removes a member, and shows the server keeping the last owner', async () => {
      const tab = await open(ownerKey, 'admin/members');
      const { page } = tab;
      const add = async (subject: string, role: string) => {
        await page.getByLabel('Subject', { exact: true }).fill(subject);
        await page.getByLabel('Role', { exact: true }).selectOption(role);
        await page.getByRole('button', { name: 'Add the member' }).click();
        await rowOf(page, subject).waitFor();
      };
      await add(HOSTILE_SUBJECT, 'viewer');
      const row = rowOf(page, HOSTILE_SUBJECT);
      expect(await members()).toEqual([{ subject: HOSTILE_SUBJECT, role: 'viewer' }]);

      await row.getByRole('combobox', { name: `Role of ${HOSTILE_SUBJECT}` }).selectOption('member');
      await row.getByRole('button', { name: 'Set role' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `${HOSTILE_SUBJECT} is now member in default.` })
        .waitFor();
      expect(await members()).toEqual([{ subject: HOSTILE_SUBJECT, role: 'member' }]);
      expect(await page.locator('img').count()).toBe(0);

      // The only owner member of a top-level namespace may not step down nor leave: the server's refusal, as given.
      await add('oidc:alice', 'owner');
      const alice = rowOf(page, 'oidc:alice');
      await alice.getByRole('combobox', { name: 'Role of oidc:alice' }).selectOption('admin');
      await alice.getByRole('button', { name: 'Set role' }).click();
      await page.getByRole('alert').filter({ hasText: 'LAST_OWNER' }).waitFor();
      await screenshot(page, 'admin-members');
      await expectAccessible(page);
      await alice.getByRole('button', { name: 'Remove oidc:alice' }).click();
      await alice.getByRole('button', { name: 'Remove the member' }).click();
      await page.getByRole('alert').filter({ hasText: 'LAST_OWNER' }).waitFor();
      expect(await members()).toContainEqual({ subject: 'oidc:alice', role: 'owner' });

      await row.getByRole('button', { name: `Remove ${HOSTILE_SUBJECT}` }).click();
      await row.getByRole('button', { name: 'Remove the member' }).click();
      await row.waitFor({ state: 'detached' });
      expect(await members()).toEqual([{ subject: 'oidc:alice', role: 'owner' }]);
      expectNoProblems(tab);
    });

    it('pages through the members, and opens another namespace on its first page', async () => {
      await owner.namespaces.create({ namespace: 'default/team-b' });
      // One more than a page of members (the creator may be one already).
      const first = (await owner.namespaces.membersList({ namespace: 'default/team-b' })).totalSize;
      for (let n = first + 1; n <= 51; n += 1) {
        await owner.namespaces.membersSet({ namespace: 'default/team-b', subject: `oidc:user-${n}`, role: 'viewer' });
      }
      const tab = await open(ownerKey, 'admin/namespaces');
      const { page } = tab;
      await rowOf(page, 'default/team-b').getByRole('button', { name: 'Work here in default/team-b' }).click();
      await page.getByRole('link', { name: 'Members' }).click();
      await page.getByText('Page 1: 50 shown, 51 in all').waitFor();
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.getByText('Page 2: 1 shown, 51 in all').waitFor();
      await page.getByRole('combobox', { name: /^Namespace/ }).selectOption('default');
      const { totalSize } = await owner.namespaces.membersList({ namespace: 'default' });
      await page.getByText(`Page 1: ${totalSize} shown, ${totalSize} in all`).waitFor();
      expect(await page.getByRole('alert').count()).toBe(0);
      expectNoProblems(tab);
    });

    it('offers an admin no owner role and no change to an owner', async () => {
      await owner.namespaces.membersSet({ namespace: 'default', subject: 'oidc:olga', role: 'owner' });
      await owner.namespaces.membersSet({ namespace: 'default', subject: 'oidc:vera', role: 'viewer' });
      await owner.namespaces.create({ namespace: 'default/team-c' });
      const { key } = await owner.apiKeys.create({ name: 'admin-key', role: 'admin' });
      const tab = await open(key, 'admin/members');
      const { page } = tab;
      const olga = rowOf(page, 'oidc:olga');
      await olga.filter({ hasText: 'owner' }).waitFor();
      expect(await olga.getByRole('combobox').count()).toBe(0);
      expect(await olga.getByRole('button').count()).toBe(0);
      const vera = rowOf(page, 'oidc:vera').getByRole('combobox', { name: 'Role of oidc:vera' });
      expect(await vera.locator('option:not([disabled])').allTextContents()).toEqual(['admin', 'member', 'viewer']);
      const add = page.getByLabel('Role', { exact: true });
      expect(await add.locator('option:not([disabled])').allTextContents()).toEqual(['admin', 'member', 'viewer']);
      await page.getByRole('link', { name: 'Namespaces' }).click();
      // Deleting a namespace is the owner's: an admin is offered the edit only.
      await rowOf(page, 'default/team-c').getByRole('button', { name: 'Edit default/team-c' }).waitFor();
      expect(await page.getByRole('button', { name: /^Delete / }).count()).toBe(0);
      await expectAccessible(page);
      expectNoProblems(tab);
    });

    it('makes a child namespace, saves it against its revision, and deletes it once empty', async () => {
      const tab = await open(ownerKey, 'admin/namespaces');
      const { page } = tab;
      await rowOf(page, 'default').waitFor();
      const description = `${'long '.repeat(300)}\u0007\u001b[31m`;
      await page.getByLabel('Name', { exact: true }).fill('team-a');
      await page.getByLabel('Display name (optional)').fill(HOSTILE);
      await page.getByLabel('Description (optional)').fill(description);
      await page.getByRole('button', { name: 'Create the namespace' }).click();
      const row = rowOf(page, 'default/team-a');
      await row.getByRole('cell', { name: HOSTILE, exact: true }).waitFor();
      expect(await owner.namespaces.get({ namespace: 'default/team-a' })).toMatchObject({
        displayName: HOSTILE,
        description: description.trim(),
      });
      expect(await page.locator('img').count()).toBe(0);
      await screenshot(page, 'admin-namespaces');
      await expectAccessible(page);

      // Changed elsewhere while the form was open: refused, and the form shows what the server now holds.
      await row.getByRole('button', { name: 'Edit default/team-a' }).click();
      await page.getByLabel('Display name', { exact: true }).fill('Team A');
      await owner.namespaces.update({ namespace: 'default/team-a', description: 'Changed elsewhere' });
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('alert').filter({ hasText: 'REVISION_CONFLICT' }).waitFor();
      await page.getByLabel('Description', { exact: true }).and(page.getByText('Changed elsewhere')).waitFor();
      await page.getByLabel('Display name', { exact: true }).fill('Team A');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').filter({ hasText: 'default/team-a is saved.' }).waitFor();
      expect(await owner.namespaces.get({ namespace: 'default/team-a' })).toMatchObject({
        displayName: 'Team A',
        description: 'Changed elsewhere',
        revision: 3,
      });

      const remove = async (slug: string) => {
        await rowOf(page, slug)
          .getByRole('button', { name: `Delete ${slug}` })
          .click();
        await rowOf(page, slug).getByRole('button', { name: 'Delete the namespace' }).click();
      };
      await owner.namespaces.create({ namespace: 'default/team-a/sub' });
      await page.getByRole('link', { name: 'Members' }).click();
      await page.getByRole('link', { name: 'Namespaces' }).click();
      await remove('default/team-a');
      await page.getByRole('alert').filter({ hasText: 'NAMESPACE_NOT_EMPTY' }).waitFor();
      await remove('default/team-a/sub');
      await rowOf(page, 'default/team-a/sub').waitFor({ state: 'detached' });
      await remove('default/team-a');
      await row.waitFor({ state: 'detached' });
      const gone = await owner.namespaces.get({ namespace: 'default/team-a' }).catch((error: unknown) => error);
      expect((gone as CleverAgentsError).reason).toBe('NAMESPACE_NOT_FOUND');
      expectNoProblems(tab);
    });

    it('shows a member no administration and calls no administration method', async () => {
      const { key } = await owner.apiKeys.create({ name: 'member-key', role: 'member' });
      const tab = await open(key, 'admin/keys');
      const { page } = tab;
      // Every call of a fresh load of the page, from the first.
      const bodies: string[] = [];
      page.on('request', (request) => {
        if (request.method() === 'POST') bodies.push(request.postData() ?? '');
      });
      await page.reload();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      await page.getByText('This page needs the admin role in default; you hold member there.').waitFor();
      expect(await page.getByRole('heading', { name: 'Administration', level: 2 }).count()).toBe(0);
      expect(await page.getByRole('link', { name: 'API keys' }).count()).toBe(0);
      await expectAccessible(page);
      await screenshot(page, 'admin-only');

      await page.goto(`${server.baseUrl}/console/admin/audit`);
      await page.getByText('This page needs the admin role in default; you hold member there.').waitFor();
      await page.waitForLoadState('networkidle');
      expect(bodies.some((body) => body.includes('_cleveragents/auth/whoami'))).toBe(true);
      expect(bodies.filter((body) => ADMIN_METHODS.some((method) => body.includes(method)))).toEqual([]);
      expectNoProblems(tab);
    });

    it('fits a phone', async () => {
      const tab = await open(ownerKey, 'admin/keys', PHONE);
      await tab.page.getByRole('heading', { name: 'Create a key' }).waitFor();
      const overflow = await tab.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await screenshot(tab.page, 'admin-keys-phone');
      expectNoProblems(tab);
    });

    it('shows the usage the server sums, in all, by actor and by member, over a window', async () => {
      const { key: memberKey } = await owner.apiKeys.create({ name: 'usage-member', role: 'member' });
      // Turns on the local backend against a model endpoint that reports its tokens, as in production.
      for (const [key, messages] of [
        [ownerKey, 2],
        [memberKey, 1],
      ] as const) {
        const made = await rpc(key, '_cleveragents/session/create', { namespace: 'default', actor: 'default' });
        for (let sent = 0; sent < messages; sent += 1) {
          const message = wireMessage(`Say something, ${sent}`, { contextId: made.json.result.sessionId });
          const answer = await rpc(key, 'SendMessage', { tenant: 'default', message });
          expect(answer.json.error).toBeUndefined();
        }
      }
      // A turn writes its last counts as it rests: wait until the server's sums stop moving.
      let report: NamespaceUsage | undefined;
      let last = '';
      await until(async () => {
        report = await owner.namespaces.usage({ namespace: 'default' });
        const now = JSON.stringify(report);
        const settled = report.totals.tasks === 3 && report.totals.tokens > 0 && now === last;
        last = now;
        return settled;
      }, 'the usage of the sessions settled');
      const { totals, byActor, byOwner } = report!;
      expect(byOwner).toHaveLength(2);

      const tab = await open(ownerKey, 'admin/usage');
      const { page } = tab;
      await page.getByRole('heading', { name: 'In all' }).waitFor();
      const count = (n: number) => n.toLocaleString('en-US');
      const wall = (ms: number) =>
        `${(ms / 1000).toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 })} s`;
      const facts = () =>
        page
          .locator('main dl.facts')
          .evaluate((dl) =>
            Object.fromEntries(
              [...dl.querySelectorAll('dt')].map((dt) => [dt.textContent, dt.nextElementSibling!.textContent]),
            ),
          );
      expect(await facts()).toEqual({
        Tokens: count(totals.tokens),
        'Tool calls': count(totals.toolCalls),
        'Wall time': wall(totals.wallTimeMs),
        Sessions: '2',
        Tasks: '3',
      });
      const rows = (name: string) =>
        page
          .getByRole('region', { name })
          .evaluate((frame) =>
            [...frame.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((cell) => cell.textContent)),
          );
      const cells = (group: UsageCounts, name: string) => [
        name,
        count(group.tokens),
        count(group.toolCalls),
        wall(group.wallTimeMs),
        count(group.sessions),
        count(group.tasks),
      ];
      expect(await rows('By actor')).toEqual(byActor.map((group) => cells(group, group.actor)));
      expect(await rows('By member')).toEqual(byOwner.map((group) => cells(group, group.owner)));
      await screenshot(page, 'admin-usage');
      await expectAccessible(page);

      // A window no session was created in.
      await page.getByLabel('Sessions created from').fill('2099-01-01T00:00');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL((url) => url.searchParams.has('since'));
      await page.getByText('No session.').first().waitFor();
      expect(await facts()).toMatchObject({ Tokens: '0', Sessions: '0' });
      expectNoProblems(tab);
    });
  });
});
