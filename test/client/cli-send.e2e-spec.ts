import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from '../../packages/client/src/node.js';
import { runTurn } from '../../packages/client/src/conversation/turn.js';
import type { ApprovalRequest } from '../../packages/contract/src/index.js';
import { ClientToolRunner } from '../../packages/cli/src/tools/index.js';
import {
  SCENARIO_TEXT,
  SUPERVISED_READS,
  clientScenarioReply,
  scenarioServerEnv,
  scenarioWorkspace,
  upperPath,
} from '../support/client-scenario.js';
import { ANSI, ndjson, runCli, shown, type CliHome } from '../support/cli.js';
import { cliRig, type CliRig } from '../support/cli-rig.js';
import { extensionCalls, type TestServer } from '../support/server.js';
import { DIST_MAIN } from '../support/stdio-client.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * `cleveragents send`, the non-interactive CLI, end to end on both transports: over HTTP to a real
 * server, and with --local, where the CLI starts its own server over stdio (dist/main.js --stdio) on an
 * embedded data directory (that server inherits the CLI's environment, so the model's settings go on the
 * CLI process). The server's local backend talks to a scripted OpenAI-compatible endpoint playing a
 * client-side session (test/support/client-scenario.ts): plan → read → write <path>.upper → `wc -c` in a
 * terminal → plan completed → answer. The CLI runs as a child process with its own HOME, its tools
 * working on a temporary workspace. Embedded databases only: the CLI does not touch the database.
 */

const TEXT = SCENARIO_TEXT;
/** What the endpoint reports per model call. */
const USAGE = { promptTokens: 20, completionTokens: 3 };

describe('cleveragents send', () => {
  let rig: CliRig;
  let server: TestServer;
  let home: CliHome;
  let modelEnv: Record<string, string>;
  let dataDir: string;
  const { ok } = extensionCalls(() => server);

  beforeAll(async () => {
    rig = await cliRig(clientScenarioReply(USAGE), scenarioServerEnv);
    ({ server, home, modelEnv } = rig);
    await ok('registry/create', { ...SUPERVISED_READS });
    // --local: a copy of the run's initialised embedded directory (no initdb on each start), the profile
    // registered through the library as an admin would; closed again, since one process holds it at a time.
    dataDir = rig.localDb.env.CLEVERAGENTS_DATA_DIR!;
    // From the sources (ts-jest), the library's default server entry would be src/main.js: name the built one.
    const client = await connect({ local: { dataDir, env: modelEnv, serverEntry: DIST_MAIN } });
    try {
      await client.registry.create(SUPERVISED_READS);
    } finally {
      await client.close();
    }
  }, 90000);

  afterAll(() => ifAssigned(rig)?.close());

  const workspaceIn = (name: string) => scenarioWorkspace(home.dir, name);

  const transports = [
    { name: 'http', args: () => ['--server', server.baseUrl], env: (): Record<string, string> => ({}) },
    { name: 'stdio', args: () => ['--local', '--data-dir', dataDir], env: () => modelEnv },
  ];

  describe.each(transports)('over $name', (transport) => {
    const send = (ws: string, ask: string, flags: string[]) =>
      runCli([...transport.args(), 'send', '--profile', 'supervised-reads', '--workspace', ws, ...flags, ask], {
        home,
        env: transport.env(),
      });
    const workspace = (name: string) => workspaceIn(`${transport.name}-${name}`);

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
      const result = lines.at(-1)!.result;
      for (const line of lines.slice(0, -1)) {
        expect(Object.keys(line)).toHaveLength(1);
        expect(['task', 'statusUpdate', 'artifactUpdate']).toContain(Object.keys(line)[0]);
      }
      expect(result).toEqual(
        expect.objectContaining({
          state: 'completed',
          exitCode: 0,
          taskId: expect.any(String),
          contextId: expect.any(String),
        }),
      );
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
      expect(run.stdout + run.stderr).not.toMatch(ANSI);
    });

    it('refuses a read outside the workspace; the task still completes with the model saying so', async () => {
      const { dir } = await workspace('confined');
      const outside = join(home.dir, 'outside');
      await mkdir(outside, { recursive: true });
      const secret = join(outside, 'secret.txt');
      await writeFile(secret, 'not for the agent');
      const run = await send(dir, `Uppercase ${secret}`, [
        '--json',
        '--approve',
        'all',
        '--allow-writes',
        '--allow-commands',
      ]);
      expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
      const lines = ndjson(run.stdout);
      const { result } = lines.at(-1)!;
      expect(result.state).toBe('completed');
      expect(result.answer).toMatch(new RegExp(`^I could not read ${secret}: .*outside the workspace`));
      expect(JSON.stringify(lines)).not.toContain('not for the agent');
      expect(existsSync(upperPath(secret))).toBe(false);
      expect(await readFile(secret, 'utf8')).toBe('not for the agent');
    });
  });

  describe('over http only', () => {
    const send = (ws: string, ask: string, flags: string[]) =>
      runCli(['--server', server.baseUrl, 'send', '--profile', 'supervised-reads', '--workspace', ws, ...flags, ask], {
        home,
      });

    it('--allow-writes under the built-in guarded profile: the server lets the write run unasked too; --approve plans completes', async () => {
      const { dir, file } = await workspaceIn('http-guarded');
      const flags = ['--json', '--approve', 'plans', '--allow-writes', '--allow-commands'];
      const run = await runCli(
        ['--server', server.baseUrl, 'send', '--profile', 'guarded', '--workspace', dir, ...flags, `Uppercase ${file}`],
        { home },
      );
      expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
      expect(ndjson(run.stdout).at(-1)!.result.state).toBe('completed');
      expect(await readFile(upperPath(file), 'utf8')).toBe(TEXT.toUpperCase());
      // The server recorded what the flags asked for and what the profile granted.
      const audit = await ok('audit/list', { namespace: 'default', action: 'session.gates', pageSize: 100 });
      expect(audit.items[0].details).toMatchObject({
        profile: 'guarded',
        allowed: ['fs_write_text_file', 'terminal_create'],
        refused: [],
      });
    });

    it('without --allow-writes offers no write: the scripted write fails, nothing is written, the task completes', async () => {
      const { dir, file } = await workspaceIn('http-no-writes');
      const run = await send(dir, `Uppercase ${file}`, ['--json', '--approve', 'all']);
      expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
      const { result } = ndjson(run.stdout).at(-1)!;
      expect(result.state).toBe('completed');
      expect(result.answer).toMatch(/^Done: the write failed \(.*fs_write_text_file is not offered/);
      expect(existsSync(upperPath(file))).toBe(false);
    });

    it('a write rejected at its gate (the turn driver, as chat uses it): nothing written, the answer says the write failed', async () => {
      const { dir, file } = await workspaceIn('http-rejected');
      const client = await connect({ server: server.baseUrl });
      const runner = new ClientToolRunner({
        workspace: dir,
        autoApproveWrites: true,
        autoApproveCommands: true,
        sandbox: 'off',
      });
      const gates: string[] = [];
      try {
        const session = await client.sessions.create({ profile: 'supervised-reads' });
        const outcome = await runTurn(
          (request) => client.stream(request),
          { text: `Uppercase ${file}`, contextId: String(session.sessionId), capabilities: runner.capabilities() },
          {
            decide: (request: ApprovalRequest) => {
              gates.push(request.subject.kind === 'tool' ? request.subject.tool : request.subject.kind);
              return Promise.resolve({ decision: request.subject.kind === 'plan' ? 'approve' : 'reject' });
            },
            runClientCalls: (request) => runner.runAll(request.requests),
          },
        );
        expect(gates).toEqual(['plan', 'fs_write_text_file']);
        expect(outcome.state).toBe('completed');
        expect(outcome.answer).toMatch(/^Done: the write failed \(.*rejected/i);
        expect(existsSync(upperPath(file))).toBe(false);
      } finally {
        await runner.dispose();
        await client.close();
      }
    });
  });

  describe('--local only', () => {
    it('lists the sessions those runs made in the local data directory', async () => {
      const run = await runCli(['--local', '--data-dir', dataDir, '--json', 'sessions', 'list'], {
        home,
        env: modelEnv,
      });
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
});
