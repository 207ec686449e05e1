// The web console's weight and its time to interactive on the chat page: the built bundle's sizes (raw and
// gzip, from packages/console/dist/meta.json), then Debian's Chromium (playwright-core) opening
// /console/chat on a server of ours (embedded database, API key), signed in by a key already in the tab's
// session storage, until the page's first control can be used. Each cold run is a new browser context (an
// empty cache); each warm run reloads in a context that has the files cached. The `phone` profile throttles
// as Lighthouse's mobile preset does (150 ms round trip, 1.6 Mbit/s down, CPU 4× slower). Prints a table and
// one JSON line; the budget is in docs/benchmarks.md.
//
//   node bench/console.mjs [--runs 10] [--chromium /usr/bin/chromium]
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, startOurs } from './lib/servers.mjs';
import { quantile } from './lib/stats.mjs';

const { values: opts } = parseArgs({
  options: { runs: { type: 'string', default: '10' }, chromium: { type: 'string', default: '/usr/bin/chromium' } },
});
const runs = Number(opts.runs);
const dist = join(ROOT, 'packages/console/dist');
if (!existsSync(join(dist, 'meta.json'))) throw new Error('the console is not built: npm run build');
if (!existsSync(opts.chromium)) throw new Error(`no Chromium at ${opts.chromium}: apt-get install chromium`);
const meta = JSON.parse(readFileSync(join(dist, 'meta.json'), 'utf8'));

const PROFILES = {
  loopback: undefined,
  phone: { latency: 150, downloadThroughput: (1.6 * 1024 * 1024) / 8, uploadThroughput: (750 * 1024) / 8, cpu: 4 },
};

/** Milliseconds from navigation start until the chat page shows its heading and a control that can be used. */
async function timeToInteractive(page) {
  await page.waitForFunction(
    () => {
      const main = document.querySelector('main');
      const heading = main?.querySelector('h1')?.textContent ?? '';
      const control = main?.querySelector('textarea:not([disabled]), select:not([disabled]), input:not([disabled])');
      return heading.startsWith('Chat') && control !== null && control !== undefined;
    },
    undefined,
    { timeout: 60_000, polling: 'raf' },
  );
  return page.evaluate(() => performance.now());
}

async function throttle(page, profile) {
  if (!profile) return;
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: profile.latency,
    downloadThroughput: profile.downloadThroughput,
    uploadThroughput: profile.uploadThroughput,
  });
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: profile.cpu });
}

const { chromium } = await import('playwright-core');
const server = await startOurs({ name: 'ours', port: 18000 + Math.floor(Math.random() * 1000), auth: 'apiKey' });
const apiKey = server.headers['x-api-key'];
const browser = await chromium.launch({
  executablePath: opts.chromium,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--no-first-run',
  ],
});
const before = loadavg().map((x) => x.toFixed(1));
const results = [];
try {
  for (const [name, profile] of Object.entries(PROFILES)) {
    const cold = [];
    const warm = [];
    for (let i = 0; i < runs + 1; i += 1) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      await context.addInitScript((key) => sessionStorage.setItem('cleveragents.console.apiKey', key), apiKey);
      const page = await context.newPage();
      await throttle(page, profile);
      await page.goto(`${server.base}/console/chat`);
      const first = await timeToInteractive(page);
      await page.reload();
      const second = await timeToInteractive(page);
      // The first round warms the server and Chromium; it is not counted.
      if (i > 0) {
        cold.push(first);
        warm.push(second);
      }
      await context.close();
    }
    for (const [cache, values] of [
      ['cold', cold],
      ['warm', warm],
    ]) {
      results.push({
        profile: name,
        cache,
        median: Math.round(quantile(values, 0.5)),
        p90: Math.round(quantile(values, 0.9)),
        min: Math.round(Math.min(...values)),
        max: Math.round(Math.max(...values)),
      });
    }
  }
} finally {
  await browser.close();
  await server.stop();
}
const after = loadavg().map((x) => x.toFixed(1));
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}`;
const kib = (bytes) => (bytes / 1024).toFixed(1);
console.log(`web console, ${runs} runs per row (${machine}); load average ${before.join(' ')} → ${after.join(' ')}`);
console.log(`| asset | bytes | KiB | gzip KiB | Brotli KiB (sent) |`);
console.log(`|---|---:|---:|---:|---:|`);
for (const [what, asset] of Object.entries(meta)) {
  const row = [asset.bytes, kib(asset.bytes), kib(asset.gzipBytes), kib(asset.brotliBytes)];
  console.log(`| ${what} (${asset.file}) | ${row.join(' | ')} |`);
}
console.log('| time to interactive, /console/chat | median ms | p90 ms | min ms | max ms |');
console.log('|---|---:|---:|---:|---:|');
for (const r of results)
  console.log(`| ${r.profile}, ${r.cache} cache | ${r.median} | ${r.p90} | ${r.min} | ${r.max} |`);
console.log(JSON.stringify({ bench: 'console', machine, load: [before, after], meta, results }));
