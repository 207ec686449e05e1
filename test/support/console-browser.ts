import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeNeeding } from './requirements.js';
import { chromium, chromiumPath } from './screen-image.js';

/**
 * The web console in a real headless Chromium (Debian's package, driven by playwright-core; nothing is
 * downloaded), against a real server: open it, sign in, look for what the page says, check it with axe-core,
 * and take the screenshots docs/console.md shows (CLEVERAGENTS_SCREENSHOTS=<dir>).
 */

const CONSOLE_DIST = resolve(import.meta.dirname, '../../packages/console/dist');

/** The console is served from its build: the suite needs `npm run build` first. */
export function assertConsoleBuilt(): void {
  if (!existsSync(join(CONSOLE_DIST, 'index.html'))) {
    throw new Error(`the web console is not built (${CONSOLE_DIST}/index.html is missing): run npm run build`);
  }
}

/** Flags for a headless Chromium on a machine with no network but loopback (nothing phones home). */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export async function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error('no Chromium: apt-get install chromium, or set CHROMIUM_PATH');
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath, args: FLAGS, headless: true });
}

/**
 * `describe` for suites that share one Chromium, launched before their tests and closed after; skipped, or
 * failed where the run requires it, when the machine has none (describeNeeding). `browser()` is that Chromium.
 */
export function describeInChromium(title: string, suite: (browser: () => Browser) => void): void {
  describeNeeding(chromium(), title, () => {
    let launched: Browser | undefined;
    beforeAll(async () => {
      assertConsoleBuilt();
      launched = await launchChromium();
    }, 60000);
    afterAll(async () => {
      await launched?.close();
    });
    suite(() => {
      if (!launched) throw new Error('Chromium did not start');
      return launched;
    });
  });
}

/** A console tab, and what the page complained about: script errors and CSP refusals (a test may expect none). */
export interface ConsoleTab {
  readonly context: BrowserContext;
  readonly page: Page;
  readonly problems: string[];
  close(): Promise<void>;
}

export const PHONE = { width: 390, height: 844 };

/** Opens `path` below the console of the server at `baseUrl`, in a context of its own (its own session storage). */
export async function openConsole(
  browser: Browser,
  baseUrl: string,
  options: { path?: string; viewport?: { width: number; height: number } } = {},
): Promise<ConsoleTab> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 860 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  // A CSP refusal is an event in the page, not always a console message: reported as one, it is a problem.
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      console.error(`CSP refusal: ${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  await page.goto(`${baseUrl}/console/${options.path ?? ''}`);
  return { context, page, problems, close: () => context.close() };
}

/** Signs in with an API key on the sign-in page, and waits for the page behind it. */
export async function signInWithKey(page: Page, apiKey: string): Promise<void> {
  await page.getByLabel('API key', { exact: true }).fill(apiKey);
  await page.getByRole('button', { name: 'Sign in with the key' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** A tab opened on `path` and signed in with `apiKey`. */
export async function signedInConsole(
  browser: Browser,
  baseUrl: string,
  apiKey: string,
  options: { path?: string; viewport?: { width: number; height: number } } = {},
): Promise<ConsoleTab> {
  const tab = await openConsole(browser, baseUrl, options);
  await signInWithKey(tab.page, apiKey);
  return tab;
}

/**
 * A screenshot of the page for docs/console.md, when the run asks for them (CLEVERAGENTS_SCREENSHOTS names
 * the folder): `console-<name>.png`.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const folder = process.env.CLEVERAGENTS_SCREENSHOTS;
  if (!folder) return;
  mkdirSync(folder, { recursive: true });
  await page.screenshot({ path: join(folder, `console-${name}.png`), fullPage: true });
}

const axeSource = (): string => readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now (WCAG 2.1 A and AA rules). */
export async function accessibilityViolations(page: Page): Promise<{ id: string; impact: string; nodes: string[] }[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern: the page loads nothing.
  await page.evaluate(axeSource());
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as any).axe;
    const result = await axe.run((globalThis as any).document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return (result.violations as any[]).map((violation) => ({
      id: violation.id as string,
      impact: violation.impact as string,
      nodes: (violation.nodes as any[]).map((node) => String(node.target)),
    }));
  });
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}

/** The page reported no script error and no CSP refusal. */
export function expectNoProblems(tab: ConsoleTab): void {
  expect(tab.problems).toEqual([]);
}
