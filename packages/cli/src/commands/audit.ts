import type { Command } from 'commander';
import { ioFor, withClient, type GlobalOptions } from '../context.js';
import { instant, namespaceOf, pageParams, writePage, type PageFlags } from '../pages.js';

/** A record's details in one cell: `key=value` pairs (never a secret: the server keeps none there). */
function detailsCell(details: Record<string, unknown>): string {
  const text = Object.entries(details)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

export async function list(options: GlobalOptions, command: Command): Promise<number> {
  const opts = command.opts<
    PageFlags & { namespace?: string; actor?: string; action?: string; target?: string; since?: string; until?: string }
  >();
  const io = ioFor(options);
  const paging = pageParams(opts);
  return withClient(options, io, async (client) => {
    const namespace = await namespaceOf(client, opts.namespace);
    const page = await client.audit.list({
      namespace,
      ...paging,
      ...(opts.actor ? { actor: opts.actor } : {}),
      ...(opts.action ? { action: opts.action } : {}),
      ...(opts.target ? { target: opts.target } : {}),
      ...(opts.since ? { since: opts.since } : {}),
      ...(opts.until ? { until: opts.until } : {}),
    });
    return writePage(io, options, page, {
      empty: `No audit records in ${namespace}.`,
      header: ['AT', 'ACTOR', 'ACTION', 'TARGET', 'DETAILS'],
      row: (r) => [instant(r.at), r.actor, r.action, r.target, detailsCell(r.details)],
    });
  });
}
