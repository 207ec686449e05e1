import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AgentCard } from '@a2a-js/sdk';
import { connect } from '../../packages/client/src/node.js';
import { EXIT } from '../../packages/cli/src/exit-codes.js';
import { EXTENSION_URI } from '../../packages/contract/src/index.js';
import {
  SCENARIO_TEXT,
  SUPERVISED_READS,
  clientScenarioReply,
  scenarioServerEnv,
  scenarioWorkspace,
  upperPath,
} from '../support/client-scenario.js';
import { ANSI, cliHome, expectExit, ndjson, runCli, shown, type CliHome } from '../support/cli.js';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint, scenarioMessagesOf } from '../support/openai-endpoint.js';
import { extensionCalls, freePort, startServer, type TestServer } from '../support/server.js';
import { assertCliBuilt } from '../support/terminal.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The non-interactive commands of `cleveragents` against a real server over HTTP (embedded database;
 * the local backend on a scripted model, see test/support/client-scenario.ts): card, tasks, sessions,
 * plans, the exit codes they end with, and plain output without escape sequences. The CLI runs as a
 * child process with pipes (not a TTY). The server is shared by the whole file.
 */

const TEXT = SCENARIO_TEXT;
const USAGE = { promptTokens: 20, completionTokens: 3 };
/** A message naming this makes the model endpoint answer HTTP 500. */
const BREAK = 'BREAK-THE-MODEL';
/** A message naming this gets its first answer slowly (20 words, one each 200 ms, then the plan). */
const HALTING = 'HALTINGLY';

describe('cleveragents commands against a CleverAgents server', () => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let server: TestServer;
  let home: CliHome;
  const { ok } = extensionCalls(() => server);
  const scenario = clientScenarioReply(USAGE);
  /** The task `send` completed in the first test, its session and file. */
  const done = { taskId: '', contextId: '', file: '' };

  beforeAll(async () => {
    assertCliBuilt();
    home = await cliHome();
    model = await OpenAiCompatibleEndpoint.start((body) => {
      const messages = scenarioMessagesOf(body);
      const last = messages.findLastIndex((m) => m.role === 'user');
      const said = messages[last]?.content ?? '';
      if (said.includes(BREAK)) return { status: 500, error: 'the model broke' };
      if (said.includes(HALTING) && !messages.slice(last + 1).some((m) => m.role === 'assistant')) {
        return { ...scenario(body), tokens: Array<string>(100).fill('thinking '), delayMs: 200 };
      }
      return scenario(body);
    });
    db = await createEmbeddedTestDatabase();
    server = await startServer(db, scenarioServerEnv(model));
    await ok('registry/create', { ...SUPERVISED_READS });
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
    await ifAssigned(home)?.cleanup();
  });

  const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
    runCli(['--server', server.baseUrl, ...args], { home, env });

  const workspace = (name: string) => scenarioWorkspace(home.dir, name);

  it('send prints the answer alone on stdout (plain), exit 0', async () => {
    const { dir, file } = await workspace('plain');
    const run = await cli([
      'send',
      '--profile',
      'supervised-reads',
      '--approve',
      'all',
      '--allow-writes',
      '--allow-commands',
      '--workspace',
      dir,
      `Uppercase ${file}`,
    ]);
    expectExit(run, EXIT.OK);
    expect(run.stdout).toBe(`Done: wrote ${upperPath(file)}; wc says ${TEXT.length} ${upperPath(file)}.\n`);
    expect(run.stdout + run.stderr).not.toMatch(ANSI);
    const list = await cli(['--json', 'tasks', 'list', '--limit', '5']);
    expectExit(list, EXIT.OK);
    const tasks = JSON.parse(list.stdout) as { id: string; contextId: string; status: { state: string } }[];
    expect(tasks).toHaveLength(1);
    expect(tasks[0].status.state).toBe('TASK_STATE_COMPLETED');
    Object.assign(done, { taskId: tasks[0].id, contextId: tasks[0].contextId, file });
  });

  it('card names the extension as available; --json is an AgentCard', async () => {
    const text = await cli(['card']);
    expectExit(text, EXIT.OK);
    expect(text.stdout).toContain('CleverAgents Server');
    expect(text.stdout).toContain(`${EXTENSION_URI} (CleverAgents commands available)`);
    expect(text.stdout).toContain(`${server.baseUrl}/a2a`);
    const json = await cli(['card', '--json']);
    expectExit(json, EXIT.OK);
    const card = AgentCard.fromJSON(JSON.parse(json.stdout));
    expect(card.name).toBe('CleverAgents Server');
    expect(card.capabilities?.extensions.map((e) => e.uri)).toContain(EXTENSION_URI);
    const byUrl = await runCli(['card', server.baseUrl], { home });
    expectExit(byUrl, EXIT.OK);
    expect(byUrl.stdout).toBe(text.stdout);
  });

  it('tasks list, get and watch show the completed task', async () => {
    const list = await cli(['tasks', 'list']);
    expectExit(list, EXIT.OK);
    expect(list.stdout).toMatch(
      new RegExp(`^TASK +STATE +SESSION +UPDATED\\n${done.taskId} +completed +${done.contextId} `),
    );
    const get = await cli(['tasks', 'get', done.taskId, '--history', '1']);
    expectExit(get, EXIT.OK);
    expect(get.stdout).toMatch(
      new RegExp(`^task: +${done.taskId}\\nsession: +${done.contextId}\\nstate: +completed\\n`),
    );
    expect(get.stdout).toContain(`Done: wrote ${upperPath(done.file)}`);
    const json = await cli(['--json', 'tasks', 'get', done.taskId]);
    expect(JSON.parse(json.stdout)).toEqual(expect.objectContaining({ id: done.taskId, contextId: done.contextId }));
    const watch = await cli(['tasks', 'watch', done.taskId]);
    expectExit(watch, EXIT.OK);
    expect(watch.stdout).toContain(`Done: wrote ${upperPath(done.file)}`);
  });

  it('sessions list, show and history', async () => {
    const list = await cli(['sessions', 'list']);
    expectExit(list, EXIT.OK);
    expect(list.stdout).toMatch(/^SESSION +STATUS +ACTOR +TITLE +UPDATED\n/);
    expect(list.stdout).toContain(done.contextId);
    const show = await cli(['sessions', 'show', done.contextId]);
    expectExit(show, EXIT.OK);
    expect(show.stdout).toMatch(/^profile: +supervised-reads$/m);
    expect(show.stdout).toMatch(/^usage: +tokens [1-9]\d* · tool calls [1-9]\d*/m);
    const history = await cli(['sessions', 'history', done.contextId]);
    expectExit(history, EXIT.OK);
    expect(history.stdout).toContain(`you: Uppercase ${done.file}\n`);
    expect(history.stdout).toContain(`agent: Done: wrote ${upperPath(done.file)}`);
    const json = await cli(['--json', 'sessions', 'show', done.contextId]);
    expect(JSON.parse(json.stdout)).toEqual(expect.objectContaining({ sessionId: done.contextId }));
  });

  it('plans list, show, approve and execute (every gate answered): the plan runs, exit 0', async () => {
    const { dir, file } = await workspace('plan');
    const client = await connect({ server: server.baseUrl });
    let planId: string;
    try {
      planId = String((await client.plans.create({ goal: `Uppercase ${file}` })).planId);
    } finally {
      await client.close();
    }
    const list = await cli(['plans', 'list', '--status', 'draft']);
    expectExit(list, EXIT.OK);
    expect(list.stdout).toMatch(new RegExp(`^${planId} +draft +0/0 +Uppercase `, 'm'));
    const show = await cli(['plans', 'show', planId]);
    expectExit(show, EXIT.OK);
    expect(show.stdout).toMatch(/^status: +draft$/m);
    const approve = await cli(['plans', 'approve', planId]);
    expectExit(approve, EXIT.OK);
    expect(approve.stdout).toBe(`${planId} approved\n`);
    const execute = await cli([
      'plans',
      'execute',
      planId,
      '--approve',
      'all',
      '--allow-writes',
      '--allow-commands',
      '--workspace',
      dir,
    ]);
    expectExit(execute, EXIT.OK);
    const answer = `Done: wrote ${upperPath(file)}; wc says ${TEXT.length} ${upperPath(file)}.\n`;
    expect({ stdout: execute.stdout, run: shown(execute) }).toEqual({ stdout: answer, run: shown(execute) });
    expect(await readFile(upperPath(file), 'utf8')).toBe(TEXT.toUpperCase());
    const after = await cli(['--json', 'plans', 'show', planId]);
    expect(JSON.parse(after.stdout)).toEqual(expect.objectContaining({ planId, status: 'completed' }));
  });

  it('plans pause stops a running plan (its task waits, paused), plans resume takes it up, plans cancel ends both', async () => {
    const { file } = await workspace('steer');
    const client = await connect({ server: server.baseUrl });
    let planId: string;
    let taskId: string;
    try {
      planId = String((await client.plans.create({ goal: `Uppercase ${file} ${HALTING}` })).planId);
      await client.plans.approve({ planId });
      const asked = model.requests.length;
      taskId = String((await client.plans.execute({ planId })).taskId);
      // The turn runs: the model is writing its first answer (20 s long: still running when the CLI pauses it,
      // however loaded the machine).
      await until(() => model.requests.length > asked, 'the model to be asked', 10000);
    } finally {
      await client.close();
    }

    const pause = await cli(['plans', 'pause', planId]);
    expectExit(pause, EXIT.OK);
    expect(pause.stdout).toBe(`${planId} paused\n`);
    const paused = await cli(['tasks', 'get', taskId]);
    expectExit(paused, EXIT.OK);
    expect(paused.stdout).toMatch(/^state: +input-required$/m);
    const pausedTask = JSON.parse((await cli(['--json', 'tasks', 'get', taskId])).stdout);
    expect(JSON.stringify(pausedTask.status.message)).toContain(`Plan ${planId} is paused; resume it with`);
    const shown = await cli(['--json', 'plans', 'show', planId]);
    expect(JSON.parse(shown.stdout)).toEqual(expect.objectContaining({ planId, status: 'paused', taskId }));
    const pausedAgain = await cli(['--json', 'plans', 'pause', planId]);
    expectExit(pausedAgain, EXIT.FAILED);
    expect(JSON.parse(pausedAgain.stdout)).toEqual({
      error: expect.objectContaining({ code: -32004, reason: 'INVALID_TRANSITION', exitCode: 1 }),
    });

    const resume = await cli(['plans', 'resume', planId]);
    expectExit(resume, EXIT.OK);
    expect(resume.stdout).toBe(`${planId} executing\n`);
    const json = await cli(['--json', 'tasks', 'get', taskId]);
    expect(JSON.parse(json.stdout).status.state).not.toBe('TASK_STATE_INPUT_REQUIRED');

    const cancel = await cli(['--json', 'plans', 'cancel', planId]);
    expectExit(cancel, EXIT.OK);
    expect(JSON.parse(cancel.stdout)).toEqual(expect.objectContaining({ planId, status: 'canceled' }));
    const watch = await cli(['tasks', 'watch', taskId]);
    expectExit(watch, EXIT.CANCELED);
    const after = await cli(['plans', 'show', planId]);
    expect(after.stdout).toMatch(/^status: +canceled$/m);
    expect(existsSync(upperPath(file))).toBe(false);
  });

  it('exit 1: a task that fails (the model answers HTTP 500), and a plan that does not exist', async () => {
    const { dir } = await workspace('broken');
    const failed = await cli(['send', '--no-tools', '--workspace', dir, `${BREAK} please`]);
    expectExit(failed, EXIT.FAILED);
    expect(failed.stderr).toMatch(/^failed: .+\(task [\w-]+\)$/m);
    const missing = await cli(['plans', 'show', '01HZZZZZZZZZZZZZZZZZZZZZZZ']);
    expectExit(missing, EXIT.FAILED);
    expect(missing.stderr).toMatch(/^error: .*\(\w+, code -32001\)$/m);
    const json = await cli(['--json', 'plans', 'show', '01HZZZZZZZZZZZZZZZZZZZZZZZ']);
    expectExit(json, EXIT.FAILED);
    expect(JSON.parse(json.stdout)).toEqual({ error: expect.objectContaining({ code: -32001, exitCode: 1 }) });
  });

  it('exit 2: a bad flag, --limit abc, and params the server finds invalid (-32602)', async () => {
    const flag = await cli(['send', '--approve', 'sometimes', 'hi']);
    expectExit(flag, EXIT.USAGE);
    expect(flag.stderr).toContain("error: option '--approve <which>' argument 'sometimes' is invalid");
    const unknown = await cli(['tasks', 'list', '--frobnicate']);
    expectExit(unknown, EXIT.USAGE);
    const limit = await cli(['tasks', 'list', '--limit', 'abc']);
    expectExit(limit, EXIT.USAGE);
    expect(limit.stderr).toBe('error: --limit must be a whole number, not "abc"\n');
    const sessionsLimit = await cli(['sessions', 'list', '--limit', 'abc']);
    expectExit(sessionsLimit, EXIT.USAGE);
    const invalid = await cli(['send', '--actor', 'nobody', 'hi']);
    expectExit(invalid, EXIT.USAGE);
    expect(invalid.stderr).toMatch(/code -32602/);
    expect(invalid.stderr).toMatch(/^hint: fix .*actor/m);
    const nothing = await runCli(['sessions', 'list'], { home });
    expectExit(nothing, EXIT.USAGE);
    expect(nothing.stderr).toContain('No server to talk to');
  });

  it('exit 4, then 5: a task left at its plan gate, canceled, then watched', async () => {
    const { dir, file } = await workspace('cancel');
    const waiting = await cli([
      '--json',
      'send',
      '--profile',
      'supervised-reads',
      '--workspace',
      dir,
      `Uppercase ${file}`,
    ]);
    expectExit(waiting, EXIT.INPUT_REQUIRED);
    const { result } = ndjson(waiting.stdout).at(-1)!;
    expect(result).toEqual(expect.objectContaining({ state: 'input-required', unanswered: 'approval', exitCode: 4 }));
    const cancel = await cli(['tasks', 'cancel', result.taskId]);
    expectExit(cancel, EXIT.OK);
    expect(cancel.stdout).toBe(`${result.taskId} canceled\n`);
    const watch = await cli(['tasks', 'watch', result.taskId]);
    expectExit(watch, EXIT.CANCELED);
    expect(watch.stderr).toContain(`canceled:`);
    expect(existsSync(upperPath(file))).toBe(false);
  });

  it('plans approve answers a waiting plan gate and tasks watch follows the task to its next gate; plans reject ends one (exit 5)', async () => {
    const { dir, file } = await workspace('gate');
    const ask = ['--json', 'send', '--profile', 'supervised-reads', '--allow-writes', '--workspace', dir];
    const waiting = await cli([...ask, `Uppercase ${file}`]);
    expectExit(waiting, EXIT.INPUT_REQUIRED);
    const { result } = ndjson(waiting.stdout).at(-1)!;
    const planId = String((await ok('plan/list', { sessionId: result.contextId })).items[0].planId);
    const approve = await cli(['plans', 'approve', planId]);
    expectExit(approve, EXIT.OK);
    expect(approve.stdout).toContain(`Approved at its gate; task ${result.taskId} goes on`);
    // The read is allowed by the profile, but its result needs this client: the task waits on it.
    const watch = await cli(['tasks', 'watch', result.taskId]);
    expectExit(watch, EXIT.INPUT_REQUIRED);
    expect(watch.stderr).toContain('waiting: the task waits for this client to run a tool');

    const other = await workspace('gate-rejected');
    const second = await cli([...ask.slice(0, -1), other.dir, `Uppercase ${other.file}`]);
    expectExit(second, EXIT.INPUT_REQUIRED);
    const rejected = ndjson(second.stdout).at(-1)!.result;
    const rejectedPlan = String((await ok('plan/list', { sessionId: rejected.contextId })).items[0].planId);
    const reject = await cli(['plans', 'reject', rejectedPlan]);
    expectExit(reject, EXIT.OK);
    expect(reject.stdout).toContain('Rejected at its gate');
    const ended = await cli(['tasks', 'watch', rejected.taskId]);
    expectExit(ended, EXIT.CANCELED);
    expect(existsSync(upperPath(other.file))).toBe(false);
  });

  it('exit 6: a server that cannot be reached (a closed port)', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const run = await runCli(['--server', closed, 'sessions', 'list'], { home });
    expectExit(run, EXIT.UNREACHABLE);
    expect(run.stderr).toContain(`cannot reach ${closed}`);
    expect(run.stderr).toContain('hint: check the URL and that the server is running');
    const card = await runCli(['card', closed], { home });
    expectExit(card, EXIT.UNREACHABLE);
  });

  it('piped output has no escape sequences; FORCE_COLOR colours, NO_COLOR and --no-color win over it', async () => {
    const piped = await cli(['card']);
    expect(piped.stdout).not.toMatch(ANSI);
    const forced = await cli(['card'], { FORCE_COLOR: '1' });
    expect(forced.stdout).toMatch(ANSI);
    const noColor = await cli(['card'], { FORCE_COLOR: '1', NO_COLOR: '1' });
    expect(noColor.stdout).not.toMatch(ANSI);
    expect(noColor.stdout).toBe(piped.stdout);
    const flag = await cli(['--no-color', 'card'], { FORCE_COLOR: '1' });
    expect(flag.stdout).toBe(piped.stdout);
    const error = await cli(['--no-color', 'plans', 'show', 'nope'], { FORCE_COLOR: '1' });
    expectExit(error, EXIT.FAILED);
    expect(error.stderr).not.toMatch(ANSI);
    const forcedError = await cli(['plans', 'show', 'nope'], { FORCE_COLOR: '1' });
    expect(forcedError.stderr).toMatch(ANSI);
  });
});
