import type { Command } from 'commander';
import type { Role } from '@cleveragents/contract';
import { cliCommand, operand, ioFor, withClient, type GlobalOptions } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { instant, pageParams, writePage, writeSecretOnce, type PageFlags } from '../pages.js';
import { safeData } from '../safe-text.js';

interface NamespaceFlag {
  namespace?: string;
}

/** A date (midnight UTC) or a date and time, with an optional zone (none: local time), as the admin CLI takes. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

function expiresAtOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const at = ISO_INSTANT.test(value.trim()) ? new Date(value.trim()) : undefined;
  if (!at || Number.isNaN(at.getTime())) {
    throw new CliError(
      `--expires must be an ISO 8601 date or instant, such as 2030-01-31T12:00:00Z (got "${value}")`,
      EXIT.USAGE,
    );
  }
  return at.toISOString();
}

/**
 * Mints a key. The secret goes to stdout only, alone on the last line (`| tail -n 1` takes it), or as
 * the `key` field with --json; stderr says it is shown this once.
 */
export async function create(options: GlobalOptions, command: Command): Promise<number> {
  const opts = command.opts<NamespaceFlag & { name: string; role: Role; expires?: string }>();
  const expiresAt = expiresAtOf(opts.expires);
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const raw = await client.apiKeys.create({
      name: opts.name,
      role: opts.role,
      ...(opts.namespace ? { namespace: opts.namespace } : {}),
      ...(expiresAt ? { expiresAt } : {}),
    });
    return writeSecretOnce(io, options, raw, (created) => ({
      fields: [
        ['id', created.id],
        ['name', created.name],
        ['namespace', created.namespace],
        ['role', created.role],
        ['created', instant(created.createdAt)],
        ['expires', created.expiresAt ? instant(created.expiresAt) : 'never'],
      ],
      note: `${io.errStyle.yellow('The key is shown this once (only its hash is kept): store it now.')} ${io.errStyle.dim(`Use it with --api-key or CLEVERAGENTS_API_KEY; revoke it with ${cliCommand(['keys', 'revoke', operand(created.id)], options)}`)}`,
      secret: created.key,
    }));
  });
}

export async function list(options: GlobalOptions, command: Command): Promise<number> {
  const opts = command.opts<PageFlags & NamespaceFlag & { includeRevoked?: boolean }>();
  const io = ioFor(options);
  const paging = pageParams(opts);
  return withClient(options, io, async (client) => {
    const page = await client.apiKeys.list({
      ...paging,
      ...(opts.namespace ? { namespace: opts.namespace } : {}),
      ...(opts.includeRevoked ? { includeRevoked: true } : {}),
    });
    const style = io.outStyle;
    return writePage(io, options, page, {
      empty: 'No API keys.',
      header: ['ID', 'NAME', 'ROLE', 'STATUS', 'NAMESPACE', 'CREATED', 'EXPIRES', 'LAST USED'],
      row: (k) => [
        k.id,
        k.name,
        k.role,
        k.status === 'active' ? style.green(k.status) : style.dim(k.status),
        k.namespace,
        instant(k.createdAt),
        k.expiresAt ? instant(k.expiresAt) : 'never',
        instant(k.lastUsedAt),
      ],
    });
  });
}

export async function revoke(options: GlobalOptions, command: Command, id: string): Promise<number> {
  const opts = command.opts<NamespaceFlag>();
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const revoked = await client.apiKeys.revoke({ id, ...(opts.namespace ? { namespace: opts.namespace } : {}) });
    const key = safeData(revoked);
    io.out.write(
      options.json
        ? `${JSON.stringify(revoked)}\n`
        : `Revoked key ${key.id} (${key.name}, ${key.role} of ${key.namespace}); it no longer authenticates\n`,
    );
    return EXIT.OK;
  });
}
