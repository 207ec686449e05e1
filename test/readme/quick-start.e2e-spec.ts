import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../support/server.js';
import { spawnServer, stopAll, type SpawnedServer } from '../support/server-process.js';
import { until } from '../support/wait.js';

/*
 * README.md's quick start, followed as written: its start command on a fresh data directory, the
 * bootstrap key it prints once, then every "Try it" command in order with that key. Everything is read
 * from the README; when it changes this test follows it or fails. Two departures, both minimal: a free
 * port instead of 8080 (every `:8080` of the README becomes `:<port>`), and CLEVERAGENTS_DATA_DIR a temp
 * directory instead of ./data.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const SCRIPTS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts;
const run = promisify(execFile);

/** The text of `## Quick start`, up to the next `## ` heading. */
function quickStart(): string {
  const start = README.indexOf('\n## Quick start\n');
  expect(start).toBeGreaterThanOrEqual(0);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end < 0 ? undefined : end);
}

/** The ```sh blocks of `text`, each as its lines. */
function shellBlocks(text: string): string[][] {
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1].trimEnd().split('\n'));
}

/** A block's commands: continuation lines joined; each with the `#` comment lines that follow it (what it answers). */
function commands(block: string[]): { command: string; shown: string }[] {
  const out: { command: string; shown: string }[] = [];
  let pending = '';
  for (const line of block) {
    if (pending === '' && line.startsWith('#')) {
      const last = out.at(-1);
      if (last) last.shown += line.replace(/^#\s?/, '');
      continue;
    }
    pending += line.endsWith('\\') ? `${line.slice(0, -1)} ` : line;
    if (!line.endsWith('\\')) {
      out.push({ command: pending, shown: '' });
      pending = '';
    }
  }
  return out;
}

/** The bootstrap keys in `output` (as printed: `ca_<id>_<secret>`). */
const printedKeys = (output: string): string[] => output.match(/\bca_[0-9a-z]{26}_[A-Za-z0-9_-]{20,}/g) ?? [];

describe('README quick start, word for word', () => {
  const section = quickStart();
  const [startBlock, tryBlock] = shellBlocks(section);
  let dataDir: string;
  let port: number;
  const servers: SpawnedServer[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'cleveragents-readme-'));
    port = await freePort();
  });
  afterAll(async () => {
    await stopAll(servers);
    await rm(dataDir, { recursive: true, force: true });
  });

  /** The README's start command as this test runs it (see `start command`). */
  async function start(): Promise<SpawnedServer> {
    // A user's environment: no NODE_ENV=test, no test actor; only where the data goes and the port.
    const server = await spawnServer({ HOME: process.env.HOME ?? '', CLEVERAGENTS_DATA_DIR: dataDir }, port);
    servers.push(server);
    await until(
      async () =>
        server.process.exitCode !== null ||
        (await fetch(`${server.baseUrl}/healthz`).catch(() => undefined))?.status === 200,
      'the server to answer',
      90_000,
    );
    expect({ exit: server.process.exitCode, log: server.log().slice(-2000) }).toMatchObject({ exit: null });
    return server;
  }

  async function stop(server: SpawnedServer): Promise<void> {
    server.process.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  }

  /** With the port substituted: the README's address is http://127.0.0.1:8080. */
  const onPort = (text: string): string => text.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);

  it("the start command is `npm ci && npm start`, and npm start builds then runs the server package's dist/main.js", () => {
    const [first] = commands(startBlock);
    expect(first.command.replace(/\s+#.*$/, '').trim()).toBe('npm ci && npm start');
    expect(first.shown).toBe('');
    expect(startBlock[0]).toMatch(/# the server on http:\/\/127\.0\.0\.1:8080, embedded PostgreSQL \(PGlite\)/);
    // The test's setup ran `npm run build` (npm test does, as the README's second command), and
    // `npm ci` installed what this test runs on: so the start is `node packages/server/dist/main.js`, as the
    // script says.
    expect(SCRIPTS.start).toBe('npm run build && node packages/server/dist/main.js');
  });

  it('first start prints the bootstrap key once; the Try-it commands answer as shown; a restart prints no key', async () => {
    const first = await start();
    await until(() => printedKeys(first.log()).length > 0, 'the bootstrap key', 30_000);
    // Printed exactly once: the box holds it and nothing else repeats it.
    const keys = printedKeys(first.log());
    expect(keys).toHaveLength(1);
    const [key] = keys;

    const steps = commands(tryBlock);
    // The README's first line tells the user to set KEY to the printed key.
    expect(steps[0].command).toMatch(/^KEY=ca_…\s+# the bootstrap key$/);
    const curls = steps.slice(1);
    expect(curls.length).toBeGreaterThanOrEqual(2);
    for (const { command, shown } of curls) {
      expect(command).toMatch(/^curl /);
      const { stdout } = await run('sh', ['-c', `KEY=${key}\n${onPort(command)}`], { timeout: 30_000 });
      const answer = JSON.parse(stdout) as Record<string, unknown>;
      if (shown) {
        // What the README shows, with this server's ids: same members, same values but the ids.
        const expected = JSON.parse(shown) as { result: Record<string, unknown> };
        const ids = new Set(['subject', 'apiKeyId']);
        const result = answer.result as Record<string, unknown>;
        expect(Object.keys(answer).sort()).toEqual(Object.keys(expected).sort());
        expect(Object.keys(result).sort()).toEqual(Object.keys(expected.result).sort());
        for (const [name, value] of Object.entries(expected.result)) {
          if (!ids.has(name)) expect({ [name]: result[name] }).toEqual({ [name]: value });
        }
        expect(result.apiKeyId).toBe(key.slice(3, 29).toUpperCase());
      } else {
        // The Agent Card, named in its comment as public.
        expect(command).toContain('/.well-known/agent-card.json');
        expect(answer).toMatchObject({ name: expect.any(String), supportedInterfaces: expect.any(Array) });
      }
    }
    await stop(first);

    const second = await start();
    await fetch(`${second.baseUrl}/healthz`);
    expect(printedKeys(second.log())).toEqual([]);
    await stop(second);
  }, 180_000);
});
