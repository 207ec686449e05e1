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
    },
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
} as const satisfies Record<
  string,
  { summary: string; subcommands: Record<string, { synopsis: string; text: string }> }
>;

export type CommandGroup = keyof typeof COMMANDS;

export function isCommandGroup(value: string): value is CommandGroup {
  return Object.hasOwn(COMMANDS, value);
}

export function subcommandsOf(group: CommandGroup): string[] {
  return Object.keys(COMMANDS[group].subcommands);
}

function synopses(group?: CommandGroup): string {
  const groups = group ? [group] : (Object.keys(COMMANDS) as CommandGroup[]);
  return groups
    .flatMap((g) => Object.values(COMMANDS[g].subcommands).map((s) => `  ${PROGRAM} ${s.synopsis}`))
    .join('\n');
}

/** `--help` of the program, of a group or of one subcommand. */
export function helpText(command: readonly string[] = []): string {
  const [group, sub] = command;
  if (group !== undefined && isCommandGroup(group)) {
    const subcommands: Record<string, { synopsis: string; text: string }> = COMMANDS[group].subcommands;
    const entry = sub === undefined ? undefined : subcommands[sub];
    if (entry) {
      return `Usage: ${PROGRAM} ${entry.synopsis}\n\n${entry.text}\n\n${EXIT_CODES_HELP}\n`;
    }
    return `${COMMANDS[group].summary}.\n\nUsage:\n${synopses(group)}\n\nRun \`${PROGRAM} ${group} <command> --help\` for details.\n\n${EXIT_CODES_HELP}\n`;
  }
  return (
    `${PROGRAM}: the CleverAgents Server's admin CLI for operators.\n\n` +
    `Usage:\n${synopses()}\n  ${PROGRAM} [<command> [<subcommand>]] --help\n\n` +
    `${ENVIRONMENT_HELP}\n\n${EXIT_CODES_HELP}\n`
  );
}

/** The short usage printed on stderr after a usage error. */
export function usageText(command: readonly string[] = []): string {
  const [group, sub] = command;
  if (group !== undefined && isCommandGroup(group)) {
    const subcommands: Record<string, { synopsis: string; text: string }> = COMMANDS[group].subcommands;
    const entry = sub === undefined ? undefined : subcommands[sub];
    if (entry) return `Usage: ${PROGRAM} ${entry.synopsis}\nRun \`${PROGRAM} ${group} ${sub} --help\` for details.`;
    return `Usage:\n${synopses(group)}\nRun \`${PROGRAM} ${group} <command> --help\` for details.`;
  }
  return `Usage:\n${synopses()}\nRun \`${PROGRAM} --help\` for details.`;
}
