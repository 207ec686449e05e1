import { Command, type CommanderError } from 'commander';
import { ROLES, type Role } from '../common/principal.js';
import { UsageError } from './admin.exit-codes.js';
import { commandUsage, formatAdminHelp, pathOf, PROGRAM, shortUsage } from './admin.usage.js';

/** A command line, parsed and checked for shape; the services check the values' domain rules. */
export type AdminCommand =
  | { kind: 'help'; command: string[] }
  | { kind: 'migrate.show'; check: boolean; json: boolean }
  | { kind: 'migrate.run' }
  | { kind: 'migrate.revert' }
  | { kind: 'namespace.create'; namespace: string; displayName?: string; description?: string }
  | { kind: 'namespace.list'; json: boolean }
  | { kind: 'namespace.members.list'; namespace: string; json: boolean }
  | { kind: 'namespace.members.set'; namespace: string; subject: string; role: Role }
  | { kind: 'namespace.members.remove'; namespace: string; subject: string }
  | { kind: 'apikey.create'; name: string; role: Role; namespace?: string; expiresAt?: Date }
  | { kind: 'apikey.list'; namespace?: string; includeRevoked: boolean; json: boolean }
  | { kind: 'apikey.revoke'; id: string; namespace?: string };

type Options = Record<string, string | boolean | undefined>;
type Build = (options: Options, args: string[]) => AdminCommand;

const NAMESPACE_HELP = 'default: CLEVERAGENTS_DEFAULT_NAMESPACE';
const ROLE_HELP = 'owner, admin, member or viewer';

/** --help or -h somewhere: the help of the command it stands after (nothing else is checked). */
class HelpRequested extends Error {
  constructor(readonly command: string[]) {
    super('help');
  }
}

/**
 * The command tree. Commander parses and prints nothing: every outcome comes back as a thrown
 * UsageError or HelpRequested (exitOverride), or as the AdminCommand a leaf's action hands to `found`.
 */
function adminProgram(found: (command: AdminCommand) => void = () => undefined): Command {
  const ignore = () => undefined;
  const program = new Command(PROGRAM)
    .helpCommand(false)
    .allowExcessArguments()
    .configureHelp({ formatHelp: formatAdminHelp, commandUsage })
    .configureOutput({ writeOut: ignore, writeErr: ignore, outputError: ignore });
  const leaf = (parent: Command, name: string, usage: string, description: string, build: Build) =>
    parent
      .command(name)
      .usage(usage)
      .description(description)
      .action((...params: unknown[]) => found(buildCommand(params.at(-1) as Command, build)));

  const migrate = program.command('migrate').description('Schema migrations of the configured database');
  leaf(migrate, 'show', '[--check] [--json]', 'List the migrations: [X] applied, [ ] pending.', (o) => ({
    kind: 'migrate.show',
    check: o.check === true,
    json: o.json === true,
  }))
    .option('--check', 'exit 6 when a migration is pending (0 otherwise)')
    .option('--json', '{"database", "migrations": [{"name", "timestamp", "applied", "known"}], "pending"}');
  leaf(
    migrate,
    'run',
    '',
    'Apply every pending migration (in one transaction; on PostgreSQL under the lock replicas share).',
    () => ({ kind: 'migrate.run' }),
  );
  leaf(migrate, 'revert', '', 'Revert the last applied migration. Exit 5 when none is applied.', () => ({
    kind: 'migrate.revert',
  }));

  const namespace = program
    .command('namespace')
    .description('Namespaces (tenancy boundaries, hierarchical slugs such as acme/platform)');
  leaf(
    namespace,
    'create',
    '<slug> [--display-name X] [--description X]',
    'Create a namespace; its parent (acme for acme/platform) must exist.\n' +
      'Exit 2 for a bad slug, 4 when the parent does not exist, 5 when the namespace exists.',
    (o, [slug]) => ({
      kind: 'namespace.create',
      namespace: slug,
      displayName: o.displayName as string | undefined,
      description: o.description as string | undefined,
    }),
  )
    .argument('<slug>')
    .option('--display-name <X>', 'a name for people')
    .option('--description <X>', 'what the namespace is for');
  leaf(namespace, 'list', '[--json]', 'List every namespace in slug order.', (o) => ({
    kind: 'namespace.list',
    json: o.json === true,
  })).option('--json', '{"items": [{"namespace", "parent", "displayName", "description", ...}], "totalSize"}');

  const members = namespace
    .command('members')
    .description('Members of a namespace: subjects (oidc:<sub>, apikey:<id>) and their roles');
  leaf(
    members,
    'list',
    '<slug> [--json]',
    "List the namespace's own members in subject order (not the roles it inherits from its parents,\n" +
      'nor those of API keys in it or of OIDC_ROLE_MAP). Exit 4 when the namespace does not exist.',
    (o, [slug]) => ({ kind: 'namespace.members.list', namespace: slug, json: o.json === true }),
  )
    .argument('<slug>')
    .option('--json', '{"items": [{"namespace", "subject", "role", "revision", "createdBy", ...}], "totalSize"}');
  leaf(
    members,
    'set',
    '<slug> --subject S --role R',
    'Give a subject a role in the namespace (and below it), or change its role. With SSO only, this\n' +
      'makes a person owner: namespace members set acme --subject oidc:<sub> --role owner\n' +
      'Exit 2 for a bad subject or role, 4 when the namespace does not exist, 5 when it would leave a\n' +
      'top-level namespace without an owner member.',
    (o, [slug]) => ({
      kind: 'namespace.members.set',
      namespace: slug,
      subject: required(o, 'subject'),
      role: roleOf(required(o, 'role')),
    }),
  )
    .argument('<slug>')
    .option('--subject <S>', 'as auth/whoami prints it: oidc:<OIDC_SUBJECT_CLAIM value>, apikey:<key id>, ...')
    .option('--role <R>', ROLE_HELP);
  leaf(
    members,
    'remove',
    '<slug> --subject S',
    "Remove a subject's membership of the namespace.\n" +
      'Exit 4 when the subject is no member of the namespace (or it does not exist), 5 when it is the last\n' +
      'owner member of a top-level namespace.',
    (o, [slug]) => ({ kind: 'namespace.members.remove', namespace: slug, subject: required(o, 'subject') }),
  )
    .argument('<slug>')
    .option('--subject <S>', 'as namespace members list shows it');

  const apikey = program
    .command('apikey')
    .description('API keys (scoped to a namespace and role, stored hashed, revocable)');
  leaf(
    apikey,
    'create',
    '--name N --role R [--namespace NS] [--expires ISO-8601]',
    'Create a key. Details go to stdout, then the key ALONE on the last line:\n' +
      `  KEY=$(${PROGRAM} apikey create --name ci --role member | tail -n 1)\n` +
      'It is shown this once: only its hash is stored.',
    (o) => ({
      kind: 'apikey.create',
      name: required(o, 'name'),
      role: roleOf(required(o, 'role')),
      namespace: o.namespace as string | undefined,
      expiresAt: o.expires === undefined ? undefined : instantOf(o.expires as string),
    }),
  )
    .option('--name <N>', `unique among the namespace's unrevoked keys (letters, digits, ".", "_", "-")`)
    .option('--role <R>', ROLE_HELP)
    .option('--namespace <NS>', NAMESPACE_HELP)
    .option('--expires <T>', 'an ISO 8601 instant in the future (2030-01-31 or 2030-01-31T12:00:00Z); default: never');
  leaf(
    apikey,
    'list',
    '[--namespace NS] [--include-revoked] [--json]',
    "List a namespace's keys, newest first, without their secrets.",
    (o) => ({
      kind: 'apikey.list',
      namespace: o.namespace as string | undefined,
      includeRevoked: o.includeRevoked === true,
      json: o.json === true,
    }),
  )
    .option('--namespace <NS>', NAMESPACE_HELP)
    .option('--include-revoked', 'also the revoked keys')
    .option('--json', '{"items": [{"id", "prefix", "name", "role", "status", ...}], "totalSize"}');
  leaf(
    apikey,
    'revoke',
    '<id> [--namespace NS]',
    'Revoke a key by its id (as apikey list shows it); it stops working at once.\n' +
      'Exit 4 when the namespace holds no such key, 5 when it is already revoked.',
    (o, [id]) => ({ kind: 'apikey.revoke', id, namespace: o.namespace as string | undefined }),
  )
    .argument('<id>')
    .option('--namespace <NS>', NAMESPACE_HELP);

  for (const command of everyCommand(program)) {
    command.exitOverride((error) => refuse(error, command));
  }
  return program;
}

function everyCommand(command: Command): Command[] {
  return [command, ...command.commands.flatMap(everyCommand)];
}

/** Commander's outcome for `command` as the CLI's: help, or a UsageError naming what is wrong. */
function refuse(error: CommanderError, command: Command): never {
  const path = pathOf(command);
  const name = path.join(' ');
  const choices = command.commands.map((c) => c.name()).join(', ');
  switch (error.code) {
    case 'commander.helpDisplayed':
      throw new HelpRequested(path);
    case 'commander.help': // a group without its command
      throw new UsageError(path.length === 0 ? 'missing command' : `${name} needs a command: ${choices}`, path);
    case 'commander.unknownCommand': {
      const word = command.args[0];
      throw new UsageError(
        path.length === 0 ? `unknown command "${word}"` : `unknown ${name} command "${word}"; one of ${choices}`,
        path,
      );
    }
    case 'commander.missingArgument': {
      const missing = command.registeredArguments.slice(command.args.length).map((a) => `<${a.name()}>`);
      throw new UsageError(`missing ${missing.join(' ')}`, path);
    }
    default:
      // One line: the runner prints the usage right below it (a suggestion joins the message).
      throw new UsageError(error.message.replace(/^error: /, '').replaceAll('\n', ' '), path);
  }
}

/** A leaf's action: its AdminCommand, or a UsageError naming the leaf so that its usage follows. */
function buildCommand(command: Command, build: Build): AdminCommand {
  const path = pathOf(command);
  const expected = command.registeredArguments.length;
  // Commander takes the word after an option that needs a value as that value, even another option:
  // `--name --role admin` would name the key "--role". An option's own name is never a value.
  const flags = new Set(command.options.flatMap((o) => (o.long ? [o.long] : [])));
  for (const option of command.options) {
    const value: unknown = command.getOptionValue(option.attributeName());
    if (option.required && typeof value === 'string' && flags.has(value.split('=', 1)[0])) {
      throw new UsageError(`${option.long} needs a value (got the option ${value.split('=', 1)[0]})`, path);
    }
  }
  if (command.args.length > expected) throw new UsageError(`unexpected argument "${command.args[expected]}"`, path);
  try {
    return build(command.opts(), command.args);
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(error.message, path);
    throw error;
  }
}

/** Parses `argv` (without node and the script). Throws UsageError for anything it cannot take. */
export function parseAdminArgs(argv: readonly string[]): AdminCommand {
  if (argv[0] === 'help') return { kind: 'help', command: pathOf(deepest(adminProgram(), argv.slice(1))) };
  let parsed: AdminCommand | undefined;
  try {
    adminProgram((command) => (parsed = command)).parse(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof HelpRequested) return { kind: 'help', command: error.command };
    throw error;
  }
  if (parsed === undefined) throw new UsageError('missing command');
  return parsed;
}

/** `--help` of the program, of a group, of a subgroup or of one command. */
export function helpText(command: readonly string[] = []): string {
  return deepest(adminProgram(), command).helpInformation();
}

/** The short usage printed on stderr after a usage error. */
export function usageText(command: readonly string[] = []): string {
  return shortUsage(deepest(adminProgram(), command));
}

/** The command the longest prefix of `words` names: what `help <words>` is about. */
function deepest(program: Command, words: readonly string[]): Command {
  let command = program;
  for (const word of words) {
    const next = command.commands.find((c) => c.name() === word);
    if (!next) break;
    command = next;
  }
  return command;
}

function required(options: Options, flag: string): string {
  const value = options[flag];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${flag} is required`);
  return value;
}

function roleOf(value: string): Role {
  if (!(ROLES as readonly string[]).includes(value)) {
    throw new UsageError(`--role must be one of ${ROLES.join(', ')} (got "${value}")`);
  }
  return value as Role;
}

/** ISO 8601: a date, or a date and time with an optional zone (a time without a zone is local time). */
const ISO_INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

function instantOf(value: string): Date {
  const match = ISO_INSTANT.exec(value.trim());
  // Date would roll 2030-02-31 over into March: the fields are checked against the calendar first.
  const [year, month, day, hour = 0, minute = 0, second = 0] = (match?.slice(1) ?? []).map((f: string | undefined) =>
    f === undefined ? undefined : Number(f),
  ) as number[];
  const valid =
    match !== null &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= new Date(Date.UTC(year, month, 0)).getUTCDate() &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59;
  const at = valid ? new Date(value.trim()) : undefined;
  if (!at || Number.isNaN(at.getTime())) {
    throw new UsageError(
      `--expires must be an ISO 8601 date or instant, such as 2030-01-31T12:00:00Z (got "${value}")`,
    );
  }
  return at;
}
