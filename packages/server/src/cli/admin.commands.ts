import { userInfo } from 'node:os';
import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { ApiKeyService, ApiKeyView } from '../auth/apikey/api-key.service.js';
import { EVERY_NAMESPACE } from '../common/principal.js';
import { operatorActor, type Acting } from '../common/actor.js';
import type { Page, PageRequest } from '../common/paging.js';
import type { AppConfig } from '../config/app.config.js';
import { AppLogger } from '../common/logging/app.logger.js';
import type { BootstrapService } from '../namespace/bootstrap.service.js';
import type { MemberView, NamespaceMembersService } from '../namespace/namespace-members.service.js';
import type { NamespaceService, NamespaceView } from '../namespace/namespace.service.js';
import { identityServices } from './identity-services.js';
import type { AdminCommand } from './admin.args.js';
import {
  describeDatabase,
  migrationStates,
  openAdminDatabase,
  requireCurrentSchema,
  revertLastMigration,
  runMigrations,
} from './admin.database.js';
import { ExitCode } from './admin.exit-codes.js';
import { printFields, printJson, printTable, type AdminOutput } from './admin.output.js';
import { PROGRAM } from './admin.usage.js';

type Command = Exclude<AdminCommand, { kind: 'help' }>;
type MigrateCommand = Extract<Command, { kind: `migrate.${string}` }>;
type DomainCommand = Exclude<Command, MigrateCommand>;

/** The subject the CLI acts as (audit log, created_by): `cli:<OS user>`, owner of every namespace. */
export function cliSubject(): string {
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry for this uid (some containers): fall back to the environment, then the uid.
  }
  user ||= process.env.USER || process.env.LOGNAME || `uid-${process.getuid?.() ?? 'unknown'}`;
  return `cli:${user.replace(/[\s\p{Cc}]/gu, '_')}`;
}

/**
 * The services a command uses: the domain's own (no key hashing, slug rule or audit record is
 * repeated here), built on the CLI's DataSource rather than through their Nest modules, which would
 * also run the server's start-up work (migrating the embedded database, minting a bootstrap key).
 */
class AdminServices {
  readonly namespaces: NamespaceService;
  readonly members: NamespaceMembersService;
  readonly apiKeys: ApiKeyService;
  readonly bootstrap: BootstrapService;
  readonly acting: Acting;

  constructor(
    readonly dataSource: DataSource,
    readonly config: AppConfig,
  ) {
    const services = identityServices(dataSource, config);
    this.namespaces = services.namespaces;
    this.members = services.members;
    this.apiKeys = services.apiKeys;
    this.bootstrap = services.bootstrap;
    this.acting = { actor: operatorActor(cliSubject()) };
  }

  /** The default namespace (and its parents), which the server creates at start, created now if missing. */
  async ensureDefaultNamespaceFor(namespace: string): Promise<void> {
    const fallback = this.config.defaultNamespace;
    if (namespace === fallback || namespace.startsWith(`${fallback}/`)) {
      await this.bootstrap.ensureDefaultNamespace(this.acting);
    }
  }
}

/** Runs a parsed command on the configured database; the caller maps a thrown error to its exit code. */
export async function executeCommand(command: Command, config: AppConfig, output: AdminOutput): Promise<ExitCode> {
  // The services' loggers (Nest's static Logger) would print to stdout, which belongs to the results.
  Logger.overrideLogger(AppLogger.create('warn', { write: (line: string) => output.err(line) }));
  const purpose = `${PROGRAM} ${command.kind.replaceAll('.', ' ')}`;
  const dataSource = await openAdminDatabase(config, purpose);
  try {
    if (isMigrateCommand(command)) return await migrate(command, dataSource, config, output);
    await requireCurrentSchema(dataSource);
    await administer(command, new AdminServices(dataSource, config), output);
    return ExitCode.Ok;
  } finally {
    // A failure to close must not hide the command's outcome; the embedded lock is released regardless.
    await dataSource.destroy().catch(() => undefined);
  }
}

function isMigrateCommand(command: Command): command is MigrateCommand {
  return command.kind.startsWith('migrate.');
}

async function migrate(
  command: MigrateCommand,
  dataSource: DataSource,
  config: AppConfig,
  output: AdminOutput,
): Promise<ExitCode> {
  const database = describeDatabase(config);
  switch (command.kind) {
    case 'migrate.show': {
      const states = await migrationStates(dataSource);
      const pending = states.filter((m) => !m.applied).length;
      if (command.json) {
        printJson(output, { database, migrations: states, pending });
      } else {
        output.out(`Migrations of the ${database}:\n`);
        for (const m of states) {
          output.out(`  [${m.applied ? 'X' : ' '}] ${m.name}${m.known ? '' : '  (not in this version)'}\n`);
        }
        output.out(
          pending === 0
            ? 'No migration is pending.\n'
            : `${pending} pending migration(s): run \`${PROGRAM} migrate run\`.\n`,
        );
      }
      return command.check && pending > 0 ? ExitCode.PendingMigrations : ExitCode.Ok;
    }
    case 'migrate.run': {
      const applied = await runMigrations(dataSource);
      if (applied.length === 0) output.out(`No migration is pending: the ${database} is up to date.\n`);
      else output.out(`Applied ${applied.length} migration(s) to the ${database}:\n${lines(applied)}`);
      return ExitCode.Ok;
    }
    case 'migrate.revert': {
      const reverted = await revertLastMigration(dataSource);
      output.out(`Reverted migration ${reverted} of the ${database}.\n`);
      return ExitCode.Ok;
    }
  }
}

/**
 * Who can reach a namespace the CLI just created, and how to let others in. The CLI acts as owner of
 * every namespace, so it does not become a member (NamespaceService.create); and a role holds in its
 * namespace and those below (docs/security.md, Namespaces and roles), so the default namespace's keys
 * (the bootstrap key among them) do not reach a new top-level namespace.
 */
function namespaceAccessNote(namespace: string, parent: string): string {
  const reach = parent
    ? `It has no member of its own: roles held in ${parent} (and above) hold here too.`
    : "It has no member yet, and roles held in other namespaces (the bootstrap key's included) do not reach it.";
  return [
    '',
    reach,
    'Grant an existing API key access, or create a key in it:',
    `  npm run admin -- namespace members set ${namespace} --subject apikey:<id> --role owner`,
    `  npm run admin -- apikey create --name <name> --role <role> --namespace ${namespace}`,
    '',
  ].join('\n');
}

async function administer(command: DomainCommand, services: AdminServices, output: AdminOutput): Promise<void> {
  const { namespaces, members, apiKeys, acting, config } = services;
  switch (command.kind) {
    case 'namespace.create': {
      const { namespace, displayName, description } = command;
      const parent = namespace.slice(0, Math.max(0, namespace.lastIndexOf('/')));
      if (parent) await services.ensureDefaultNamespaceFor(parent);
      const created = await namespaces.create({ namespace, displayName, description }, acting);
      output.out(`Created namespace ${created.namespace}:\n`);
      printFields(output, namespaceFields(created));
      output.out(namespaceAccessNote(created.namespace, parent));
      return;
    }
    case 'namespace.list': {
      const page = await allPages((request) => namespaces.listVisible([EVERY_NAMESPACE], request));
      if (command.json) return printJson(output, page);
      if (page.items.length === 0) return output.out('No namespace exists yet.\n');
      printTable(
        output,
        [
          { header: 'NAMESPACE', value: (n: NamespaceView) => n.namespace },
          { header: 'DISPLAY NAME', value: (n: NamespaceView) => n.displayName },
          { header: 'CREATED BY', value: (n: NamespaceView) => n.createdBy },
          { header: 'CREATED', value: (n: NamespaceView) => n.createdAt },
        ],
        page.items,
      );
      return;
    }
    case 'namespace.members.list': {
      const { namespace } = command;
      const page = await allPages((request) => members.listMembers(namespace, request));
      if (command.json) return printJson(output, page);
      if (page.items.length === 0) {
        return output.out(
          `Namespace ${namespace} has no member of its own (roles inherited from a parent namespace, ` +
            `held by its API keys or granted by OIDC_ROLE_MAP are not memberships).\n`,
        );
      }
      printTable(
        output,
        [
          { header: 'SUBJECT', value: (m: MemberView) => m.subject },
          { header: 'ROLE', value: (m: MemberView) => m.role },
          { header: 'ADDED BY', value: (m: MemberView) => m.createdBy },
          { header: 'ADDED', value: (m: MemberView) => m.createdAt },
          { header: 'UPDATED', value: (m: MemberView) => m.updatedAt },
        ],
        page.items,
      );
      return;
    }
    case 'namespace.members.set': {
      const { namespace, subject, role } = command;
      await services.ensureDefaultNamespaceFor(namespace);
      const member = await members.setMember({ namespace, subject, role }, acting);
      output.out(`${member.subject} is ${member.role} of namespace ${member.namespace}:\n`);
      printFields(output, [
        ['namespace', member.namespace],
        ['subject', member.subject],
        ['role', member.role],
        ['revision', String(member.revision)],
        ['added by', member.createdBy],
        ['added', member.createdAt],
        ['updated', member.updatedAt],
      ]);
      return;
    }
    case 'namespace.members.remove': {
      const removed = await members.removeMember({ namespace: command.namespace, subject: command.subject }, acting);
      output.out(`Removed ${removed.subject} from namespace ${removed.namespace}.\n`);
      return;
    }
    case 'apikey.create': {
      const namespace = command.namespace ?? config.defaultNamespace;
      await services.ensureDefaultNamespaceFor(namespace);
      const created = await apiKeys.create(
        { namespace, name: command.name, role: command.role, expiresAt: command.expiresAt },
        acting,
      );
      output.out(`Created API key ${created.id} in namespace ${created.namespace}:\n`);
      printFields(output, [
        ['id', created.id],
        ['name', created.name],
        ['namespace', created.namespace],
        ['role', created.role],
        ['created', created.createdAt],
        ['expires', created.expiresAt ?? 'never'],
        ['send it as', 'X-API-Key: <key>  (or Authorization: Bearer <key> where the bearer scheme is on)'],
      ]);
      output.err(
        `${PROGRAM}: the key is on the last line of stdout and is shown this once: only its hash is stored. ` +
          `Keep it in a secret store now.\n`,
      );
      output.out(`${created.key}\n`);
      return;
    }
    case 'apikey.list': {
      const namespace = command.namespace ?? config.defaultNamespace;
      const page = await allPages((request) =>
        apiKeys.list({ namespace, includeRevoked: command.includeRevoked, ...request }),
      );
      if (command.json) return printJson(output, page);
      if (page.items.length === 0) {
        return output.out(`No ${command.includeRevoked ? '' : 'unrevoked '}API key in namespace ${namespace}.\n`);
      }
      printTable(
        output,
        [
          { header: 'ID', value: (k: ApiKeyView) => k.id },
          { header: 'NAME', value: (k: ApiKeyView) => k.name },
          { header: 'ROLE', value: (k: ApiKeyView) => k.role },
          { header: 'STATUS', value: (k: ApiKeyView) => k.status },
          { header: 'EXPIRES', value: (k: ApiKeyView) => k.expiresAt ?? 'never' },
          { header: 'LAST USED', value: (k: ApiKeyView) => k.lastUsedAt ?? 'never' },
          { header: 'CREATED BY', value: (k: ApiKeyView) => k.createdBy },
          { header: 'CREATED', value: (k: ApiKeyView) => k.createdAt },
        ],
        page.items,
      );
      return;
    }
    case 'apikey.revoke': {
      const namespace = command.namespace ?? config.defaultNamespace;
      const revoked = await apiKeys.revoke({ namespace, id: command.id }, acting);
      output.out(
        `Revoked API key ${revoked.id} (${revoked.name}, ${revoked.role}) in namespace ${revoked.namespace} ` +
          `at ${revoked.revokedAt ?? 'now'}.\n`,
      );
      return;
    }
  }
}

function namespaceFields(n: NamespaceView): [string, string][] {
  return [
    ['namespace', n.namespace],
    ['parent', n.parent ?? '(top level)'],
    ['display name', n.displayName],
    ['description', n.description],
    ['created by', n.createdBy],
    ['created', n.createdAt],
  ];
}

/** Every page of a list, as one: the CLI prints whole lists. */
async function allPages<T>(
  list: (request: PageRequest) => Promise<Page<T>>,
): Promise<{ items: T[]; totalSize: number }> {
  const items: T[] = [];
  let pageToken = '';
  let totalSize = 0;
  do {
    const page = await list({ pageSize: 100, pageToken });
    items.push(...page.items);
    totalSize = page.totalSize;
    pageToken = page.nextPageToken;
  } while (pageToken !== '');
  return { items, totalSize };
}

function lines(names: readonly string[]): string {
  return names.map((name) => `  ${name}\n`).join('');
}
