import type { Page } from '@cleveragents/contract';
import type { CleverAgentsClient } from '@cleveragents/client/node';
import type { GlobalOptions, Io } from './context.js';
import { CliError, EXIT } from './exit-codes.js';
import { safeData, safeLine, safeText } from './safe-text.js';
import { fields, table } from './table.js';

/** The paging flags of the management lists: `--limit` (1–100, the server's bound) and `--page-token`. */
export interface PageFlags {
  limit: string;
  pageToken?: string;
}

export function pageParams(flags: PageFlags): { pageSize: number; pageToken?: string } {
  const pageSize = Number(flags.limit);
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) {
    throw new CliError(`--limit must be a whole number from 1 to 100, not "${flags.limit}"`, EXIT.USAGE);
  }
  return { pageSize, ...(flags.pageToken ? { pageToken: flags.pageToken } : {}) };
}

/**
 * A page as `--json` (the server's page: items, nextPageToken, totalSize) or as a table on stdout, with
 * the way to the next page on stderr so that the table stays clean for `grep` and `cut`. `row` gets
 * each item made safe (`safeData`: no control sequences, one line per value).
 */
export function writePage<T>(
  io: Io,
  options: GlobalOptions,
  page: Page<T>,
  what: { empty: string; header: string[]; row: (item: T) => string[] },
): number {
  if (options.json) {
    io.out.write(`${JSON.stringify(page)}\n`);
    return EXIT.OK;
  }
  if (page.items.length === 0) {
    // It may name the server's namespace.
    io.out.write(`${safeText(what.empty)}\n`);
    return EXIT.OK;
  }
  io.out.write(`${table(what.header, safeData(page.items).map(what.row))}\n`);
  if (page.nextPageToken) {
    const next = safeLine(page.nextPageToken);
    io.err.write(
      `${io.errStyle.dim(`${page.items.length} of ${page.totalSize} shown; the next page: --page-token ${next}`)}\n`,
    );
  }
  return EXIT.OK;
}

/**
 * One record as `--json` (the server's view, unchanged) or as the text a person reads, on stdout:
 * `text` gets the record made safe (`safeData`).
 */
export function writeRecord<T extends object>(
  io: Io,
  options: GlobalOptions,
  record: T,
  text: (safe: T) => string,
): number {
  io.out.write(options.json ? `${JSON.stringify(record)}\n` : `${text(safeData(record))}\n`);
  return EXIT.OK;
}

/** The namespace a command acts in: `--namespace`, else the caller's default namespace (auth/whoami). */
export async function namespaceOf(client: CleverAgentsClient, given: string | undefined): Promise<string> {
  return given ?? (await client.whoami()).defaultNamespace;
}

/** An instant as the tables show it: ISO 8601 to the second, in UTC. */
export function instant(at: string | null | undefined): string {
  return at ? at.replace(/\.\d+Z$/, 'Z') : '—';
}

/**
 * A record made with a secret shown this once (a key, a webhook's signing secret): with --json the record as
 * the server gave it; otherwise its `fields` (made safe), the `note` on stderr, and the secret alone on the last
 * line of stdout (`| tail -n 1` takes it).
 */
export function writeSecretOnce<T extends object>(
  io: Io,
  options: GlobalOptions,
  record: T,
  shown: (safe: T) => { fields: [string, string][]; note: string; secret: string },
): number {
  if (options.json) {
    io.out.write(`${JSON.stringify(record)}\n`);
    return EXIT.OK;
  }
  const { fields: entries, note, secret } = shown(safeData(record));
  io.out.write(`${fields(entries)}\n\n`);
  io.err.write(`${note}\n`);
  io.out.write(`${io.outStyle.bold(secret)}\n`);
  return EXIT.OK;
}
