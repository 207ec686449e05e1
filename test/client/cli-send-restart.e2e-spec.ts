import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cliHome, runCli, shown, type CliHome } from '../support/cli.js';
import { watchCli } from '../support/cli-watch.js';
import { databaseTargets, type TestDatabase } from '../support/database.js';
import { OpenAiCompatibleEndpoint } from '../support/openai-endpoint.js';
import { localBackendEnv, spawnServer, startProcess, type ServerProcess } from '../support/server-process.js';
import { assertCliBuilt } from '../support/terminal.js';
import { until } from '../support/wait.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * Issue 38 (5, 6): `cleveragents send` against the real server process, SIGTERM-restarted mid-answer.
 * The stream ends with SERVER_SHUTTING_DOWN (retryable), the CLI re-joins the task once the server is
 * back (the restarted server resumes the task and its answer starts over), and prints the whole answer
 * once, exit 0. With a window shorter than the outage it gives up naming the task and the command
 * that picks it up, which then does. Runs on the server as it is: against one without resumableStreams
 * the re-join goes through a snapshot; against one with them, through lastSequence.
 */

const TOKENS = Array.from({ length: 120 }, (_, i) => `word${i} `);
const ANSWER = TOKENS.join('');
const target = databaseTargets()[0];

describe('cleveragents send across a server restart (SIGTERM mid-answer)', () => {
  let model: OpenAiCompatibleEndpoint;
  let db: TestDatabase;
  let home: CliHome;
  let server: ServerProcess | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    assertCliBuilt();
    home = await cliHome();
    model = await OpenAiCompatibleEndpoint.start({ tokens: TOKENS, delayMs: 50 });
    db = await target.create();
    env = localBackendEnv(db, model.baseUrl(), 2);
  }, 90000);

  afterAll(async () => {
    if (server && server.process.exitCode === null && server.process.signalCode === null) {
      server.process.kill('SIGKILL');
      await server.exited;
    }
    await ifAssigned(db)?.cleanup();
    await ifAssigned(model)?.close();
    await ifAssigned(home)?.cleanup();
  });

  /** SIGTERM, and the graceful stop to its end. */
  async function stop(): Promise<void> {
    server!.process.kill('SIGTERM');
    await server!.exited;
  }

  /** The server again, on the same port and database. */
  async function restart(port: string): Promise<void> {
    const next = await spawnServer(env, Number(port));
    server = next;
    await until(
      async () => (await fetch(`${next.baseUrl}/readyz`).catch(() => undefined))?.status === 200,
      'the restarted server to be ready',
      60000,
    );
  }

  it('re-joins the task once the server is back and prints the whole answer once, exit 0', async () => {
    model.answerWith({ tokens: TOKENS, delayMs: 50 });
    server = await startProcess(env);
    const port = new URL(server.baseUrl).port;
    const cli = watchCli(['--server', server.baseUrl, 'send', 'a long story'], { home });
    try {
      await cli.outputMatching('stdout', /word5 /);
      await stop();
      await cli.outputMatching('stderr', /re-joining task/);
      // The recovered turn asks the model again: the same answer, quicker.
      model.answerWith({ tokens: TOKENS, delayMs: 5 });
      await restart(port);
      const run = await cli.done;
      expect({ code: run.code, run: shown(run) }).toEqual({ code: 0, run: shown(run) });
      expect(run.stdout).toBe(`${ANSWER}\n`);
    } finally {
      cli.kill();
    }
  }, 240000);

  it('gives up after its window naming the task and the command that picks it up, which does', async () => {
    model.answerWith({ tokens: TOKENS, delayMs: 50 });
    if (!server || server.process.exitCode !== null) server = await startProcess(env);
    const port = new URL(server.baseUrl).port;
    const cli = watchCli(['--server', server.baseUrl, '--resume-window', '2', 'send', 'another long story'], {
      home,
    });
    let run;
    try {
      await cli.outputMatching('stdout', /word5 /);
      await stop();
      run = await cli.done;
    } finally {
      cli.kill();
    }
    expect({ code: run.code, run: shown(run) }).toEqual({ code: 6, run: shown(run) });
    const pickUp =
      /task: (\S+) goes on at the server; follow it to its end with:\n {2}(cleveragents --server \S+ tasks watch \S+)\n/.exec(
        run.stderr,
      );
    expect(pickUp).not.toBeNull();
    expect(pickUp![2]).toBe(`cleveragents --server ${server.baseUrl} tasks watch ${pickUp![1]}`);
    model.answerWith({ tokens: TOKENS, delayMs: 5 });
    await restart(port);
    // Picked up at once, in mid-answer: the client resumes after the last event it saw, each token once.
    const watch = await runCli(pickUp![2].split(' ').slice(1), { home, timeoutMs: 120000 });
    expect({ code: watch.code, run: shown(watch) }).toEqual({ code: 0, run: shown(watch) });
    expect(watch.stdout).toBe(`${ANSWER}\n`);
  }, 240000);
});
