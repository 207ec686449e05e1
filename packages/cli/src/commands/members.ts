import type { Command } from 'commander';
import type { Role } from '@cleveragents/contract';
import { ioFor, withClient, type GlobalOptions } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { instant, namespaceOf, pageParams, writePage, writeRecord, type PageFlags } from '../pages.js';

interface NamespaceFlag {
  namespace?: string;
}

export async function list(options: GlobalOptions, command: Command): Promise<number> {
  const opts = command.opts<PageFlags & NamespaceFlag>();
  const io = ioFor(options);
  const paging = pageParams(opts);
  return withClient(options, io, async (client) => {
    const namespace = await namespaceOf(client, opts.namespace);
    const page = await client.namespaces.membersList({ namespace, ...paging });
    return writePage(io, options, page, {
      empty: `No members of ${namespace}.`,
      header: ['SUBJECT', 'ROLE', 'SINCE', 'ADDED BY'],
      row: (m) => [m.subject, m.role, instant(m.createdAt), m.createdBy],
    });
  });
}

export async function set(options: GlobalOptions, command: Command, subject: string): Promise<number> {
  const opts = command.opts<NamespaceFlag & { role: Role; expectedRevision?: string }>();
  let expectedRevision: number | undefined;
  if (opts.expectedRevision !== undefined) {
    expectedRevision = Number(opts.expectedRevision);
    if (!Number.isInteger(expectedRevision) || expectedRevision < 0) {
      throw new CliError(`--expected-revision must be a whole number, not "${opts.expectedRevision}"`, EXIT.USAGE);
    }
  }
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const namespace = await namespaceOf(client, opts.namespace);
    const member = await client.namespaces.membersSet({
      namespace,
      subject,
      role: opts.role,
      ...(expectedRevision !== undefined ? { expectedRevision } : {}),
    });
    return writeRecord(
      io,
      options,
      member,
      (m) => `${m.subject} is ${m.role} of ${m.namespace} (revision ${m.revision})`,
    );
  });
}

export async function remove(options: GlobalOptions, command: Command, subject: string): Promise<number> {
  const opts = command.opts<NamespaceFlag>();
  const io = ioFor(options);
  return withClient(options, io, async (client) => {
    const namespace = await namespaceOf(client, opts.namespace);
    const removed = await client.namespaces.membersRemove({ namespace, subject });
    return writeRecord(io, options, removed, (r) => `Removed ${r.subject} from ${r.namespace}`);
  });
}
