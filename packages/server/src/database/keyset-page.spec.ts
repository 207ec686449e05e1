import { describe, expect, it } from '@jest/globals';
import { readKeysetPage } from './keyset-page.js';

describe('readKeysetPage', () => {
  it('numbers the placeholders of the filter and the cursor in order, counting the filter alone', async () => {
    const sent: [string, unknown[]][] = [];
    const db = {
      query: (sql: string, values: unknown[]) => {
        sent.push([sql, [...values]]);
        return Promise.resolve(sql.startsWith('SELECT count') ? [{ total: '7' }] : [{ id: 'a' }]);
      },
    };
    const page = await readKeysetPage<{ id: string }>(db, {
      columns: 'id',
      from: 't',
      where: [['ns = $?', 'acme'], undefined, ['kind = $? OR kind = $?', 'x', 'y']],
      after: ['(kind, name) > ($?, $?)', 'k', 'n'],
      orderBy: 'kind, name',
      pageSize: 2,
    });
    expect(page).toEqual({ rows: [{ id: 'a' }], totalSize: 7 });
    expect(sent).toEqual([
      ['SELECT count(*) AS total FROM t WHERE (ns = $1) AND (kind = $2 OR kind = $3)', ['acme', 'x', 'y']],
      [
        'SELECT id FROM t WHERE (ns = $1) AND (kind = $2 OR kind = $3) AND ((kind, name) > ($4, $5)) ORDER BY kind, name LIMIT $6',
        ['acme', 'x', 'y', 'k', 'n', 3],
      ],
    ]);
  });
});
