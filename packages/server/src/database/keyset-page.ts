import {
  decodePageToken,
  invalidPageToken,
  pageOf,
  pageSizeOf,
  type Page,
  type PageRequest,
} from '../common/paging.js';

/**
 * The keyset-paging query builder of the list reads: only repositories call it. Page tokens and sizes
 * (src/common/paging.ts) are the API's; the SQL that reads a page is persistence.
 */

/** A condition with `$?` placeholders, and the values they stand for, in order. */
export type SqlCondition = readonly [sql: string, ...values: unknown[]];

/** What readKeysetPage reads: rows of `from` matching every `where`, after `after`, in `orderBy` order. */
export interface KeysetRead {
  columns: string;
  from: string;
  /** The list's filter: counted for `totalSize`, and applied to the page. */
  where: readonly (SqlCondition | undefined)[];
  /** The keyset position the page starts after (from the page token); absent for the first page. */
  after?: SqlCondition;
  orderBy: string;
  pageSize: number;
}

/**
 * One keyset page of a list: the filter's count (`totalSize`) and `pageSize + 1` rows after the cursor,
 * ready for pageOf. Conditions number their `$?` placeholders here, so lists never count parameters.
 */
export async function readKeysetPage<Row>(
  db: { query(sql: string, values: unknown[]): Promise<unknown> },
  read: KeysetRead,
): Promise<{ rows: Row[]; totalSize: number }> {
  const values: unknown[] = [];
  const numbered = (conditions: readonly (SqlCondition | undefined)[]): string =>
    conditions
      .filter((condition) => condition !== undefined)
      .map(([sql, ...given]) => {
        let next = 0;
        const text = sql.replace(/\$\?/g, () => {
          values.push(given[next++]);
          return `$${values.length}`;
        });
        return `(${text})`;
      })
      .join(' AND ') || 'TRUE';
  const filter = numbered(read.where);
  const counted = (await db.query(`SELECT count(*) AS total FROM ${read.from} WHERE ${filter}`, values)) as {
    total: string;
  }[];
  const where = read.after ? `${filter} AND ${numbered([read.after])}` : filter;
  values.push(read.pageSize + 1);
  const rows = (await db.query(
    `SELECT ${read.columns} FROM ${read.from} WHERE ${where} ORDER BY ${read.orderBy} LIMIT $${values.length}`,
    values,
  )) as Row[];
  return { rows, totalSize: Number(counted[0]?.total ?? 0) };
}

/**
 * A newest-first page of a table with a `created_seq` insertion order (sessions, plans): `where` is the
 * list's filter, the token carries the last row's `created_seq`.
 */
export async function readNewestFirstPage<Row extends { created_seq: string | number }, Item>(
  db: { query(sql: string, values: unknown[]): Promise<unknown> },
  read: {
    list: string;
    columns: string;
    from: string;
    where: readonly (SqlCondition | undefined)[];
    page: PageRequest;
    toItem: (row: Row) => Item;
  },
): Promise<Page<Item>> {
  const pageSize = pageSizeOf(read.page);
  const cursor = decodePageToken(read.list, read.page.pageToken, 1);
  if (cursor && !/^\d+$/.test(cursor[0])) throw invalidPageToken();
  const { rows, totalSize } = await readKeysetPage<Row>(db, {
    columns: read.columns,
    from: read.from,
    where: read.where,
    after: cursor ? ['created_seq < $?::bigint', cursor[0]] : undefined,
    orderBy: 'created_seq DESC',
    pageSize,
  });
  return pageOf(rows, pageSize, totalSize, read.list, (row) => [String(row.created_seq)], read.toItem);
}
