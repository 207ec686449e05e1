import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ROLES, type Role } from '../common/principal.js';
import { UsageError } from './admin.exit-codes.js';
import { commandPath, isCommandGroup, isSubgroup, subcommandsOf, type CommandGroup } from './admin.usage.js';

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

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | undefined>;

const HELP: Options = { help: { type: 'boolean', short: 'h' } };
const JSON_OUTPUT: Options = { json: { type: 'boolean' } };
const NAMESPACE: Options = { namespace: { type: 'string' } };
const SUBJECT: Options = { subject: { type: 'string' } };

interface Spec {
  options: Options;
  positionals: readonly string[];
  build(values: Values, positionals: string[]): AdminCommand;
}

const SPECS: Record<CommandGroup, Record<string, Spec>> = {
  migrate: {
    show: {
      options: { check: { type: 'boolean' }, ...JSON_OUTPUT },
      positionals: [],
      build: (v) => ({ kind: 'migrate.show', check: v.check === true, json: v.json === true }),
    },
    run: { options: {}, positionals: [], build: () => ({ kind: 'migrate.run' }) },
    revert: { options: {}, positionals: [], build: () => ({ kind: 'migrate.revert' }) },
  },
  namespace: {
    create: {
      options: { 'display-name': { type: 'string' }, description: { type: 'string' } },
      positionals: ['<slug>'],
      build: (v, [namespace]) => ({
        kind: 'namespace.create',
        namespace,
        displayName: v['display-name'] as string | undefined,
        description: v.description as string | undefined,
      }),
    },
    list: {
      options: JSON_OUTPUT,
      positionals: [],
      build: (v) => ({ kind: 'namespace.list', json: v.json === true }),
    },
    'members list': {
      options: JSON_OUTPUT,
      positionals: ['<slug>'],
      build: (v, [namespace]) => ({ kind: 'namespace.members.list', namespace, json: v.json === true }),
    },
    'members set': {
      options: { ...SUBJECT, role: { type: 'string' } },
      positionals: ['<slug>'],
      build: (v, [namespace]) => ({
        kind: 'namespace.members.set',
        namespace,
        subject: required(v, 'subject'),
        role: roleOf(required(v, 'role')),
      }),
    },
    'members remove': {
      options: SUBJECT,
      positionals: ['<slug>'],
      build: (v, [namespace]) => ({ kind: 'namespace.members.remove', namespace, subject: required(v, 'subject') }),
    },
  },
  apikey: {
    create: {
      options: { name: { type: 'string' }, role: { type: 'string' }, expires: { type: 'string' }, ...NAMESPACE },
      positionals: [],
      build: (v) => ({
        kind: 'apikey.create',
        name: required(v, 'name'),
        role: roleOf(required(v, 'role')),
        namespace: v.namespace as string | undefined,
        expiresAt: v.expires === undefined ? undefined : instantOf(v.expires as string),
      }),
    },
    list: {
      options: { 'include-revoked': { type: 'boolean' }, ...NAMESPACE, ...JSON_OUTPUT },
      positionals: [],
      build: (v) => ({
        kind: 'apikey.list',
        namespace: v.namespace as string | undefined,
        includeRevoked: v['include-revoked'] === true,
        json: v.json === true,
      }),
    },
    revoke: {
      options: NAMESPACE,
      positionals: ['<id>'],
      build: (v, [id]) => ({ kind: 'apikey.revoke', id, namespace: v.namespace as string | undefined }),
    },
  },
};

/** Parses `argv` (without node and the script). Throws UsageError for anything it cannot take. */
export function parseAdminArgs(argv: readonly string[]): AdminCommand {
  const [group, ...afterGroup] = argv;
  if (group === undefined) throw new UsageError('missing command');
  if (group === '--help' || group === '-h' || group === 'help') {
    return { kind: 'help', command: group === 'help' ? commandPath(afterGroup) : [] };
  }
  if (!isCommandGroup(group)) throw new UsageError(`unknown command "${group}"`);
  // `namespace members set …`: a subgroup's word comes before the command's.
  const words = afterGroup[0] !== undefined && isSubgroup(group, afterGroup[0]) ? 2 : 1;
  const path = [group, ...afterGroup.slice(0, words - 1)];
  const sub = afterGroup[words - 1];
  const rest = afterGroup.slice(words);
  const name = path.join(' ');
  const choices = () => subcommandsOf(group, path[1]).join(', ');
  if (sub === '--help' || sub === '-h') return { kind: 'help', command: path };
  if (sub === undefined) throw new UsageError(`${name} needs a command: ${choices()}`, path);
  const key = [...path.slice(1), sub].join(' ');
  const spec = Object.hasOwn(SPECS[group], key) ? SPECS[group][key] : undefined;
  if (!spec) throw new UsageError(`unknown ${name} command "${sub}"; one of ${choices()}`, path);
  const command = [...path, sub];
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...spec.options, ...HELP },
      allowPositionals: true,
      strict: true,
    }) as { values: Values; positionals: string[] };
  } catch (error) {
    throw new UsageError(parseArgsProblem(error), command);
  }
  if (parsed.values.help === true) return { kind: 'help', command };
  const { positionals } = parsed;
  if (positionals.length < spec.positionals.length) {
    throw new UsageError(`missing ${spec.positionals.slice(positionals.length).join(' ')}`, command);
  }
  if (positionals.length > spec.positionals.length) {
    throw new UsageError(`unexpected argument "${positionals[spec.positionals.length]}"`, command);
  }
  try {
    return spec.build(parsed.values, positionals);
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(error.message, command);
    throw error;
  }
}

/** node:util's message, without its advice to use "--" (no command takes a value starting with "-"). */
function parseArgsProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('. To specify')[0].replace(/\.$/, '');
}

function required(values: Values, option: string): string {
  const value = values[option];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${option} is required`);
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
  const [year, month, day, hour = 0, minute = 0, second = 0] = (match?.slice(1) ?? []).map((f) =>
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
