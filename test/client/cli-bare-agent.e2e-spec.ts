import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EXIT } from '../../packages/cli/src/exit-codes.js';
import { startBareAgent, type BareAgent } from '../support/bare-agent.js';
import { ANSI, cliHome, expectExit, ndjson, runCli, type CliHome } from '../support/cli.js';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { startServer, type TestServer } from '../support/server.js';
import { assertCliBuilt } from '../support/terminal.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * `cleveragents` with any A2A agent: a bare @a2a-js/sdk agent (Express, in-memory store, a card without
 * the CleverAgents extension) answers the conversation commands; CleverAgents-only commands end with
 * exit 7 and say so without sending anything. With --agent and --server, the conversation goes to the
 * agent and the CleverAgents commands to the server (embedded database, the conformance actor).
 */

describe('cleveragents with a bare A2A agent', () => {
  let agent: BareAgent;
  let db: TestDatabase;
  let server: TestServer;
  let home: CliHome;

  beforeAll(async () => {
    assertCliBuilt();
    home = await cliHome();
    agent = await startBareAgent();
    db = await createEmbeddedTestDatabase();
    server = await startServer(db);
  }, 60000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(agent)?.close();
    await ifAssigned(home)?.cleanup();
  });

  const bare = (args: string[]) => runCli(['--agent', agent.url, ...args], { home });

  it('send, tasks get and card work', async () => {
    const send = await bare(['send', 'hello', 'there']);
    expectExit(send, EXIT.OK);
    expect(send.stdout).toBe('bare: hello there\n');
    expect(send.stdout + send.stderr).not.toMatch(ANSI);

    const stdin = await runCli(['--agent', agent.url, 'send', '-'], { home, stdin: 'from stdin\n' });
    expectExit(stdin, EXIT.OK);
    expect(stdin.stdout).toBe('bare: from stdin\n');

    const json = await bare(['--json', 'send', 'again']);
    expectExit(json, EXIT.OK);
    const { result } = ndjson(json.stdout).at(-1)!;
    expect(result).toEqual(expect.objectContaining({ state: 'completed', answer: 'bare: again', exitCode: 0 }));
    expect(result.usage).toBeUndefined();

    const get = await bare(['tasks', 'get', result.taskId]);
    expectExit(get, EXIT.OK);
    expect(get.stdout).toMatch(new RegExp(`^task: +${result.taskId}\\n(.*\\n)*state: +completed\\n`));
    expect(get.stdout).toContain('bare: again');

    const card = await runCli(['card', agent.url], { home });
    expectExit(card, EXIT.OK);
    expect(card.stdout).toMatch(/^Bare SDK agent v1\.0\.0\n/);
    expect(card.stdout).toContain('Extensions\n  none\n');
    expect(card.stdout).toContain('Security\n  none declared\n');
    const viaAgent = await bare(['card']);
    expectExit(viaAgent, EXIT.OK);
    expect(viaAgent.stdout).toBe(card.stdout);
  });

  it('sessions list and plans list end with exit 7, saying the agent does not offer them; nothing is sent', async () => {
    const before = agent.methods.length;
    for (const args of [
      ['sessions', 'list'],
      ['plans', 'list'],
    ]) {
      const run = await bare(args);
      expectExit(run, EXIT.NOT_OFFERED);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(
        'error: this agent does not offer CleverAgents extension methods (its card does not declare urn:cleveragents:extensions:v1)',
      );
      expect(run.stderr).toMatch(/^hint: connect to a CleverAgents server \(--server URL or --local\)/m);
    }
    const json = await bare(['--json', 'sessions', 'list']);
    expectExit(json, EXIT.NOT_OFFERED);
    expect(JSON.parse(json.stdout)).toEqual({ error: expect.objectContaining({ exitCode: 7 }) });
    expect(agent.methods.slice(before)).toEqual([]);
  });

  it('with --agent and --server: the conversation goes to the agent, sessions list to the server', async () => {
    const received = agent.received.length;
    const split = (args: string[]) => runCli(['--agent', agent.url, '--server', server.baseUrl, ...args], { home });
    const send = await split(['send', 'to the agent']);
    expectExit(send, EXIT.OK);
    expect(send.stdout).toBe('bare: to the agent\n');
    expect(agent.received.length).toBe(received + 1);

    const before = agent.methods.length;
    const sessions = await split(['--json', 'sessions', 'list']);
    expectExit(sessions, EXIT.OK);
    expect(JSON.parse(sessions.stdout)).toEqual(expect.objectContaining({ items: expect.any(Array) }));
    const plans = await split(['plans', 'list']);
    expectExit(plans, EXIT.OK);
    expect(plans.stdout).toBe('No plans.\n');
    expect(agent.methods.slice(before)).toEqual([]);
  });
});
