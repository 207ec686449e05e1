import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { CleverAgentsError, type CleverAgentsClient } from '../../packages/client/src/index.js';
import { connect } from '../../packages/client/src/node.js';
import {
  accessibilityViolations,
  expectNoProblems,
  PHONE,
  screenshot,
  signedInConsole,
  type ConsoleTab,
  describeInChromium,
} from '../support/console-browser.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { startServerWithBootstrapKey, type TestServer } from '../support/server.js';

/*
 * The registry pages in a real Chromium against a real server: browse each kind, open entries, edit a spec
 * (checked in the page against the server's published schema before anything is sent), resolve a revision
 * conflict, create and delete, and what a viewer and a member are offered; the server checked through the
 * client library.
 */

const HOSTILE = '<img src=x onerror=alert(1)> \u0007bell ' + 'long-'.repeat(120);

/** The editor's text: the spec as JSON. */
const specBox = (page: Page) => page.getByLabel('Spec (JSON)');

async function setSpec(page: Page, spec: unknown): Promise<void> {
  await specBox(page).fill(typeof spec === 'string' ? spec : JSON.stringify(spec, null, 2));
}

describeInChromium('the registry pages of the web console', (browser) => {
  describe.each(databaseTargets())('on $kind', (target) => {
    let db: TestDatabase;
    let server: TestServer;
    let owner: string;
    let member: string;
    let viewer: string;
    let client: CleverAgentsClient;
    let base: string;
    const tabs: ConsoleTab[] = [];

    const open = async (key: string, path: string, viewport?: { width: number; height: number }) => {
      const tab = await signedInConsole(browser(), base, key, { path, viewport });
      tabs.push(tab);
      return tab;
    };
    const get = (kind: 'actor' | 'tool' | 'skill' | 'profile', name: string) =>
      client.registry.get({ namespace: 'default', kind, name });

    beforeAll(async () => {
      db = await target.create();
      ({ server, bootstrapKey: owner } = await startServerWithBootstrapKey(db));
      base = server.baseUrl;
      client = await connect({ server: base, apiKey: owner });
      member = (await client.apiKeys.create({ namespace: 'default', name: 'member', role: 'member' })).key;
      viewer = (await client.apiKeys.create({ namespace: 'default', name: 'viewer', role: 'viewer' })).key;
      await client.registry.create({
        kind: 'tool',
        name: 'read_file',
        spec: { description: HOSTILE, inputSchema: { type: 'object' }, runsOn: 'server' },
      });
      await client.registry.create({
        kind: 'skill',
        name: 'code-review',
        spec: { description: 'Reviews a change', instructions: 'Read the diff.' },
      });
      await client.registry.create({
        kind: 'actor',
        name: 'reviewer',
        spec: { description: 'Reviews pull requests', localGraph: 'orchestrator', model: { model: 'qwen2.5-coder' } },
        labels: { team: 'platform' },
      });
    });
    afterAll(async () => {
      for (const tab of tabs) await tab.close();
      await client.close();
      await server.close();
      await db.cleanup();
    });

    it('browses each kind, the hostile description shown as text', async () => {
      const tab = await open(viewer, 'registry');
      const { page } = tab;
      await page.getByRole('heading', { name: 'Registry', level: 1 }).waitFor();
      await page.getByRole('link', { name: 'reviewer' }).waitFor();
      const kinds = page.getByRole('navigation', { name: 'Kinds' });
      const expected = { Actors: 'default', Tools: 'read_file', Skills: 'code-review', Profiles: 'supervised' };
      for (const [title, name] of Object.entries(expected)) {
        await kinds.getByRole('link', { name: title }).click();
        await page.getByRole('heading', { name: `Registry: ${title.toLowerCase()}` }).waitFor();
        await page.getByRole('link', { name, exact: true }).waitFor();
      }
      await kinds.getByRole('link', { name: 'Tools' }).click();
      await page.getByText('<img src=x onerror=alert(1)>', { exact: false }).waitFor();
      expect(await page.locator('main img').count()).toBe(0);
      await kinds.getByRole('link', { name: 'All' }).click();
      await page.getByText('8 entries').waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'registry-list');
      expectNoProblems(tab);
    });

    it('opens an actor and a profile, with their facts and the revision the registry keeps', async () => {
      const tab = await open(viewer, 'registry?kind=actor');
      const { page } = tab;
      await page.getByRole('link', { name: 'reviewer' }).click();
      await page.getByRole('heading', { name: 'actor reviewer' }).waitFor();
      await page.getByText('Reviews pull requests', { exact: true }).waitFor();
      await page.getByText('team=platform').waitFor();
      await page.getByText('Revision 1 is the current one.', { exact: false }).waitFor();
      expect(await page.locator('pre.spec').textContent()).toContain('"qwen2.5-coder"');
      await screenshot(page, 'registry-entry');
      await page.goto(`${base}/console/registry/profile/supervised`);
      await page.getByRole('heading', { name: 'profile supervised' }).waitFor();
      await page.getByText('installed with the namespace, unchanged since').waitFor();
      expect(await page.locator('pre.spec').textContent()).toContain('"gate": "supervised"');
      expect(await accessibilityViolations(page)).toEqual([]);
      expectNoProblems(tab);
    });

    it('a viewer sees no edit controls; a member none on a profile, and the server’s refusal when it still refuses', async () => {
      const seen = await open(viewer, 'registry/tool/read_file');
      await seen.page.getByText('changing it needs the member role in default').waitFor();
      expect(await seen.page.getByRole('button', { name: 'Edit spec' }).count()).toBe(0);
      expect(await seen.page.getByRole('button', { name: 'Delete…' }).count()).toBe(0);
      await seen.page.getByRole('link', { name: 'Registry', exact: true }).first().click();
      await seen.page.getByRole('link', { name: 'reviewer' }).waitFor();
      expect(await seen.page.getByRole('button', { name: 'New entry' }).count()).toBe(0);

      const { page } = await open(member, 'registry/profile/manual');
      await page.getByText('changing it needs the admin role in default').waitFor();
      expect(await page.getByRole('button', { name: 'Edit spec' }).count()).toBe(0);
      // A member edits actors, but an actor's tools are the admin's: the server refuses, the page says so.
      await page.goto(`${base}/console/registry/actor/reviewer`);
      await page.getByRole('button', { name: 'Edit spec' }).click();
      const before = await get('actor', 'reviewer');
      await setSpec(page, { ...before.spec, tools: ['read_file'] });
      await page.getByRole('button', { name: `Save over revision ${before.revision}` }).click();
      await page.getByText('This needs the admin role in default; you hold member there.').waitFor();
      expect((await get('actor', 'reviewer')).revision).toBe(before.revision);
    });

    it('saves a valid edit: the revision goes up and the page shows the spec the server returned', async () => {
      const { page } = await open(owner, 'registry/actor/reviewer');
      const before = await get('actor', 'reviewer');
      await page.getByRole('button', { name: 'Edit spec' }).click();
      await setSpec(page, { ...before.spec, description: 'Reviews pull requests, carefully' });
      await page.getByText('Valid against the server’s actor schema.').waitFor();
      await page.getByRole('button', { name: `Save over revision ${before.revision}` }).click();
      await page.getByText(`Saved: revision ${before.revision + 1}, as the server stored it.`).waitFor();
      const after = await get('actor', 'reviewer');
      expect(after.revision).toBe(before.revision + 1);
      expect(after.spec.description).toBe('Reviews pull requests, carefully');
      await page.getByText('Reviews pull requests, carefully', { exact: true }).waitFor();
      expect(await page.locator('pre.spec').textContent()).toBe(JSON.stringify(after.spec, null, 2));
    });

    it('catches an invalid edit in the page, naming the path, and sends nothing', async () => {
      const tab = await open(owner, 'registry/actor/reviewer');
      const { page } = tab;
      const before = await get('actor', 'reviewer');
      await page.getByRole('button', { name: 'Edit spec' }).click();
      await setSpec(page, { ...before.spec, model: { model: 'qwen2.5-coder', temperature: 5 }, colour: 'red' });
      const problems = page.locator('.violations');
      await problems.getByText('spec.model.temperature').waitFor();
      await problems.getByText('spec.colour').waitFor();
      await page.getByRole('button', { name: `Save over revision ${before.revision}` }).click();
      // Nothing sent: the list of problems takes the focus instead.
      await page.locator('.spec-problems:focus').waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'registry-editor-violation');
      await setSpec(page, '{"description": ');
      await problems.getByText('is not JSON', { exact: false }).waitFor();
      // What no schema says, the server does: its field violation beside the editor.
      await setSpec(page, { ...before.spec, graphId: 'reviewer' });
      await page.getByText('Valid against the server’s actor schema.').waitFor();
      await page.getByRole('button', { name: `Save over revision ${before.revision}` }).click();
      await page
        .locator('.spec-problems')
        .getByRole('listitem')
        .filter({ hasText: 'spec.localGraph: localGraph is not allowed with graphId' })
        .waitFor();
      const after = await get('actor', 'reviewer');
      expect(after.revision).toBe(before.revision);
      expect(after.spec).toEqual(before.spec);
      expectNoProblems(tab);
    });

    it('shows a conflict as yours against the server’s, then resolves it by editing again and by keeping mine', async () => {
      const tab = await open(member, 'registry/tool/read_file');
      const { page } = tab;
      const read = await get('tool', 'read_file');
      await page.getByRole('button', { name: 'Edit spec' }).click();
      await setSpec(page, { ...read.spec, description: 'Reads a file (mine)' });
      await client.registry.update({
        kind: 'tool',
        name: 'read_file',
        spec: { ...read.spec, description: 'Reads a file (theirs)' },
        expectedRevision: read.revision,
      });
      await page.getByRole('button', { name: `Save over revision ${read.revision}` }).click();
      const conflict = page.getByRole('region', { name: 'Conflict' });
      await conflict.getByText(`Your edit (from revision ${read.revision}) was not saved`, { exact: false }).waitFor();
      await conflict.getByRole('heading', { name: `Server’s (revision ${read.revision + 1})` }).waitFor();
      await conflict.getByText('- "description": "Reads a file (mine)",').waitFor();
      await conflict.getByText('+ "description": "Reads a file (theirs)",').waitFor();
      expect(await accessibilityViolations(page)).toEqual([]);
      await screenshot(page, 'registry-conflict');

      await conflict.getByRole('button', { name: 'Edit mine on the server’s revision' }).click();
      expect(JSON.parse(await specBox(page).inputValue()).description).toBe('Reads a file (mine)');
      await page.getByRole('button', { name: `Save over revision ${read.revision + 1}` }).click();
      await page.getByText(`Saved: revision ${read.revision + 2}`, { exact: false }).waitFor();
      expect((await get('tool', 'read_file')).spec.description).toBe('Reads a file (mine)');

      await page.getByRole('button', { name: 'Edit spec' }).click();
      await setSpec(page, { ...read.spec, description: 'Mine again' });
      await client.registry.update({
        kind: 'tool',
        name: 'read_file',
        spec: { ...read.spec, description: 'Theirs again' },
      });
      await page.getByRole('button', { name: `Save over revision ${read.revision + 2}` }).click();
      await conflict.getByRole('button', { name: 'Keep mine (save over the server’s)' }).click();
      await page.getByText(`Saved: revision ${read.revision + 4}`, { exact: false }).waitFor();
      const kept = await get('tool', 'read_file');
      expect([kept.revision, kept.spec.description]).toEqual([read.revision + 4, 'Mine again']);
      expectNoProblems(tab);
    });

    it('shows an entry deleted on the server since it was read as a conflict, and creates it again with mine', async () => {
      await client.registry.create({
        kind: 'skill',
        name: 'short-lived',
        spec: { description: 'd', instructions: 'i' },
      });
      const tab = await open(member, 'registry/skill/short-lived');
      const { page } = tab;
      await page.getByRole('button', { name: 'Edit spec' }).click();
      await setSpec(page, { description: 'Mine', instructions: 'i' });
      const deleted = await client.registry.delete({ kind: 'skill', name: 'short-lived' });
      await page.getByRole('button', { name: 'Save over revision 1' }).click();
      const conflict = page.getByRole('region', { name: 'Conflict' });
      await conflict.getByText('the entry was deleted on the server since you read it').waitFor();
      await conflict.getByRole('button', { name: 'Keep mine (create it again)' }).click();
      await page.getByText(`Saved: revision ${deleted.revision + 1}`, { exact: false }).waitFor();
      const again = await get('skill', 'short-lived');
      expect([again.revision, again.spec.description]).toEqual([deleted.revision + 1, 'Mine']);
      expectNoProblems(tab);
    });

    it('creates an entry and deletes it after a confirm step', async () => {
      const tab = await open(member, 'registry?kind=skill');
      const { page } = tab;
      await page.getByRole('button', { name: 'New entry' }).click();
      await page.getByRole('combobox', { name: 'Kind' }).selectOption('skill');
      await page.getByRole('textbox', { name: 'Name' }).fill('triage');
      await setSpec(page, { description: 'Sorts new issues', instructions: 'Label and route each issue.' });
      await page.getByRole('button', { name: 'Create skill' }).click();
      await page.getByRole('heading', { name: 'skill triage' }).waitFor();
      expect((await get('skill', 'triage')).spec).toEqual({
        description: 'Sorts new issues',
        instructions: 'Label and route each issue.',
      });

      await page.getByRole('button', { name: 'Delete…' }).click();
      await page.getByText('Delete the skill triage (revision 1) from default?', { exact: false }).waitFor();
      await page.getByRole('button', { name: 'Delete triage' }).click();
      await page.getByText('Deleted skill triage.').waitFor();
      const gone = await get('skill', 'triage').catch((error: unknown) => error);
      expect(gone).toBeInstanceOf(CleverAgentsError);
      expect((gone as CleverAgentsError).reason).toBe('REGISTRY_ENTRY_NOT_FOUND');
      expectNoProblems(tab);
    });

    it('pages through the list, 25 entries at a time', async () => {
      for (let i = 0; i < 20; i++) {
        const name = `paged-${String(i).padStart(2, '0')}`;
        await client.registry.create({ kind: 'skill', name, spec: { description: name, instructions: 'i' } });
      }
      const { totalSize } = await client.registry.list({ namespace: 'default', pageSize: 1 });
      expect(totalSize).toBeGreaterThan(25);
      const tab = await open(viewer, 'registry');
      const { page } = tab;
      const rows = page.locator('table.registry-table tbody tr');
      const rowsAre = (count: number) =>
        page.waitForFunction((n) => document.querySelectorAll('table.registry-table tbody tr').length === n, count);
      await page.getByText(`${totalSize} entries`, { exact: true }).waitFor();
      expect(await rows.count()).toBe(25);
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.getByText(`${totalSize} entries, page 2`).waitFor();
      // The heading names the page before its rows arrive: wait for the second page's rows.
      await rowsAre(totalSize - 25);
      expect(await rows.count()).toBe(totalSize - 25);
      expect(await page.getByRole('button', { name: 'Next page' }).count()).toBe(0);
      await page.getByRole('button', { name: 'Previous page' }).click();
      await page.getByText(`${totalSize} entries`, { exact: true }).waitFor();
      await rowsAre(25);
      expect(await rows.count()).toBe(25);
      expectNoProblems(tab);
    });

    it('fits a phone', async () => {
      const tab = await open(owner, 'registry/actor/reviewer', PHONE);
      await tab.page.getByRole('button', { name: 'Edit spec' }).click();
      await specBox(tab.page).waitFor();
      expect(await accessibilityViolations(tab.page)).toEqual([]);
      const overflow = await tab.page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow).toBeLessThanOrEqual(0);
      expectNoProblems(tab);
    });
  });
});
