import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type Page } from '@cleveragents/contract';
import { invalidPageToken, pageSizeOutOfRange } from './common.errors.js';

export type { Page };

/** docs/protocol.md §6: lists page with `{pageSize 1–100 (default 50), pageToken}` (the contract's limits). */
export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE };

/** What a service takes: the same fields, for callers that are not the RPC layer (the admin CLI). */
export interface PageRequest {
  pageSize?: number | null;
  pageToken?: string | null;
}

/** The page size asked for, defaulted and checked (the DTO checks it too; services are also called directly). */
export function pageSizeOf(request: PageRequest): number {
  const size = request.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
    throw pageSizeOutOfRange(MAX_PAGE_SIZE);
  }
  return size;
}

/**
 * An opaque keyset cursor: base64url of JSON `[list, ...position]`. `list` names the list that issued
 * it, so a token is refused by any other list rather than misread.
 */
export function encodePageToken(list: string, position: readonly string[]): string {
  return Buffer.from(JSON.stringify([list, ...position]), 'utf8').toString('base64url');
}

/**
 * The position a token of `list` carries (`arity` strings), or undefined for the first page (no token
 * or an empty one). Anything else is -32602 naming `pageToken`.
 */
export function decodePageToken(list: string, token: string | null | undefined, arity: number): string[] | undefined {
  if (token === undefined || token === null || token === '') return undefined;
  let decoded: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(token)) throw new Error('not base64url');
    decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const valid =
    Array.isArray(decoded) &&
    decoded.length === arity + 1 &&
    decoded[0] === list &&
    decoded.every((part) => typeof part === 'string');
  if (!valid) throw invalidPageToken();
  return (decoded as string[]).slice(1);
}

/** -32602 naming `pageToken`, also for a token that decodes but whose position a list cannot use. */
export { invalidPageToken };

/**
 * A page from rows read with `LIMIT pageSize + 1`: the extra row only says that more follow, and the
 * last row shown gives the next token.
 */
export function pageOf<Row, Item>(
  rows: readonly Row[],
  pageSize: number,
  totalSize: number,
  list: string,
  positionOf: (row: Row) => string[],
  toItem: (row: Row) => Item,
): Page<Item> {
  const hasMore = rows.length > pageSize;
  const shown = hasMore ? rows.slice(0, pageSize) : rows;
  const last = shown.at(-1);
  return {
    items: shown.map(toItem),
    nextPageToken: hasMore && last !== undefined ? encodePageToken(list, positionOf(last)) : '',
    totalSize,
  };
}
