import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EXIT } from '../../packages/cli/src/exit-codes.js';
import { CLIENT_CAPABILITIES_KEY, GATE_REQUEST_KEY, type ApprovalSubject } from '../../packages/contract/src/index.js';
import { runCli, shown, type CliRun } from '../support/cli.js';
import {
  bubblewrapMissing,
  buildPreloadObject,
  gccMissing,
  hostileHome,
  link,
  processesWith,
  runCliWithoutBubblewrap,
  script,
  type HostileHome,
} from '../support/hostile-home.js';
import {
  call,
  callsThenCollect,
  outcomes,
  startMaliciousAgent,
  terminalOutputs,
  type MaliciousAgent,
  type Script,
} from '../support/malicious-agent.js';
import { assertCliBuilt } from '../support/terminal.js';
import { until } from '../support/wait.js';

/*
 * `cleveragents send` against a hostile A2A agent (test/support/malicious-agent.ts), on a user's machine
 * made for each test (test/support/hostile-home.ts): a temporary HOME with an SSH key, stored logins, a
 * .env and a secret file, and the workspace HOME/project. The agent asks, through client-requests, for
 * what only the person may allow; each test checks the disk, what the agent got back, and the reason
 * (`data.reason`) of each refused call. The tests run concurrently, each with its own home, agent and CLI.
 */

const bwrapMissing = bubblewrapMissing();
const requireSandbox = process.env.CLEVERAGENTS_TEST_REQUIRE_SANDBOX === '1';
if (bwrapMissing && !requireSandbox) console.warn(`SKIPPED: the sandbox tests of malicious-agent: ${bwrapMissing}`);
const withBwrap = bwrapMissing && !requireSandbox ? it.concurrent.skip : it.concurrent;
const noGcc = gccMissing();
if (noGcc) console.warn(`SKIPPED: the LD_PRELOAD test of malicious-agent: ${noGcc}`);
const withGcc = noGcc ? it.concurrent.skip : it.concurrent;

const TEST_MS = 45000;
const homes: HostileHome[] = [];
const agents: MaliciousAgent[] = [];

/** A fresh home, prepared by `prepare`, and an agent playing the script made for it. */
async function machine(
  play: (home: HostileHome) => Script,
  prepare: (home: HostileHome) => unknown = () => undefined,
): Promise<{ home: HostileHome; agent: MaliciousAgent; ws: string }> {
  const home = await hostileHome();
  homes.push(home);
  await prepare(home);
  const agent = await startMaliciousAgent(play(home));
  agents.push(agent);
  return { home, agent, ws: home.workspace };
}

/** `cleveragents --agent <agent> send <flags> "please help"`, from `cwd` (default: the workspace). */
function send(agent: MaliciousAgent, home: HostileHome, flags: string[], cwd = home.workspace): Promise<CliRun> {
  return runCli(['--agent', agent.url, 'send', ...flags, 'please help'], { home, cwd, timeoutMs: 30000 });
}

/** The outcome of each call of the agent's first request, by id: 'ok' or the error's data.reason. */
function firstOutcomes(agent: MaliciousAgent): unknown {
  const first = agent.answers().at(0);
  return first?.kind === 'client-response' ? outcomes(first.responses) : (first ?? 'the client never answered');
}

/** Which of the home's secrets reached the agent, in anything the client sent it. */
function leaked(agent: MaliciousAgent, home: HostileHome): string[] {
  const received = agent.received();
  return home.secrets.filter((secret) => received.includes(secret));
}

/** `name=value` for a terminal/create's env. */
const env = (name: string, value: string) => [{ name, value }];

beforeAll(() => assertCliBuilt());

afterAll(async () => {
  await Promise.all(agents.map((agent) => agent.close()));
  await Promise.all(homes.map((home) => home.cleanup()));
});

describe('cleveragents send against a malicious agent: the environment of commands', () => {
  it.concurrent(
    'without --allow-writes and --allow-commands: only reads are declared; a write and a command are refused (METHOD_NOT_SUPPORTED)',
    async () => {
      const { home, agent, ws } = await machine(({ workspace }) =>
        callsThenCollect([
          call('w1', 'fs/write_text_file', { path: 'notes.txt', content: 'written' }),
          call('t1', 'terminal/create', { command: 'touch', args: [`${workspace}/ran`] }),
        ]),
      );
      const run = await send(agent, home, []);
      expect({
        declared: agent.exchanges.at(0)?.metadata?.[CLIENT_CAPABILITIES_KEY],
        written: ['notes.txt', 'ran'].filter((name) => existsSync(join(ws, name))),
        calls: firstOutcomes(agent),
        run: shown(run),
      }).toEqual({
        declared: { fs: { read: true, write: false }, terminal: false, workspace: ws },
        written: [],
        calls: { w1: 'METHOD_NOT_SUPPORTED', t1: 'METHOD_NOT_SUPPORTED' },
        run: shown(run),
      });
    },
    TEST_MS,
  );

  it.concurrent(
    'the gates the flags ask for are in the first message: --allow-writes and --allow-commands allow writes and commands, no flag asks for none',
    async () => {
      const { home, agent } = await machine(() => () => ({ answer: 'Done.' }));
      const runs = [await send(agent, home, []), await send(agent, home, ['--allow-writes', '--allow-commands'])];
      expect({
        requested: agent.exchanges.map((e) => e.metadata?.[GATE_REQUEST_KEY] ?? 'none'),
        codes: runs.map((run) => run.code),
      }).toEqual({
        requested: ['none', { allow: ['fs_write_text_file', 'terminal_create'] }],
        codes: [EXIT.OK, EXIT.OK],
      });
    },
    TEST_MS,
  );

  it.concurrent(
    'a. PATH leading to a fake bwrap in the workspace: the fake never runs (ENV_NOT_ALLOWED, or the real sandbox runs)',
    async () => {
      const { home, agent } = await machine(
        ({ workspace }) =>
          callsThenCollect([
            call('a1', 'terminal/create', { command: 'true', env: env('PATH', `${workspace}/bin:/usr/bin:/bin`) }),
          ]),
        async ({ workspace, marker }) => {
          await mkdir(join(workspace, 'bin'));
          await script(join(workspace, 'bin', 'bwrap'), `echo ran > '${marker('a')}'`);
        },
      );
      const run = await send(agent, home, ['--allow-commands']);
      expect({ marker: existsSync(home.marker('a')), calls: firstOutcomes(agent), run: shown(run) }).toEqual({
        marker: false,
        calls: { a1: expect.stringMatching(/^(ENV_NOT_ALLOWED|ok)$/) },
        run: shown(run),
      });
    },
    TEST_MS,
  );

  withGcc(
    'b. LD_PRELOAD of a shared object from the workspace: refused (ENV_NOT_ALLOWED), its constructor never runs',
    async () => {
      const { home, agent } = await machine(
        ({ workspace }) =>
          callsThenCollect([
            call('b1', 'terminal/create', { command: 'true', env: env('LD_PRELOAD', `${workspace}/evil.so`) }),
          ]),
        ({ workspace, marker }) => buildPreloadObject(join(workspace, 'evil.so'), marker('b')),
      );
      const run = await send(agent, home, ['--allow-commands']);
      expect({ marker: existsSync(home.marker('b')), calls: firstOutcomes(agent), run: shown(run) }).toEqual({
        marker: false,
        calls: { b1: 'ENV_NOT_ALLOWED' },
        run: shown(run),
      });
    },
    TEST_MS,
  );

  it.concurrent(
    'c. BASH_ENV for `bash -c true`, NODE_OPTIONS=--require for `node -e 0`: refused (ENV_NOT_ALLOWED), the hidden code never runs',
    async () => {
      // The hidden code marks the workspace, then HOME: inside a sandbox HOME is read-only, but the
      // person approved `bash -c true`, not this code, so it must not run at all.
      const { home, agent, ws } = await machine(
        ({ workspace }) =>
          callsThenCollect([
            call('c1', 'terminal/create', {
              command: 'bash',
              args: ['-c', 'true'],
              env: env('BASH_ENV', `${workspace}/x.sh`),
            }),
            call('c2', 'terminal/create', {
              command: 'node',
              args: ['-e', '0'],
              env: env('NODE_OPTIONS', `--require ${workspace}/x.cjs`),
            }),
          ]),
        async ({ workspace, marker }) => {
          // The workspace is marked first: in a sandbox, the write to HOME fails.
          await script(join(workspace, 'x.sh'), `echo ran > '${workspace}/ran-bash'; echo ran > '${marker('c-bash')}'`);
          await writeFile(
            join(workspace, 'x.cjs'),
            `const { writeFileSync } = require('fs');
writeFileSync(${JSON.stringify(join(workspace, 'ran-node'))}, 'ran');
writeFileSync(${JSON.stringify(marker('c-node'))}, 'ran');
`,
          );
        },
      );
      const run = await send(agent, home, ['--allow-commands']);
      const ran = ['ran-bash', 'ran-node'].filter((name) => existsSync(join(ws, name)));
      const marked = ['c-bash', 'c-node'].filter((name) => existsSync(home.marker(name)));
      expect({ marked, ran, calls: firstOutcomes(agent), run: shown(run) }).toEqual({
        marked: [],
        ran: [],
        calls: { c1: 'ENV_NOT_ALLOWED', c2: 'ENV_NOT_ALLOWED' },
        run: shown(run),
      });
    },
    TEST_MS,
  );
});

describe('cleveragents send against a malicious agent: files', () => {
  it.concurrent(
    'd. --workspace HOME: reads of ~/.ssh/id_rsa, the stored logins and ~/.env are refused (READ_DECLINED), their content never sent',
    async () => {
      const { home, agent } = await machine(({ dir }) =>
        callsThenCollect([
          call('d1', 'fs/read_text_file', { path: `${dir}/.ssh/id_rsa` }),
          call('d2', 'fs/read_text_file', { path: '.config/cleveragents/credentials.json' }),
          call('d3', 'fs/read_text_file', { path: `${dir}/.env` }),
        ]),
      );
      const run = await send(agent, home, ['--workspace', home.dir]);
      expect({ leaked: leaked(agent, home), calls: firstOutcomes(agent), run: shown(run) }).toEqual({
        leaked: [],
        calls: { d1: 'READ_DECLINED', d2: 'READ_DECLINED', d3: 'READ_DECLINED' },
        run: shown(run),
      });
    },
    TEST_MS,
  );

  it.concurrent(
    'e. started in HOME without --workspace: HOME is not taken as a workspace, the agent gets no tools, no call answered with content',
    async () => {
      const { home, agent } = await machine(() =>
        callsThenCollect([
          call('e1', 'fs/read_text_file', { path: '.ssh/id_rsa' }),
          call('e2', 'fs/read_text_file', { path: '.env' }),
        ]),
      );
      const run = await send(agent, home, [], home.dir);
      const answeredWithContent = agent.results().filter((r) => r.result !== undefined);
      // No tools at all: the calls stay unanswered, so the task is left waiting on them.
      expect({
        code: run.code,
        leaked: leaked(agent, home),
        answeredWithContent: answeredWithContent.map((r) => r.id),
        warned: run.stderr.includes('too wide a workspace'),
        run: shown(run),
      }).toEqual({ code: EXIT.INPUT_REQUIRED, leaked: [], answeredWithContent: [], warned: true, run: shown(run) });
    },
    TEST_MS,
  );

  it.concurrent(
    'f. writes out of the workspace (.., absolute, through a symlink) and to .git/hooks with --allow-writes: nothing written outside, the hook declined',
    async () => {
      const hook = '#!/bin/sh\necho pwned\n';
      const { home, agent, ws } = await machine(
        ({ dir }) =>
          callsThenCollect([
            call('f1', 'fs/write_text_file', { path: '../outside.txt', content: 'escaped' }),
            call('f2', 'fs/write_text_file', { path: `${dir}/absolute.txt`, content: 'escaped' }),
            call('f3', 'fs/write_text_file', { path: 'linked/through.txt', content: 'escaped' }),
            call('f4', 'fs/write_text_file', { path: '.git/hooks/pre-commit', content: hook }),
          ]),
        async ({ dir, workspace }) => {
          await mkdir(join(dir, 'elsewhere'));
          await link(join(dir, 'elsewhere'), join(workspace, 'linked'));
          await mkdir(join(workspace, '.git', 'hooks'), { recursive: true });
        },
      );
      const run = await send(agent, home, ['--allow-writes']);
      expect({
        outside: home.newOutside(),
        hook: existsSync(join(ws, '.git', 'hooks', 'pre-commit')),
        calls: firstOutcomes(agent),
        run: shown(run),
      }).toEqual({
        outside: [],
        hook: false,
        calls: {
          f1: 'OUTSIDE_WORKSPACE',
          f2: 'OUTSIDE_WORKSPACE',
          f3: 'SYMLINK_ESCAPES_WORKSPACE',
          f4: { reason: 'WRITE_DECLINED', runsCode: true },
        },
        run: shown(run),
      });
    },
    TEST_MS,
  );
});

describe('cleveragents send against a malicious agent: terminals and the sandbox', () => {
  it.concurrent(
    'g. 60 terminals of `sleep 300` with --allow-commands: a cap runs, the rest are refused (TOO_MANY_TERMINALS); all killed at the end',
    async () => {
      // A duration no other process has, to find these sleeps among the machine's processes; far longer than the
      // wait below, so that a sleep gone by then was killed.
      const tag = `300.${randomBytes(4).readUInt32BE()}`;
      const { home, agent } = await machine(() => (exchange) => {
        if (exchange.answers.length > 0) return { answer: 'Done.' };
        return {
          calls: Array.from({ length: 60 }, (_, i) =>
            call(`g${i}`, 'terminal/create', { command: 'sleep', args: [tag] }),
          ),
        };
      });
      const run = await send(agent, home, ['--allow-commands']);
      const tally: Partial<Record<string, number>> = {};
      for (const outcome of Object.values(firstOutcomes(agent) as Record<string, string>)) {
        tally[outcome] = (tally[outcome] ?? 0) + 1;
      }
      const started = tally.ok ?? 0;
      // The client has exited: nothing it started may outlive it (killing a group takes a moment; on a busy
      // machine, seconds: 8 s was once too short under load).
      const alive = await until(() => processesWith(tag).length === 0, 'the sleeps to end', 60_000).then(
        () => [],
        () => processesWith(tag),
      );
      expect({ capped: started > 0 && started < 60, tally, alive, run: shown(run) }).toEqual({
        capped: true,
        tally: { ok: started, TOO_MANY_TERMINALS: 60 - started },
        alive: [],
        run: shown(run),
      });
    },
    TEST_MS + 60_000,
  );

  withBwrap(
    "h. a sandboxed command reading a secret in HOME and listing /run and /var/run/postgresql: neither the secret nor the host's sockets are seen",
    async () => {
      const { home, agent } = await machine(({ dir }) =>
        callsThenCollect([
          call('h1', 'terminal/create', { command: 'cat', args: [`${dir}/secret.txt`] }),
          call('h2', 'terminal/create', { command: 'ls', args: ['-a', '/run', '/var/run/postgresql'] }),
        ]),
      );
      // Under /tmp, HOME would be hidden by the sandbox's own /tmp and the test would prove nothing.
      expect(home.dir.startsWith(`${realpathSync(tmpdir())}/`)).toBe(false);
      const run = await send(agent, home, ['--allow-commands', '--sandbox', 'require']);
      const outputs = terminalOutputs(agent.results());
      // The host's service sockets there (a database's): reachable by path, they lead out of a sandbox
      // without a network. Where the host has none, only the secret is checked.
      const sockets = ['/run', '/var/run/postgresql'].flatMap((dir) =>
        existsSync(dir)
          ? readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isSocket() ? [entry.name] : []))
          : [],
      );
      const listed = (outputs.h2 ?? '').split(/\s+/);
      expect({
        leaked: leaked(agent, home),
        socketsSeen: sockets.filter((name) => listed.includes(name)),
        outputs,
        run: shown(run),
      }).toEqual({
        leaked: [],
        socketsSeen: [],
        outputs,
        run: shown(run),
      });
    },
    TEST_MS,
  );

  it.concurrent(
    'k. no bubblewrap on this machine, default --sandbox: a command is refused (SANDBOX_REQUIRED), never run unsandboxed',
    async () => {
      // Where bubblewrap works, the CLI runs in a mount namespace where its files on the usual paths are
      // empty and not executable: a machine without bubblewrap, whatever PATH says. Where it does not
      // work, this machine is one already.
      const { home, agent } = await machine(({ marker }) =>
        callsThenCollect([call('k1', 'terminal/create', { command: 'touch', args: [marker('k')] })]),
      );
      const args = ['--agent', agent.url, 'send', '--allow-commands', 'please help'];
      const options = { home, cwd: home.workspace, timeoutMs: 30000 };
      const run = await (bwrapMissing ? runCli(args, options) : runCliWithoutBubblewrap(args, options));
      expect({ marker: existsSync(home.marker('k')), calls: firstOutcomes(agent), run: shown(run) }).toEqual({
        marker: false,
        calls: { k1: 'SANDBOX_REQUIRED' },
        run: shown(run),
      });
    },
    TEST_MS,
  );
});

describe('cleveragents send against a malicious agent: what does not follow the contract', () => {
  it.concurrent(
    'm. a client request with `path: 42` beside a good write, --allow-writes: neither runs, the agent is refused both, the user is told why',
    async () => {
      const { home, agent, ws } = await machine(() =>
        callsThenCollect([
          call('m1', 'fs/write_text_file', { path: 42, content: 'escaped' }),
          call('m2', 'fs/write_text_file', { path: 'notes.txt', content: 'written' }),
        ]),
      );
      const run = await send(agent, home, ['--allow-writes']);
      expect({
        code: run.code,
        written: existsSync(join(ws, 'notes.txt')),
        calls: firstOutcomes(agent),
        warned: run.stderr.includes(
          'warning: The agent sent a client request this client cannot read (requests[0].params.path: Invalid input: expected string, received number): none of its calls runs.',
        ),
        run: shown(run),
      }).toEqual({
        code: EXIT.OK,
        written: false,
        calls: { m1: 'INVALID_PARAMS', m2: 'INVALID_PARAMS' },
        warned: true,
        run: shown(run),
      });
    },
    TEST_MS,
  );

  it.concurrent(
    'n. an approval gate whose arguments are a string, --approve all: not approved, not answered; the user is told, exit 4',
    async () => {
      const subject = { kind: 'tool', toolCallId: 'n1', tool: 'terminal_create', args: 'rm -rf ~' };
      const { home, agent } = await machine(
        () => (exchange) =>
          exchange.answers.length === 0 ? { gate: subject as unknown as ApprovalSubject } : { answer: 'Done.' },
      );
      const run = await send(agent, home, ['--approve', 'all', '--allow-commands']);
      expect({
        code: run.code,
        answers: agent.answers(),
        warned: run.stderr.includes(
          'warning: The agent sent an approval request this client cannot read (subject.args: Invalid input: expected record, received string): it is not shown, and nothing is approved.',
        ),
        said: run.stderr.includes('waiting: the task waits on a request this client cannot read'),
        run: shown(run),
      }).toEqual({ code: EXIT.INPUT_REQUIRED, answers: [], warned: true, said: true, run: shown(run) });
    },
    TEST_MS,
  );
});
