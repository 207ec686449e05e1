import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { APPROVAL_STATES, PLAN_STATUSES, ROLES } from '@cleveragents/contract';
import type { GlobalOptions } from './context.js';
import { EXIT } from './exit-codes.js';
import { outputClosed } from './output.js';
import { styleFor } from './style.js';
import { tracingWanted } from './telemetry/settings.js';
import type { CommandTrace } from './telemetry/start.js';

/**
 * `cleveragents`: the terminal client. Commands (and the error reporting, which needs the library)
 * load on first use, so `--help` loads no more than the argument parser, and `send` and `tasks` start
 * without the interactive UI's libraries (test/client/cli-startup.spec.ts).
 */

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
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

/** A command's words below the program (`send`, `tasks list`). */
function commandName(command: Command): string {
  const words: string[] = [];
  for (let c: Command = command; c.parent; c = c.parent) words.unshift(c.name());
  return words.join(' ');
}

/** The command's exported trace when --trace or the OTEL_* variables ask (the SDK is loaded only then). */
async function commandTrace(command: Command, options: GlobalOptions): Promise<CommandTrace | undefined> {
  if (!tracingWanted(options.trace === true, process.env)) return undefined;
  const { startCommandTrace } = await import('./telemetry/start.js');
  return startCommandTrace({
    command: commandName(command),
    mode: options.local ? 'local' : options.agent ? 'agent' : 'server',
    flag: options.trace === true,
    version: version(),
    env: process.env,
    stderr: process.stderr,
  });
}

/** Runs a command's module (in its trace, when exported), reporting any error the way --json asks. */
function action<A extends unknown[]>(
  load: () => Promise<(options: GlobalOptions, command: Command, ...args: A) => Promise<number>>,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const options = globals(command);
    let tracing: CommandTrace | undefined;
    try {
      tracing = await commandTrace(command, options);
      const run = await load();
      const work = () => run(options, command, ...(args.slice(0, -2) as A));
      exitCode = tracing ? await tracing.run(work) : await work();
    } catch (err) {
      // The reader of stdout left (`| head`): what failed since is that, and nothing is said.
      if (outputClosed.aborted) {
        exitCode = EXIT.OUTPUT_CLOSED;
        return;
      }
      const { describeError, errorJson, exitCodeOf } = await import('./context.js');
      exitCode = exitCodeOf(err);
      if (options.json) process.stdout.write(`${JSON.stringify(errorJson(err, options))}\n`);
      const env = options.color === false ? { ...process.env, NO_COLOR: '1' } : process.env;
      process.stderr.write(`${describeError(err, styleFor(process.stderr, env), options)}\n`);
    } finally {
      await tracing?.finish(outputClosed.aborted ? EXIT.OUTPUT_CLOSED : exitCode);
    }
  };
}

/** Collects a repeatable option's values. */
function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
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
    .option('--resume-window <seconds>', 'how long a broken stream is re-joined before giving up (default: 180)')
    .option('--no-color', 'no colours (NO_COLOR=1 does the same)')
    .option(
      '--trace',
      "export this command's trace (OpenTelemetry OTLP, default http://localhost:4318) and print its id",
    )
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  const toolOptions = (command: Command): Command =>
    command
      .option('--workspace <dir>', 'the folder the agent may read, write and run commands in (default: .)')
      .option('--allow-writes', 'apply file writes without asking')
      .option('--allow-commands', 'run commands without asking')
      .addOption(
        new Option('--sandbox <mode>', 'commands in a sandbox (bubblewrap): require it, or allow running without one')
          .choices(['require', 'auto', 'off'])
          .default('require'),
      )
      .option(
        '--sandbox-read <dir>',
        'a folder sandboxed commands may read besides the system (repeatable)',
        collect,
        [],
      )
      .option('--sandbox-network', 'let sandboxed commands use the network')
      .option(
        '--allow-env <name>',
        'a variable the agent may set for commands besides the allow-list (repeatable)',
        collect,
        [],
      )
      .option('--command-timeout <seconds>', 'stop a command after this long', '120')
      .option('--no-tools', 'offer the agent no access to files or terminal');

  toolOptions(
    program
      .command('chat')
      .description('an interactive conversation: streamed answers, the live plan, approvals, local tools')
      .option('--session <id>', 'resume a session (A2A context)')
      .option('--actor <name>', 'the actor a new session talks to')
      .option('--profile <name>', 'the automation profile of a new session')
      .option(
        '--plain',
        'the line-by-line chat, without the full-screen UI (also when TERM=dumb or not on a terminal)',
      ),
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

  const sessions = program.command('sessions').description('CleverAgents sessions: list, show, history, rename');
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
  sessions
    .command('rename')
    .argument('<sessionId>')
    .argument('<title>')
    .action(action(async () => (await import('./commands/sessions.js')).rename));

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

  const registry = program
    .command('registry')
    .description("the namespace's registry as a folder of YAML files: pull, edit offline, status, push");
  const folder = (command: Command): Command => command.option('--dir <dir>', 'the registry folder (default: .)');
  folder(registry.command('pull'))
    .description('mirror the registry into the folder, or bring it up to date (local edits are kept)')
    .option('--namespace <ns>', "the namespace (default: the folder's, else your default namespace)")
    .action(action(async () => (await import('./commands/registry.js')).pull));
  folder(registry.command('status'))
    .description('the local changes (added, modified, deleted) since the last pull or push, offline')
    .option('--remote', 'also ask the server what it has newer')
    .action(action(async () => (await import('./commands/registry.js')).status));
  folder(registry.command('push'))
    .description(
      'send the local changes; a change the server has moved past is a conflict to resolve, never an overwrite',
    )
    .option('--atomic', 'apply every change or none')
    .addOption(
      new Option('--resolve <which>', 'resolve every conflict without asking: keep mine, or take the server’s').choices(
        ['mine', 'theirs'],
      ),
    )
    .action(action(async () => (await import('./commands/registry.js')).push));

  managementCommands(program);

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

/** Namespaces, members, API keys and the audit log, over JSON-RPC with the caller's own credential. */
function managementCommands(program: Command): void {
  const paged = (command: Command): Command =>
    command
      .option('--limit <n>', 'how many (1-100)', '20')
      .option('--page-token <token>', 'the next page, as the previous one ended');
  const inNamespace = (command: Command): Command =>
    command.option('--namespace <ns>', 'the namespace (default: your default namespace)');
  const role = (what: string): Option => new Option('--role <role>', what).choices(ROLES).makeOptionMandatory();
  const load = async () => await import('./commands/namespaces.js');

  const namespaces = program
    .command('namespaces')
    .description('namespaces (acme, acme/platform): list, get, create, update, delete, usage');
  paged(namespaces.command('list').description('the namespaces you hold a role in, with those below them')).action(
    action(async () => (await load()).list),
  );
  namespaces
    .command('get')
    .argument('<namespace>')
    .action(action(async () => (await load()).get));
  namespaces
    .command('create')
    .argument('<namespace>', 'its slug; the parent (acme for acme/platform) must exist')
    .description('create a namespace; you become its owner')
    .option('--display-name <name>', 'a name for people (default: the last part of the slug)')
    .option('--description <text>', 'what the namespace is for')
    .action(action(async () => (await load()).create));
  namespaces
    .command('update')
    .argument('<namespace>')
    .description("change a namespace's display name or description")
    .option('--display-name <name>', 'a name for people')
    .option('--description <text>', 'what the namespace is for')
    .option('--expected-revision <n>', 'refuse if it changed since this revision')
    .action(action(async () => (await load()).update));
  namespaces
    .command('delete')
    .argument('<namespace>')
    .description('delete an empty namespace (asks first on a terminal)')
    .option('-y, --yes', 'do not ask (required when not on a terminal)')
    .option('--expected-revision <n>', 'refuse if it changed since this revision')
    .action(action(async () => (await load()).remove));
  namespaces
    .command('usage')
    .argument('[namespace]', 'default: your default namespace')
    .description("what a namespace's sessions used (admin): tokens, tool calls, wall time, by actor and owner")
    .option('--since <instant>', 'only sessions created at or after this ISO 8601 instant (2026-12-01T00:00:00Z)')
    .option('--until <instant>', 'only sessions created before this ISO 8601 instant')
    .option('--children', 'also the namespaces below it, with a table per namespace')
    .action(action(async () => (await load()).usage));

  const members = program.command('members').description("a namespace's members and their roles: list, set, remove");
  paged(inNamespace(members.command('list'))).action(action(async () => (await import('./commands/members.js')).list));
  inNamespace(
    members
      .command('set')
      .argument('<subject>', 'who: oidc:<subject>, apikey:<key id>, as auth/whoami shows it')
      .description('grant a subject a role in the namespace, or change its role')
      .addOption(role('the role to hold'))
      .option('--expected-revision <n>', 'refuse if the membership changed since this revision (0: only a new member)'),
  ).action(action(async () => (await import('./commands/members.js')).set));
  inNamespace(
    members.command('remove').argument('<subject>').description('remove a subject from the namespace'),
  ).action(action(async () => (await import('./commands/members.js')).remove));

  const keys = program.command('keys').description('API keys of a namespace: create, list, revoke');
  inNamespace(
    keys
      .command('create')
      .description('mint an API key; its secret is printed this once, alone on the last line of stdout')
      .requiredOption('--name <name>', "unique among the namespace's keys (letters, digits, ., _, -)")
      .addOption(role('the role the key holds (no stronger than yours)'))
      .option('--expires <when>', 'an ISO 8601 date or instant in the future (default: never)'),
  ).action(action(async () => (await import('./commands/keys.js')).create));
  paged(inNamespace(keys.command('list').description('the keys, newest first, without their secrets')))
    .option('--include-revoked', 'also the revoked keys')
    .action(action(async () => (await import('./commands/keys.js')).list));
  keys
    .command('revoke')
    .argument('<id>', 'the key id, as keys create and keys list show it')
    .description('revoke a key: it stops working at once')
    .option('--namespace <ns>', "the key's namespace (default: found from the id)")
    .action(action(async () => (await import('./commands/keys.js')).revoke));

  const approvals = program
    .command('approvals')
    .description('the gates your tasks wait at, answered from here: list, show, approve, deny');
  paged(inNamespace(approvals.command('list', { isDefault: true }).description('approvals, newest first')))
    .addOption(
      new Option('--state <state>', 'only approvals in this state (default: pending)').choices(APPROVAL_STATES),
    )
    .option('--session <id>', 'only the approvals of this session')
    .option('--all', "every requester's approvals (the namespace's admins and owners)")
    .action(action(async () => (await import('./commands/approvals.js')).list));
  approvals
    .command('show')
    .argument('<approvalId>')
    .description('what an approval asks: the plan, or the tool and its arguments; and how it was answered')
    .action(action(async () => (await import('./commands/approvals.js')).show));
  approvals
    .command('approve')
    .argument('<approvalId>')
    .description('approve: the waiting task goes on')
    .action(action(async () => (await import('./commands/approvals.js')).approve));
  approvals
    .command('deny')
    .argument('<approvalId>')
    .description('reject: the task is told no (and why, with --reason)')
    .option('--reason <text>', 'why, told to the agent')
    .action(action(async () => (await import('./commands/approvals.js')).deny));
  const webhooks = approvals
    .command('webhooks')
    .description("where the namespace's new approvals are posted (a chat tool's incoming webhook): list, add, remove");
  inNamespace(webhooks.command('list', { isDefault: true }).description("the namespace's approval webhooks")).action(
    action(async () => (await import('./commands/approval-webhooks.js')).list),
  );
  inNamespace(
    webhooks
      .command('add')
      .argument('<url>', 'where to post: an https URL the server may reach')
      .description('register a webhook; prints its signing secret, this once'),
  ).action(action(async () => (await import('./commands/approval-webhooks.js')).add));
  inNamespace(
    webhooks
      .command('remove')
      .argument('<id>', 'the webhook id, as list and add show it')
      .description('remove a webhook'),
  ).action(action(async () => (await import('./commands/approval-webhooks.js')).remove));

  const audit = program.command('audit').description("a namespace's audit log: who changed what");
  paged(inNamespace(audit.command('list').description('audit records, newest first')))
    .option('--actor <subject>', 'only what this subject did (oidc:alice, apikey:<id>)')
    .option('--action <action>', 'only this action (namespace.create, member.set, apikey.revoke, ...)')
    .option('--target <target>', 'only records about this target (a namespace, a subject, a key or approval id)')
    .option('--since <instant>', 'only records at or after this ISO 8601 instant (2026-12-01T00:00:00Z)')
    .option('--until <instant>', 'only records before this ISO 8601 instant')
    .action(action(async () => (await import('./commands/audit.js')).list));
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
