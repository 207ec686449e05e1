import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from '../../src/client/lib/index.js';
import { clientScenarioReply, upperPath } from '../support/client-scenario.js';
import { ANSI, cliHome, ndjson, runCli, shown, type CliHome } from '../support/cli.js';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { DIST_MAIN } from '../support/stdio-client.js';
import { assertCliBuilt } from '../support/terminal.js';

/*
 * `cleveragents --local send`: the same client-side session as cli-send.e2e-spec.ts, but the CLI starts
 * its own server over stdio (dist/main.js --stdio) on an embedded data directory. That server inherits
 * the CLI's environment, so the model's settings go on the CLI process. Each run starts a server (a few
 * seconds), so this file keeps to the three cases that differ by transport.
 */

const TEXT = 'hello notes\nsecond line';
const USAGE = { promptTokens: 20, completionTokens: 3 };

describe('cleveragents --local send (stdio)', () => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let home: CliHome;
  let dataDir: string;
  let modelEnv: Record<string, string>;

  beforeAll(async () => {
    assertCliBuilt();
    home = await cliHome();
    model = await OpenAiCompatibleEndpoint.start(clientScenarioReply(USAGE));
    modelEnv = {
      CLEVERAGENTS_ACTOR_BACKEND: 'local',
      CLEVERAGENTS_MODEL_BASE_URL: model.baseUrl(),
      CLEVERAGENTS_MODEL: 'client-scenario',
    };
    // A copy of the run's initialised embedded directory: no initdb on each start.
    db = await createEmbeddedTestDatabase();
    dataDir = db.env.CLEVERAGENTS_DATA_DIR!;
    // From the sources (ts-jest), the library's default server entry would be src/main.js: name the built one.
    const client = await connect({ local: { dataDir, env: modelEnv, serverEntry: DIST_MAIN } });
    try {
      await client.registry.create({
        kind: 'profile',
        name: 'supervised-reads',
        spec: {
          description: 'plan, writes and commands gated; reads run',
          gate: 'supervised',
          allowedTools: ['fs_read_text_file'],
        },
      });
    } finally {
      // The embedded database is locked while a server holds it.
      await client.close();
    }
  }, 60000);

  afterAll(async () => {
    await model?.close();
    await db?.cleanup();
    await home?.cleanup();
  });

  async function workspace(name: string): Promise<{ dir: string; file: string }> {
    const dir = join(home.dir, name);
    await mkdir(dir, { recursive: true });
    const file = join(dir, 'notes.txt');
    await writeFile(file, TEXT);
    return { dir, file };
  }

  const send = (ws: string, ask: string, flags: string[]) =>
    runCli(
      ['--local', '--data-dir', dataDir, 'send', '--profile', 'supervised-reads', '--workspace', ws, ...flags, ask],
      { home, env: modelEnv },
    );

  it('answers every gate with --approve all, writes the file, runs wc, and prints NDJSON then the result', async () => {
    const { dir, file } = await workspace('all');
    const run = await send(dir, `Uppercase ${file}`, [
      '--json',
      '--approve',
      'all',
      '--allow-writes',
      '--allow-commands',
    ]);
    expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
    const lines = ndjson(run.stdout);
    for (const line of lines.slice(0, -1)) {
      expect(Object.keys(line)).toHaveLength(1);
      expect(['task', 'statusUpdate', 'artifactUpdate']).toContain(Object.keys(line)[0]);
    }
    const { result } = lines.at(-1)!;
    expect(result).toEqual(expect.objectContaining({ state: 'completed', exitCode: 0 }));
    expect(await readFile(upperPath(file), 'utf8')).toBe(TEXT.toUpperCase());
    expect(result.answer).toBe(`Done: wrote ${upperPath(file)}; wc says ${TEXT.length} ${upperPath(file)}.`);
    expect(result.usage.tokens).toBeGreaterThan(0);
    expect(result.usage.toolCalls).toBeGreaterThanOrEqual(6);
    expect(run.stdout + run.stderr).not.toMatch(ANSI);
  });

  it('with --approve plans leaves the write gate unanswered: exit 4, a hint, nothing written', async () => {
    const { dir, file } = await workspace('plans-only');
    const run = await send(dir, `Uppercase ${file}`, ['--approve', 'plans', '--allow-writes', '--allow-commands']);
    expect({ code: run.code, run: shown(run) }).toEqual({ code: 4, run: shown(run) });
    expect(run.stderr).toContain('waiting: the task waits for an approval');
    expect(run.stderr).toMatch(/hint: .*--approve plans\|all/);
    expect(existsSync(upperPath(file))).toBe(false);
  });

  it('refuses a read outside the workspace; the task still completes with the model saying so', async () => {
    const { dir } = await workspace('confined');
    const outside = join(home.dir, 'outside');
    await mkdir(outside, { recursive: true });
    const secret = join(outside, 'secret.txt');
    await writeFile(secret, 'not for the agent');
    const run = await send(dir, `Uppercase ${secret}`, ['--approve', 'all', '--allow-writes', '--allow-commands']);
    expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
    // Plain output: the answer on stdout, nothing else there.
    expect(run.stdout.trim()).toMatch(new RegExp(`^I could not read ${secret}: .*outside the workspace`));
    expect(run.stdout).not.toContain('not for the agent');
    expect(existsSync(upperPath(secret))).toBe(false);
  });

  it('lists the sessions those runs made in the local data directory', async () => {
    const run = await runCli(['--local', '--data-dir', dataDir, '--json', 'sessions', 'list'], { home, env: modelEnv });
    expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
    const page = JSON.parse(run.stdout) as { items: { profile: string }[] };
    expect(page.items.filter((s) => s.profile === 'supervised-reads')).toHaveLength(3);
  });
  it('exit 6 when the local server cannot start: another process holds the data directory', async () => {
    const holder = await connect({ local: { dataDir, env: modelEnv, serverEntry: DIST_MAIN } });
    try {
      const run = await runCli(['--local', '--data-dir', dataDir, 'sessions', 'list'], { home, env: modelEnv });
      expect({ code: run.code, run: shown(run) }).toEqual({ code: 6, run: shown(run) });
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^error: the local server /m);
      expect(run.stderr).toContain('hint: another cleveragents process uses this data directory');
    } finally {
      await holder.close();
    }
  });
});
