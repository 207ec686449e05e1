import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { PLAN_STATUSES } from '../../contract/index.js';
import type { GlobalOptions } from './context.js';
import { EXIT } from './exit-codes.js';
import { styleFor } from './style.js';

/**
 * `cleveragents`: the terminal client. Commands (and the error reporting, which needs the library)
 * load on first use, so `--help` loads no more than the argument parser, and `send` and `tasks` start
 * without the interactive UI's libraries (test/client/cli-startup.spec.ts).
 */

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** Exit code to leave with once stdout has drained (set by commands). */
let exitCode: number = EXIT.OK;

export function setExitCode(code: number): void {
  exitCode = code;
}

function globals(command: Command): GlobalOptions {
  return command.optsWithGlobals<GlobalOptions>();
}

/** Runs a command's module, reporting any error the way --json asks. */
function action<A extends unknown[]>(
  load: () => Promise<(options: GlobalOptions, command: Command, ...args: A) => Promise<number>>,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const options = globals(command);
    try {
      const run = await load();
      exitCode = await run(options, command, ...(args.slice(0, -2) as A));
    } catch (err) {
      const { describeError, errorJson, exitCodeOf } = await import('./context.js');
      exitCode = exitCodeOf(err);
      if (options.json) process.stdout.write(`${JSON.stringify(errorJson(err))}\n`);
      const env = options.color === false ? { ...process.env, NO_COLOR: '1' } : process.env;
      process.stderr.write(`${describeError(err, styleFor(process.stderr, env))}\n`);
    }
  };
}

export function buildProgram(): Command {
  const program = new Command('cleveragents')
    .description('Talk to CleverAgents — or any A2A agent — from your terminal: chat, plans, approvals, tasks.')
    .version(version(), '-V, --version')
    .option('--server <url>', 'the server (default: $CLEVERAGENTS_SERVER, then the stored login)')
    .option('--local', 'start a private server over stdio (embedded database, no network, no login)')
    .option('--agent <url>', 'send the conversation to this A2A agent; extension commands still go to --server')
    .option('--api-key <key>', 'API key (default: $CLEVERAGENTS_API_KEY, then the stored login)')
    .option('--context <name>', 'a named server from the stored logins (see `cleveragents contexts`)')
    .option('--data-dir <dir>', 'with --local: where the local server keeps its data (default: XDG data home)')
    .option('--json', 'machine-readable output: JSON, or NDJSON events for streams')
    .option('--no-color', 'no colours (NO_COLOR=1 does the same)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  const toolOptions = (command: Command): Command =>
    command
      .option('--workspace <dir>', 'the folder the agent may read, write and run commands in (default: .)')
      .option('--allow-writes', 'apply file writes without asking')
      .option('--allow-commands', 'run commands without asking')
      .addOption(
        new Option('--sandbox <mode>', 'run commands in a sandbox (bubblewrap)')
          .choices(['auto', 'require', 'off'])
          .default('auto'),
      )
      .option('--command-timeout <seconds>', 'stop a command after this long', '120')
      .option('--no-tools', 'offer the agent no access to files or terminal');

  toolOptions(
    program
      .command('chat')
      .description('an interactive conversation: streamed answers, the live plan, approvals, local tools')
      .option('--session <id>', 'resume a session (A2A context)')
      .option('--actor <name>', 'the actor a new session talks to')
      .option('--profile <name>', 'the automation profile of a new session'),
  ).action(action(async () => (await import('./commands/chat.js')).chat));

  toolOptions(
    program
      .command('send')
      .description('send one message and print the answer (for scripts; see exit codes in docs/client.md)')
      .argument('<text...>', 'the message (use - to read it from stdin)')
      .option('--session <id>', 'continue a session (A2A context)')
      .option('--task <id>', 'answer a task that waits for input')
      .option('--actor <name>', 'the actor a new session talks to')
      .option('--profile <name>', 'the automation profile of a new session')
      .addOption(
        new Option('--approve <which>', 'answer approval gates unattended')
          .choices(['never', 'plans', 'all'])
          .default('never'),
      ),
  ).action(action(async () => (await import('./commands/send.js')).send));

  const tasks = program.command('tasks').description('A2A tasks: list, get, cancel, watch');
  tasks
    .command('list')
    .option('--session <id>', 'only the tasks of this session')
    .option('--limit <n>', 'how many', '20')
    .action(action(async () => (await import('./commands/tasks.js')).list));
  tasks
    .command('get')
    .argument('<taskId>')
    .option('--history <n>', 'messages of history to show', '0')
    .action(action(async () => (await import('./commands/tasks.js')).get));
  tasks
    .command('cancel')
    .argument('<taskId>')
    .action(action(async () => (await import('./commands/tasks.js')).cancel));
  tasks
    .command('watch')
    .argument('<taskId>')
    .description('follow a task until it ends or waits (SubscribeToTask)')
    .action(action(async () => (await import('./commands/tasks.js')).watch));

  const sessions = program.command('sessions').description('CleverAgents sessions: list, show, history');
  sessions
    .command('list')
    .option('--limit <n>', 'how many', '20')
    .action(action(async () => (await import('./commands/sessions.js')).list));
  sessions
    .command('show')
    .argument('<sessionId>')
    .action(action(async () => (await import('./commands/sessions.js')).show));
  sessions
    .command('history')
    .argument('<sessionId>')
    .option('--limit <n>', 'how many messages', '50')
    .action(action(async () => (await import('./commands/sessions.js')).history));

  const plans = program.command('plans').description('CleverAgents plans: list, show, approve, reject, run and steer');
  plans
    .command('list')
    .addOption(new Option('--status <status>', 'only plans in this status').choices(PLAN_STATUSES))
    .option('--session <id>', 'only the plans of this session')
    .option('--limit <n>', 'how many', '20')
    .action(action(async () => (await import('./commands/plans.js')).list));
  plans
    .command('show')
    .argument('<planId>')
    .action(action(async () => (await import('./commands/plans.js')).show));
  for (const [name, description] of [
    ['approve', 'approve a draft plan, or the plan its task waits on'],
    ['reject', 'reject the plan its task waits on, or cancel a draft plan'],
    ['pause', 'pause an executing plan'],
    ['resume', 'resume a paused plan'],
    ['cancel', 'cancel a plan and its task'],
  ] as const) {
    plans
      .command(name)
      .argument('<planId>')
      .description(description)
      .action(action(async () => (await import('./commands/plans.js'))[name]));
  }
  toolOptions(
    plans
      .command('execute')
      .argument('<planId>')
      .description('run an approved plan and follow its task')
      .addOption(
        new Option('--approve <which>', 'answer approval gates unattended')
          .choices(['never', 'plans', 'all'])
          .default('never'),
      ),
  ).action(action(async () => (await import('./commands/plans.js')).execute));

  program
    .command('card')
    .argument('[url]', 'an A2A agent (default: the server)')
    .description('describe an A2A agent: skills, interfaces, security, extensions')
    .action(action(async () => (await import('./commands/card.js')).card));

  program
    .command('login')
    .description("sign in at the server's single sign-on (device code or browser), or store an API key with --api-key")
    // Not required here: the program's own --api-key takes the flag wherever it stands; login checks it.
    .option('--api-key <key>', 'store this API key instead of signing in')
    .option('--client-id <id>', "the CLI's OAuth client id (default: the one the server's Agent Card names)")
    .addOption(
      new Option('--flow <flow>', 'device code, or a browser with a loopback redirect (PKCE)')
        .choices(['auto', 'device', 'browser'])
        .default('auto'),
    )
    .option('--no-browser', 'print the sign-in address without opening a browser')
    .option('--no-default', 'do not make this server the default')
    .action(action(async () => (await import('./commands/login.js')).login));
  program
    .command('logout')
    .description("revoke and forget the stored login of a server (default: the current server's)")
    .action(action(async () => (await import('./commands/login.js')).logout));
  program
    .command('whoami')
    .description('who the server takes you for: subject, namespace, role')
    .action(action(async () => (await import('./commands/login.js')).whoami));
  const contexts = program.command('contexts').description('named servers: list them, pick the default');
  contexts
    .command('list')
    .description('the named servers, their login and the current one')
    .action(action(async () => (await import('./commands/login.js')).listContexts));
  contexts
    .command('use')
    .argument('<name>')
    .description('use this context when no --server or --context is given')
    .action(action(async () => (await import('./commands/login.js')).useContext));

  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end with code 0; anything else is a usage error.
      return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    }
    throw err;
  }
  return exitCode;
}
