import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { describeNeeding } from '../support/requirements.js';
import { chromium, chromiumPath } from '../support/screen-image.js';
import { startServer, type TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The built console (packages/console/dist) in a real Chromium, served by the real server with its
 * Content-Security-Policy: the app starts, and the policy refuses nothing it does.
 */

describeNeeding(chromium(), 'the web console in a browser, under its Content-Security-Policy', () => {
  let db: TestDatabase;
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    db = await createEmbeddedTestDatabase();
    // PUBLIC_URL is the address the browser uses (startServer's port): the card sends the app's calls there.
    server = await startServer(db);
    const { chromium: launcher } = await import('playwright-core');
    browser = await launcher.launch({ executablePath: chromiumPath()!, args: ['--no-sandbox'] });
  }, 120000);

  afterAll(async () => {
    await ifAssigned(browser)?.close();
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
  });

  it('starts at a deep link with no policy violation and no page error', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    // Scripts that run in the page (the suite is compiled without the DOM's types).
    await page.addInitScript({
      content:
        'window.violations = [];' +
        "document.addEventListener('securitypolicyviolation'," +
        " (e) => window.violations.push(e.violatedDirective + ' ' + e.blockedURI));",
    });
    const response = await page.goto(`${server.baseUrl}/console/approvals/01JABCDEF?namespace=default`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForFunction("document.getElementById('root')?.childElementCount > 0", undefined, {
      timeout: 20000,
    });
    await page.waitForLoadState('networkidle');
    const violations = await page.evaluate('window.violations');
    expect({ violations, problems }).toEqual({ violations: [], problems: [] });
    await page.close();
  }, 60000);
});
