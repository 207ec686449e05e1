import type { Command } from 'commander';
import type { NamespaceUsage, NamespaceView, UsageCounts } from '@cleveragents/contract';
import { ioFor, withClient, type GlobalOptions } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { instant, namespaceOf, pageParams, writePage, writeRecord, type PageFlags } from '../pages.js';
import { span } from '../render.js';
import { safeLine } from '../safe-text.js';
import { fields, table } from '../table.js';

interface DescribeFlags {
  displayName?: string;
  description?: string;
}

function revisionOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    throw new CliError(`--expected-revision must be a whole number, not "${value}"`, EXIT.USAGE);
  }
  return n;
}

function describeNamespace(ns: NamespaceView): string {
  return fields([
    ['namespace', ns.namespace],
    ['parent', ns.parent ?? '—'],
    ['display name', ns.displayName],
    ['description', ns.description || '—'],
    ['revision', String(ns.revision)],
    ['created', `${instant(ns.createdAt)} by ${ns.createdBy}`],
    ['updated', instant(ns.updatedAt)],
  ]);
}

export async function list(options: GlobalOptions, command: Command): Promise<number> {
  const io = ioFor(options);
  const paging = pageParams(command.opts<PageFlags>());
  return withClient(options, io, async (client) => {
    const page = await client.namespaces.list(paging);
    return writePage(io, options, page, {
      empty: 'No namespaces.',
      header: ['NAMESPACE', 'DISPLAY NAME', 'REVISION', 'CREATED BY', 'DESCRIPTION'],
      row: (n) => [n.namespace, n.displayName, String(n.revision), n.createdBy, n.description.slice(0, 60)],
    });
  });
}

export async function get(options: GlobalOptions, _command: Command, namespace: string): Promise<number> {
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    return writeRecord(io, options, await client.namespaces.get({ namespace }), describeNamespace);
  });
}

export async function create(options: GlobalOptions, command: Command, namespace: string): Promise<number> {
  const opts = command.opts<DescribeFlags>();
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const ns = await client.namespaces.create({
      namespace,
      ...(opts.displayName !== undefined ? { displayName: opts.displayName } : {}),
      ...(opts.description !== undefined ? { description: opts.description } : {}),
    });
    return writeRecord(io, options, ns, (safe) => `Created namespace ${safe.namespace}\n${describeNamespace(safe)}`);
  });
}

export async function update(options: GlobalOptions, command: Command, namespace: string): Promise<number> {
  const opts = command.opts<DescribeFlags & { expectedRevision?: string }>();
  if (opts.displayName === undefined && opts.description === undefined) {
    throw new CliError('Nothing to change', EXIT.USAGE, 'pass --display-name and/or --description');
  }
  const expectedRevision = revisionOf(opts.expectedRevision);
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const ns = await client.namespaces.update({
      namespace,
      ...(opts.displayName !== undefined ? { displayName: opts.displayName } : {}),
      ...(opts.description !== undefined ? { description: opts.description } : {}),
      ...(expectedRevision !== undefined ? { expectedRevision } : {}),
    });
    return writeRecord(io, options, ns, (safe) => `Updated namespace ${safe.namespace} (revision ${safe.revision})`);
  });
}

/** Deletes an empty namespace: asked first on a terminal, only with --yes otherwise. */
export async function remove(options: GlobalOptions, command: Command, namespace: string): Promise<number> {
  const opts = command.opts<{ yes?: boolean; expectedRevision?: string }>();
  const expectedRevision = revisionOf(opts.expectedRevision);
  const io = ioFor(options);
  const canAsk = process.stdin.isTTY === true && io.err.isTTY === true;
  if (!opts.yes && !canAsk) {
    throw new CliError(
      `Not deleting namespace ${namespace} without confirmation`,
      EXIT.USAGE,
      'pass --yes to delete it when not on a terminal',
    );
  }
  return withClient(options, io, async (client) => {
    if (!opts.yes) {
      // Read it first, so that a namespace that does not exist (or is not yours) fails before the question.
      const ns = await client.namespaces.get({ namespace });
      const { askYesNo } = await import('../prompts.js');
      const named = ns.displayName && ns.displayName !== namespace ? ` (${safeLine(ns.displayName)})` : '';
      if (!(await askYesNo(`Delete namespace ${safeLine(namespace)}${named}? This cannot be undone.`, io))) {
        if (options.json) io.out.write(`${JSON.stringify({ namespace, deleted: false })}\n`);
        else io.err.write(`Namespace ${safeLine(namespace)} was not deleted.\n`);
        return EXIT.CANCELED;
      }
    }
    const deleted = await client.namespaces.delete({
      namespace,
      ...(expectedRevision !== undefined ? { expectedRevision } : {}),
    });
    return writeRecord(io, options, deleted, (safe) => `Deleted namespace ${safe.namespace}`);
  });
}

/** The rows of one breakdown of a usage report: its key, then what it used. */
function usageRows(groups: (UsageCounts & { key: string })[]): string[][] {
  return groups.map((g) => [
    g.key,
    String(g.sessions),
    String(g.tasks),
    String(g.tokens),
    String(g.toolCalls),
    span(g.wallTimeMs),
  ]);
}

function describeUsage(report: NamespaceUsage): string {
  const edges = [
    report.since ? `from ${instant(report.since)}` : '',
    report.until ? `before ${instant(report.until)}` : '',
  ].filter(Boolean);
  const window = edges.length > 0 ? `sessions created ${edges.join(' ')}` : 'all sessions';
  const { totals } = report;
  const summary = fields([
    ['namespace', report.includeChildren ? `${report.namespace} and those below it` : report.namespace],
    ['window', window],
    ['sessions', `${totals.sessions} (${totals.tasks} tasks)`],
    ['tokens', String(totals.tokens)],
    ['tool calls', String(totals.toolCalls)],
    ['wall time', span(totals.wallTimeMs)],
  ]);
  const columns = ['SESSIONS', 'TASKS', 'TOKENS', 'TOOL CALLS', 'WALL TIME'];
  const breakdowns: [string, (UsageCounts & { key: string })[]][] = [
    ['ACTOR', report.byActor.map(({ actor, ...counts }) => ({ key: actor, ...counts }))],
    ['OWNER', report.byOwner.map(({ owner, ...counts }) => ({ key: owner, ...counts }))],
  ];
  if (report.includeChildren) {
    breakdowns.push([
      'NAMESPACE',
      report.byNamespace.map(({ namespace, ...counts }) => ({ key: namespace, ...counts })),
    ]);
  }
  const tables = breakdowns
    .filter(([, groups]) => groups.length > 0)
    .map(([key, groups]) => table([key, ...columns], usageRows(groups)));
  return [summary, ...tables].join('\n\n');
}

/** What a namespace's sessions used (admin): totals, then by actor and by owner (and namespace, with --children). */
export async function usage(options: GlobalOptions, command: Command, namespace: string | undefined): Promise<number> {
  const opts = command.opts<{ since?: string; until?: string; children?: boolean }>();
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const report = await client.namespaces.usage({
      namespace: await namespaceOf(client, namespace),
      ...(opts.since ? { since: opts.since } : {}),
      ...(opts.until ? { until: opts.until } : {}),
      ...(opts.children ? { includeChildren: true } : {}),
    });
    return writeRecord(io, options, report, describeUsage);
  });
}
