import { EXIT_CODES_HELP } from './admin.exit-codes.js';

export const PROGRAM = 'cleveragents-admin';

const ENVIRONMENT_HELP = `Configuration: the server's own environment (see .env.example), validated the same way.
  DATABASE_URL           PostgreSQL; works while the server runs
  CLEVERAGENTS_DATA_DIR  the embedded database when DATABASE_URL is unset (default ./data); it admits
                         one process at a time, so administer it only while the server is stopped
  CLEVERAGENTS_DEFAULT_NAMESPACE  the namespace of apikey commands without --namespace (default "default")
Changes are audited as made by cli:<OS user>.`;

const COMMANDS = {
  migrate: {
    summary: 'Schema migrations of the configured database',
    subcommands: {
      show: {
        synopsis: 'migrate show [--check] [--json]',
        text: `List the migrations: [X] applied, [ ] pending.
  --check  exit 6 when a migration is pending (0 otherwise)
  --json   {"database", "migrations": [{"name", "timestamp", "applied", "known"}], "pending"}`,
      },
      run: {
        synopsis: 'migrate run',
        text: 'Apply every pending migration (in one transaction; on PostgreSQL under the lock replicas share).',
      },
      revert: {
        synopsis: 'migrate revert',
        text: 'Revert the last applied migration. Exit 5 when none is applied.',
      },
    },
  },
  namespace: {
    summary: 'Namespaces (tenancy boundaries, hierarchical slugs such as acme/platform)',
    subcommands: {
      create: {
        synopsis: 'namespace create <slug> [--display-name X] [--description X]',
        text: `Create a namespace; its parent (acme for acme/platform) must exist.
Exit 2 for a bad slug, 4 when the parent does not exist, 5 when the namespace exists.`,
      },
      list: {
        synopsis: 'namespace list [--json]',
        text: `List every namespace in slug order.
  --json   {"items": [{"namespace", "parent", "displayName", "description", ...}], "totalSize"}`,
      },
      'members list': {
        synopsis: 'namespace members list <slug> [--json]',
        text: `List the namespace's own members in subject order (not the roles it inherits from its parents,
nor those of API keys in it or of OIDC_ROLE_MAP). Exit 4 when the namespace does not exist.
  --json   {"items": [{"namespace", "subject", "role", "revision", "createdBy", ...}], "totalSize"}`,
      },
      'members set': {
        synopsis: 'namespace members set <slug> --subject S --role R',
        text: `Give a subject a role in the namespace (and below it), or change its role. With SSO only, this
makes a person owner: namespace members set acme --subject oidc:<sub> --role owner
  --subject S  as auth/whoami prints it: oidc:<OIDC_SUBJECT_CLAIM value>, apikey:<key id>, ...
  --role R     owner, admin, member or viewer
Exit 2 for a bad subject or role, 4 when the namespace does not exist, 5 when it would leave a
top-level namespace without an owner member.`,
      },
      'members remove': {
        synopsis: 'namespace members remove <slug> --subject S',
        text: `Remove a subject's membership of the namespace.
  --subject S  as namespace members list shows it
Exit 4 when the subject is no member of the namespace (or it does not exist), 5 when it is the last
owner member of a top-level namespace.`,
      },
    },
    subgroups: { members: 'Members of a namespace: subjects (oidc:<sub>, apikey:<id>) and their roles' },
  },
  apikey: {
    summary: 'API keys (scoped to a namespace and role, stored hashed, revocable)',
    subcommands: {
      create: {
        synopsis: 'apikey create --name N --role R [--namespace NS] [--expires ISO-8601]',
        text: `Create a key. Details go to stdout, then the key ALONE on the last line:
  KEY=$(${PROGRAM} apikey create --name ci --role member | tail -n 1)
It is shown this once: only its hash is stored.
  --name N        unique among the namespace's unrevoked keys (letters, digits, ".", "_", "-")
  --role R        owner, admin, member or viewer
  --namespace NS  default: CLEVERAGENTS_DEFAULT_NAMESPACE
  --expires T     an ISO 8601 instant in the future (2030-01-31 or 2030-01-31T12:00:00Z); default: never`,
      },
      list: {
        synopsis: 'apikey list [--namespace NS] [--include-revoked] [--json]',
        text: `List a namespace's keys, newest first, without their secrets.
  --namespace NS     default: CLEVERAGENTS_DEFAULT_NAMESPACE
  --include-revoked  also the revoked keys
  --json             {"items": [{"id", "prefix", "name", "role", "status", ...}], "totalSize"}`,
      },
      revoke: {
        synopsis: 'apikey revoke <id> [--namespace NS]',
        text: `Revoke a key by its id (as apikey list shows it); it stops working at once.
Exit 4 when the namespace holds no such key, 5 when it is already revoked.
  --namespace NS  default: CLEVERAGENTS_DEFAULT_NAMESPACE`,
      },
    },
  },
} as const satisfies Record<string, Group>;

/**
 * A group of commands. A subcommand's key is its words after the group's name: `create`, or
 * `members set` for one of a subgroup (`subgroups` holds each subgroup's summary).
 */
interface Group {
  summary: string;
  subcommands: Record<string, { synopsis: string; text: string }>;
  subgroups?: Record<string, string>;
}

export type CommandGroup = keyof typeof COMMANDS;

export function isCommandGroup(value: string): value is CommandGroup {
  return Object.hasOwn(COMMANDS, value);
}

function groupOf(group: CommandGroup): Group {
  return COMMANDS[group];
}

/** Whether `word` names a subgroup of `group` (`namespace members`) rather than a command. */
export function isSubgroup(group: CommandGroup, word: string): boolean {
  const { subgroups } = groupOf(group);
  return subgroups !== undefined && Object.hasOwn(subgroups, word);
}

/** The words that may follow `group` (or `group subgroup`): its commands and subgroups. */
export function subcommandsOf(group: CommandGroup, subgroup?: string): string[] {
  const prefix = subgroup === undefined ? '' : `${subgroup} `;
  const words = Object.keys(groupOf(group).subcommands)
    .filter((key) => key.startsWith(prefix))
    .map((key) => key.slice(prefix.length).split(' ')[0]);
  return [...new Set(words)];
}

/** The longest prefix of `words` that names a group, a subgroup or a command: what help is about. */
export function commandPath(words: readonly string[]): string[] {
  const [group, ...rest] = words;
  if (group === undefined || !isCommandGroup(group)) return [];
  const { subcommands } = groupOf(group);
  for (let length = rest.length; length > 0; length--) {
    const key = rest.slice(0, length).join(' ');
    if (Object.hasOwn(subcommands, key) || (length === 1 && isSubgroup(group, key))) {
      return [group, ...rest.slice(0, length)];
    }
  }
  return [group];
}

function synopses(group?: CommandGroup, subgroup?: string): string {
  const groups = group ? [group] : (Object.keys(COMMANDS) as CommandGroup[]);
  const prefix = subgroup === undefined ? '' : `${subgroup} `;
  return groups
    .flatMap((g) =>
      Object.entries(groupOf(g).subcommands)
        .filter(([key]) => key.startsWith(prefix))
        .map(([, s]) => `  ${PROGRAM} ${s.synopsis}`),
    )
    .join('\n');
}

/** What `command` (a group, a subgroup or a command, as commandPath finds it) names in COMMANDS. */
function lookUp(command: readonly string[]) {
  const [group, ...rest] = commandPath(command);
  if (group === undefined || !isCommandGroup(group)) return undefined;
  const key = rest.join(' ');
  const entry = key === '' ? undefined : groupOf(group).subcommands[key];
  const subgroup = entry === undefined && key !== '' ? key : undefined;
  const summary = subgroup === undefined ? groupOf(group).summary : (groupOf(group).subgroups?.[subgroup] ?? '');
  const path = [group, ...rest].join(' ');
  return { group, subgroup, entry, summary, path };
}

/** `--help` of the program, of a group, of a subgroup or of one command. */
export function helpText(command: readonly string[] = []): string {
  const found = lookUp(command);
  if (found?.entry) {
    return `Usage: ${PROGRAM} ${found.entry.synopsis}\n\n${found.entry.text}\n\n${EXIT_CODES_HELP}\n`;
  }
  if (found) {
    const { group, subgroup, summary, path } = found;
    return `${summary}.\n\nUsage:\n${synopses(group, subgroup)}\n\nRun \`${PROGRAM} ${path} <command> --help\` for details.\n\n${EXIT_CODES_HELP}\n`;
  }
  return (
    `${PROGRAM}: the CleverAgents Server's admin CLI for operators.\n\n` +
    `Usage:\n${synopses()}\n  ${PROGRAM} [<command> [<subcommand>]] --help\n\n` +
    `${ENVIRONMENT_HELP}\n\n${EXIT_CODES_HELP}\n`
  );
}

/** The short usage printed on stderr after a usage error. */
export function usageText(command: readonly string[] = []): string {
  const found = lookUp(command);
  if (found?.entry) {
    return `Usage: ${PROGRAM} ${found.entry.synopsis}\nRun \`${PROGRAM} ${found.path} --help\` for details.`;
  }
  if (found) {
    return `Usage:\n${synopses(found.group, found.subgroup)}\nRun \`${PROGRAM} ${found.path} <command> --help\` for details.`;
  }
  return `Usage:\n${synopses()}\nRun \`${PROGRAM} --help\` for details.`;
}
