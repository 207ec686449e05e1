import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * Where things live: SQL only in repositories (and in the database layer's own plumbing), and no source
 * file too long to read whole. What the re-cut has not reached yet is listed below; a listed file that
 * no longer breaks the rule fails the test too, so each list only shrinks.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The sources of every package (packages/<name>/src). */
function packageSources(): string[] {
  return readdirSync(join(ROOT, 'packages')).flatMap((name) => sources(join(ROOT, 'packages', name, 'src')));
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.tsx?$/.test(entry.name) && !/\.(spec|e2e-spec)\.tsx?$/.test(entry.name) ? [relative(ROOT, path)] : [];
  });
}

/** A query sent (`.query(`), built (`createQueryBuilder`) or written out as an SQL string. */
const SQL =
  /\.query\s*[<(]|createQueryBuilder\s*\(|getRepository\s*\(|[`'"]\s*(SELECT|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM)\b/;

/** Where SQL may live: a repository, and the database layer itself (connection, health, LISTEN/NOTIFY, migrations). */
function mayHoldSql(file: string): boolean {
  return file.endsWith('.repository.ts') || file.startsWith('packages/server/src/database/');
}

/** Files that still hold SQL outside a repository. */
const SQL_NOT_YET_IN_REPOSITORIES: string[] = [];

const MAX_LINES = 600;
/** Files over MAX_LINES, still to be split along their seams. */
const TOO_LONG: string[] = [];

describe('structure of the packages', () => {
  const files = packageSources();

  it('SQL lives in repositories and in the database layer only', () => {
    const holding = files.filter((file) => !mayHoldSql(file) && SQL.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(holding.sort()).toEqual([...SQL_NOT_YET_IN_REPOSITORIES].sort());
  });

  it(`no source file is over ${MAX_LINES} lines`, () => {
    const long = files.filter((file) => readFileSync(join(ROOT, file), 'utf8').split('\n').length > MAX_LINES);
    expect(long.sort()).toEqual([...TOO_LONG].sort());
  });

  describe('the SQL rule bites', () => {
    it.each([
      ["await this.dataSource.query('SELECT 1')", true],
      ['await manager.query<Row[]>(sql, params)', true],
      ["repo.createQueryBuilder('t').where('t.id = :id', { id })", true],
      ['const sql = `\n  SELECT id FROM task WHERE id = $1`', true],
      ["'INSERT INTO audit_log (id) VALUES ($1)'", true],
      ["'UPDATE plan SET state = $1'", true],
      ["'DELETE FROM session WHERE id = $1'", true],
      ['dataSource.getRepository(TaskEntity)', true],
      ["const label = 'Select a namespace';", false],
      ['update(state: PlanState): void {', false],
      ['query: string; // a search text', false],
    ])('%s → %s', (text, sql) => {
      expect(SQL.test(text)).toBe(sql);
    });

    it('a repository and the database layer may hold SQL; a service may not', () => {
      expect(mayHoldSql('packages/server/src/plan-store/plan.repository.ts')).toBe(true);
      expect(mayHoldSql('packages/server/src/database/database.health.ts')).toBe(true);
      expect(mayHoldSql('packages/server/src/plan-store/plan.service.ts')).toBe(false);
    });
  });
});
